"""The figures the README quotes, kept true by a command.

Every measured figure of README.md sits in a span

    <!-- figure: NAME -->TEXT<!-- /figure -->

and NAME says where TEXT comes from:

- a page of docs/ (``docs/speed.md``): TEXT must appear in that page, which
  holds the measurement and the command that made it (checked, not written);
- ``variables.counts``, ``cli.commands``, ``cli.examples``: computed now from
  the variable table and the command line (fmu_wheelset/fmu/variables.py,
  fmu_wheelset/cli/main.py);
- ``validation.rows``, ``.pass``, ``.fail``, ``.not_compared``, ``.info``,
  ``.fail_list``, ``.run``: the validation run that docs/validation.md holds
  (its generated blocks, written from a run by ``--validation``);
  ``row: CASE | QUANTITY``: the value of the first row of that run whose case
  and quantity start so (``published: CASE | QUANTITY``: its published cell);
- ``setup.NAME``: docs/figures.json, written by benchmarks/time_setup.py (the
  fresh clone's make demo, with its CPU time and the machine's load).

    python docs/figures.py                      # rewrite the README's spans
    python docs/figures.py --check              # exit 1 when one is stale (tests/test_docs.py)
    python docs/figures.py --validation demo-output   # after `make demo`: docs/validation.md
                                                #   from demo-output/validation_table.md, then the README
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
VALIDATION = ROOT / "docs" / "validation.md"
STORED = ROOT / "docs" / "figures.json"
SPAN = re.compile(r"<!-- figure: (?P<name>[^>]*?) -->(?P<text>.*?)<!-- /figure -->", re.S)
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) [^>]*-->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)


def split_cells(line: str) -> list:
    """The cells of a Markdown table line (an escaped \\| stays in its cell)."""
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def validation_run(page: Path = VALIDATION) -> dict:
    """The run docs/validation.md holds: its summary line, FAIL lines, provenance
    and the table's rows (dicts by the table's header)."""
    blocks = {m.group("name"): m.group("body") for m in BLOCK.finditer(page.read_text(encoding="utf-8"))}
    if "validation-run" not in blocks:
        raise SystemExit(f"{page}: no generated block 'validation-run'")
    text = blocks["validation-run"]
    rows, header, info = [], None, False
    for line in text.splitlines():
        if line.startswith("Measured for information"):
            info = True
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = split_cells(line)
        if cells[0] == "case":
            header = cells
            continue
        row = dict(zip(header, cells))
        row["info"] = info
        rows.append(row)
    counts = re.search(r"(\d+) pass, (\d+) FAIL, (\d+) not compared \(of (\d+) rows\); (\d+) more",
                       text)
    if not counts:
        raise SystemExit(f"{page}: the generated block has no counts line")
    provenance = dict(re.findall(r"^- (\w[\w ]*): (.*)$", text, re.M))
    return {"pass": counts.group(1), "fail": counts.group(2), "not_compared": counts.group(3),
            "rows": counts.group(4), "info": counts.group(5), "table": rows,
            "fails": re.findall(r"^- FAIL: (.*)$", text, re.M), "provenance": provenance}


def row_value(run: dict, key: str, column: str = "this FMU / core") -> str:
    case, _, quantity = (part.strip() for part in key.partition("|"))
    for row in run["table"]:
        if row["case"].startswith(case) and row["quantity"].startswith(quantity):
            return row[column]
    raise SystemExit(f"no validation row of case {case!r} and quantity {quantity!r} in {VALIDATION}")


def fail_list(run: dict) -> str:
    """The FAIL rows in one sentence each: case, what against what."""
    parts = []
    for row in run["table"]:
        if row["result"] == "FAIL":
            unit = re.search(r"\[(.*)\]$", row["quantity"])
            quantity = re.sub(r"\s*\[.*\]$", "", row["quantity"])
            value = row["this FMU / core"] or "none"
            shown_unit = unit.group(1) if unit and unit.group(1) not in ("1", "-") else ""
            parts.append(f"{row['case']}: {quantity}, {value}"
                         f"{' ' + shown_unit if shown_unit and value != 'none' else ''} "
                         f"against {row['published']}")
    return "; ".join(parts) if parts else "none"


def generated(name: str, cache: dict) -> str:
    """The text of the span NAME (module docstring), or None for a page check."""
    if name.endswith(".md"):
        return None
    if name == "variables.counts":
        sys.path.insert(0, str(ROOT))
        from fmu_wheelset.fmu.variables import INPUTS, OUTPUTS, PARAMETERS
        return f"{len(PARAMETERS)} parameters, {len(INPUTS)} inputs, {len(OUTPUTS)} outputs"
    if name.startswith("cli."):
        sys.path.insert(0, str(ROOT))
        from fmu_wheelset.cli.main import build_parser
        parser = build_parser()
        action = next(a for a in parser._actions if isinstance(getattr(a, "choices", None), dict))
        names = sorted(action.choices)
        if name == "cli.commands":
            return ", ".join(f"`{n}`" for n in names)
        if name == "cli.examples":
            sys.path.insert(0, str(ROOT / "tests"))
            from test_cli_examples import EXAMPLES
            with_example = {n for n, _ in EXAMPLES}
            return f"{len(with_example & set(names))} of {len(names)}"
    if name.startswith(("validation.", "row:", "published:")):
        run = cache.setdefault("validation", None) or validation_run()
        cache["validation"] = run
        if name.startswith("row:"):
            return row_value(run, name[4:])
        if name.startswith("published:"):
            return row_value(run, name[10:], "published")
        key = name.split(".", 1)[1]
        if key == "fail_list":
            return fail_list(run)
        if key == "run":
            return run["provenance"].get("run", "")
        return run[key]
    if name.startswith("setup."):
        if not STORED.exists():
            raise SystemExit(f"no {STORED}: python benchmarks/time_setup.py measures the set-up")
        stored = json.loads(STORED.read_text(encoding="utf-8"))
        value = stored.get("setup", {}).get(name.split(".", 1)[1])
        if value is None:
            raise SystemExit(f"{STORED}: no setup figure {name!r} (benchmarks/time_setup.py writes them)")
        return str(value)
    raise SystemExit(f"README: unknown figure {name!r} (docs/figures.py lists the kinds)")


def update(text: str, check_pages: bool = True) -> tuple:
    """(the README with every generated span recomputed, the problems of the
    page-checked ones)."""
    cache, problems = {}, []

    def replace(match):
        name, old = match.group("name").strip(), match.group("text")
        new = generated(name, cache)
        if new is None:
            page = ROOT / name
            if not page.exists():
                problems.append(f"figure '{old}': no page {name}")
            elif check_pages and old not in page.read_text(encoding="utf-8"):
                problems.append(f"figure '{old}' is not in {name}")
            return match.group(0)
        return f"<!-- figure: {match.group('name')} -->{new}<!-- /figure -->"
    return SPAN.sub(replace, text), problems


def write_block(page: Path, name: str, text: str) -> None:
    """Replace the generated block `name` of `page` by `text`."""
    old = page.read_text(encoding="utf-8")
    found = []

    def replace(match):
        if match.group("name") != name:
            return match.group(0)
        found.append(name)
        return match.group(1) + text.rstrip("\n") + "\n" + match.group(4)
    new = BLOCK.sub(replace, old)
    if not found:
        raise SystemExit(f"{page}: no generated block {name!r} to write into")
    page.write_text(new, encoding="utf-8")
    print(f"wrote the block {name!r} of {page}")


def quarter_vehicle_table(csv_path: Path) -> str:
    """docs/running.md's table of the stand-alone wheelset beside the vehicle,
    from the validation run's quarter_vehicle.csv."""
    import csv
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    lines = ["| speed | cant deficiency | lateral balance | (Q outer − Q inner)/2, stand-alone | "
             "the vehicle's (its 4 wheelsets) | Q inner / outer, stand-alone | the vehicle's, "
             "mean | Y/Q outer, stand-alone | the vehicle's, leading / trailing |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {float(r['speed_m_s']):g} m/s | {r['cant_deficiency_mm']} mm | "
            f"{float(r['balance_ratio']):.4f} | {float(r['transfer_standalone_kN']):.2f} kN | "
            f"{float(r['transfer_vehicle_mean_kN']):.2f} kN ({float(r['transfer_vehicle_min_kN']):.2f}-"
            f"{float(r['transfer_vehicle_max_kN']):.2f}) | {r['q_inner_standalone_kN']} / "
            f"{r['q_outer_standalone_kN']} kN | {r['q_inner_vehicle_kN']} / {r['q_outer_vehicle_kN']} kN | "
            f"{r['yq_outer_standalone']} | {r['yq_outer_leading']} / {r['yq_outer_trailing']} |")
    return "\n".join(lines)


