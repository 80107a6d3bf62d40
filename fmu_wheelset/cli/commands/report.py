"""`wheelset-fmu report`: run the validation suite and write one HTML page."""
from __future__ import annotations


def register(subparsers):
    p = subparsers.add_parser("report", help="run the validation suite (FMU through FMPy) and "
                                             "write a self-contained HTML report")
    from fmu_wheelset.cli.args import output_dir
    p.add_argument("--out", default="report", type=output_dir,
                   help="output directory (CSV, PNG, FMU cache, report.html)")
    p.add_argument("--backend", choices=("fmu", "core"), default="fmu",
                   help="run the dynamic cases through the FMU (FMPy) or the core")
    p.add_argument("--no-progress", action="store_true")
    add_cases_option(p)
    p.set_defaults(func=run)


def add_cases_option(parser):
    """--cases (report and demo): a comma list of the suite's cases."""
    import argparse
    from fmu_wheelset.validation import CASE_MODULES

    def cases(text):
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        from fmu_wheelset.validation import select_cases
        try:
            select_cases(names)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return names
    parser.add_argument("--cases", type=cases, metavar="NAME,...",
                        help="only these cases of the suite (default: all): "
                             + ", ".join(CASE_MODULES))


def run(args) -> int:
    return run_report(args.out, args.backend, progress=not args.no_progress, cases=args.cases)


def run_report(out, backend="fmu", progress=True, title="Wheelset FMU validation",
               cases=None) -> int:
    """Run the suite, write report.html and validation_table.md under `out`,
    print the table and the summary; 1 when a compared row fails."""
    import time
    from pathlib import Path

    from fmu_wheelset.validation import markdown_table, run_suite
    from fmu_wheelset.validation.report import all_rows, fail_reason, write_markdown, write_report
    t0 = time.perf_counter()
    results = run_suite(out, backend=backend, progress=progress, cases=cases)
    built = Path(out) / "fmu" / "Wheelset.fmu"      # (none when no case needed it)
    fmu = built if backend == "fmu" and built.exists() else None
    html = write_report(results, Path(out) / "report.html", title=title, fmu=fmu, backend=backend)
    md = write_markdown(results, Path(out) / "validation_table.md", fmu=fmu, backend=backend,
                        elapsed=time.perf_counter() - t0)
    rows = all_rows(results)
    print(markdown_table(rows))
    failed = [r for r in rows if not r.passed]
    compared = [r for r in rows if r.compared]
    info = sum(len(res.info) for res in results)
    print(f"\n{len(compared) - len(failed)} pass, {len(failed)} FAIL, "
          f"{len(rows) - len(compared)} not compared, {info} more figures measured for "
          f"information ({time.perf_counter() - t0:.0f} s); wrote {html} and {md}")
    for r in failed:
        print(f"FAIL {r.case}: {fail_reason(r)}")
    return 1 if failed else 0