def copy_validation(folder: Path) -> None:
    """docs/validation.md's generated block 'validation-run' from the report's
    Markdown table (validation_table.md of `make demo` or `wheelset-fmu report`),
    and docs/running.md's 'quarter-vehicle' table from its quarter_vehicle.csv."""
    folder = Path(folder)
    write_block(VALIDATION, "validation-run",
                (folder / "validation_table.md").read_text(encoding="utf-8"))
    if (folder / "quarter_vehicle.csv").exists():
        write_block(ROOT / "docs" / "running.md", "quarter-vehicle",
                    quarter_vehicle_table(folder / "quarter_vehicle.csv"))
    import shutil
    for source, target in FIGURES.items():
        if (folder / source).exists():
            shutil.copyfile(folder / source, ROOT / "docs" / "figures" / target)
            print(f"copied {source} to docs/figures/{target}")


# the report's figures the docs show: the run's file -> docs/figures/
FIGURES = {"ren_jin_100_multipoint_fig8.png": "ren_jin_fig8.png", "kang_fig11.png": "kang_fig11.png",
           "quarter_vehicle.png": "quarter_vehicle.png"}


def setup_table() -> str:
    """docs/speed.md's set-up figures, from docs/figures.json."""
    stored = json.loads(STORED.read_text(encoding="utf-8")).get("setup", {})
    if not stored:
        return "(not measured yet)"
    names = {"make_demo": "`make demo` from a fresh clone (the environment, the FMU, the suite)",
             "fmu_build": "of it the FMU's build (one numba target), beside the cases that do "
                          "not need the FMU",
             "make_fmu": "`make fmu`, the FMU alone, its own empty numba cache",
             "measured": "measured"}
    return "\n".join(["| what | wall time (CPU time; the machine's mean load) |", "|---|---|"]
                     + [f"| {names.get(k, k)} | {v} |" for k, v in stored.items()])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say what is stale (exit 1)")
    parser.add_argument("--validation", metavar="FOLDER",
                        help="first copy FOLDER/validation_table.md into docs/validation.md")
    args = parser.parse_args(argv)
    if args.validation:
        copy_validation(Path(args.validation))
    if not args.check and STORED.exists():
        page = ROOT / "docs" / "speed.md"
        if BLOCK.search(page.read_text(encoding="utf-8")):
            write_block(page, "setup", setup_table())
    text = README.read_text(encoding="utf-8")
    new, problems = update(text)
    stale = [f"README figure '{m.group('name').strip()}': '{m.group('text')}' should be '{n.group('text')}'"
             for m, n in zip(SPAN.finditer(text), SPAN.finditer(new)) if m.group("text") != n.group("text")]
    for line in problems + stale:
        print(line, file=sys.stderr)
    if args.check:
        return 1 if problems or stale else 0
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"updated {len(stale)} figure(s) of {README}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
