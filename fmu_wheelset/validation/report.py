"""One self-contained HTML page of the validation suite.

It opens with a summary that fits a screen (1400 x 900 px, checked in a real
browser by tests/browser/screenshot_report.py): the counts of pass / FAIL /
not-compared rows, every FAIL row with one line saying why, and where the
figures come from (the project's version, its git commit, the SHA-256 of the
FMU that ran, the date and the machine). Then one section per case: its rows
(case, quantity, published value, this FMU's value, difference, tolerance,
why this tolerance, result, backend, note) with its figures right below them,
each embedded as a base64 PNG.

Numbers carry three significant digits, more where the tolerance is finer
than that: a value is printed with enough digits that rounding moves it by at
most a tenth of its tolerance (1.0117 against 1 +- 0.01 reads 1.012, not 1.01).
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import html
import os
import platform
import subprocess
from pathlib import Path

from fmu_wheelset.validation.common import TABLE_HEADER, markdown_table

ROOT = Path(__file__).resolve().parents[2]

STYLE = """body{font-family:sans-serif;max-width:1360px;margin:12px auto;color:#222;font-size:14px}
h1{font-size:20px;margin:4px 0 8px}h2{font-size:17px;margin:28px 0 6px;border-top:2px solid #999;
padding-top:8px}
table{border-collapse:collapse;font-size:12.5px}td,th{border:1px solid #bbb;padding:2px 5px;
vertical-align:top}th{background:#eee}.pass{color:#070}.FAIL{color:#b00;font-weight:bold}
.summary{border:2px solid #888;padding:8px 12px;background:#fafafa}
.counts{font-size:18px;margin:2px 0 6px}.counts b{margin-right:14px}
.fails td{max-width:1180px}.info td{color:#555}
.prov td{border:none;padding:0 10px 0 0}.prov{margin-top:6px}
.toc{columns:2;font-size:13px;margin:6px 0 0;padding-left:18px}
figure{display:inline-block;margin:8px 8px 0 0;vertical-align:top;max-width:49%}
figcaption{font-size:12px;color:#444}img{max-width:100%}"""


def _img(path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(Path(path).name)}" src="data:image/png;base64,{data}">'


def all_rows(results):
    return [r for res in results for r in res.rows]


# ------------------------------------------------------------- provenance
def version() -> str:
    try:
        from importlib.metadata import version as installed
        return installed("wheelset-fmu")
    except Exception:  # noqa: BLE001 - not installed: the source tree's
        import tomllib
        return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def git_commit(root: Path = ROOT) -> str:
    """The commit of the source tree (short hash), "+ changes" when files
    tracked by git differ from it; "unknown" outside a git checkout."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return commit + (" + uncommitted changes" if dirty else "")


def file_sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what platform says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine() -> str:
    return (f"{cpu_name()}, {os.cpu_count()} cores; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}")


def provenance(fmu=None, backend="fmu") -> dict:
    """Where the figures of a report come from."""
    return {
        "version": version(),
        "commit": git_commit(),
        "FMU": (f"sha256 {file_sha256(fmu)[:16]} ({Path(fmu).name}, "
                f"{Path(fmu).stat().st_size / 1e6:.1f} MB)" if fmu is not None and Path(fmu).exists()
                else f"none (backend {backend}: the core without the FMU)"),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(),
    }


# ------------------------------------------------------------------ numbers
def fail_reason(row) -> str:
    """One line: what a FAIL row measured against what and its tolerance first,
    then the quantity and the row's note."""
    cells = row.cells()
    value, diff, tol = cells[3], cells[4], cells[5]
    unit = "" if row.unit in ("1", "-") else row.unit
    text = (f"{value} {unit}".strip() if value else "none") + f" against {row.published}"
    if tol:
        text += f" (tolerance {tol}" + (f", difference {diff})" if diff else ")")
    text += f": {row.quantity}"
    if row.note:
        text += f"; {row.note}"
    return text


# ------------------------------------------------------------------- report
def summary_html(results, prov) -> str:
    rows = all_rows(results)
    failed = [r for r in rows if r.compared and not r.passed]
    n_pass = sum(1 for r in rows if r.compared and r.passed)
    n_not = sum(1 for r in rows if not r.compared)
    n_info = sum(len(res.info) for res in results)
    parts = ["<div class='summary'>",
             f"<div class='counts'><b class='pass'>{n_pass} pass</b>"
             f"<b class='FAIL'>{len(failed)} FAIL</b><b>{n_not} not compared</b>"
             f"<span>of {len(rows)} rows in {len(results)} sections; {n_info} more figures "
             "measured for information under their sections</span></div>"]
    if failed:
        parts.append("<table class='fails'><tr><th>FAIL</th><th>why</th></tr>")
        for r in failed:
            reason = fail_reason(r)
            parts.append(f"<tr><td><a href='#{_anchor(r.case)}'>{html.escape(r.case)}</a></td>"
                         f"<td title='{html.escape(reason)}'>{html.escape(reason)}</td></tr>")
        parts.append("</table>")
    parts.append("<table class='prov'>" + "".join(
        f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
        for k, v in prov.items()) + "</table>")
    parts.append("<ul class='toc'>" + "".join(
        f"<li><a href='#{_anchor(res.rows[0].case if res.rows else res.name)}'>"
        f"{html.escape(res.title)}</a> ({_counts(res.rows)})</li>" for res in results) + "</ul>")
    parts.append("</div>")
    return "".join(parts)


def _counts(rows) -> str:
    n_fail = sum(1 for r in rows if r.compared and not r.passed)
    n_pass = sum(1 for r in rows if r.compared and r.passed)
    n_not = sum(1 for r in rows if not r.compared)
    return ", ".join(part for part in (f"{n_pass} pass" if n_pass else "",
                                       f"{n_fail} FAIL" if n_fail else "",
                                       f"{n_not} not compared" if n_not else "") if part)


def _anchor(text: str) -> str:
    return "s-" + "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def _rows_table(rows, css="") -> str:
    parts = [(f"<table class='{css}'>" if css else "<table>") + "<tr>"
             + "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEADER[1:] + ["note"]) + "</tr>"]
    for r in rows:
        cells = r.cells()
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells[1:7])
        css = {"pass": "pass", "FAIL": "FAIL"}.get(cells[7], "")
        tds += f"<td class='{css}'>{html.escape(cells[7])}</td><td>{html.escape(cells[8])}</td>"
        tds += f"<td>{html.escape(r.note)}</td>"
        parts.append(f"<tr>{tds}</tr>")
    parts.append("</table>")
    return "".join(parts)


def write_report(results, path, title="Wheelset FMU validation", extra="", fmu=None,
                 backend="fmu"):
    """The HTML page of `results` (CaseResult list) at `path`; `fmu`: the FMU
    file that ran (its hash goes into the summary)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prov = provenance(fmu, backend)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             summary_html(results, prov), extra]
    for res in results:
        anchor = _anchor(res.rows[0].case if res.rows else res.name)
        parts.append(f"<h2 id='{anchor}'>{html.escape(res.title)}</h2>")
        notes = "; ".join(n for n in res.notes if n)
        parts.append(f"<p>backend: <b>{html.escape(res.backend)}</b>"
                     + (f" ({html.escape(notes)})" if notes else "") + "; data: "
                     + (", ".join(html.escape(Path(c).name) for c in res.csv) or "none")
                     + f"; {_counts(res.rows)}</p>")
        parts.append(_rows_table(res.rows))
        if res.info:
            parts.append("<p>Measured for information (no published value or criterion to "
                         "compare them with):</p>" + _rows_table(res.info, css="info"))
        for caption, fig in res.figures:
            parts.append(f"<figure>{_img(fig)}<figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("<p>Backend 'fmu': the FMU driven by FMPy (fmpy.simulate_fmu, FMI 2.0 "
                 "co-simulation, communication step = output interval); 'core': "
                 "solver.scenarios.simulate; 'geometry': solver.contact.geometry.analysis (static, no "
                 "dynamics).</p></body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def write_markdown(results, path, fmu=None, backend="fmu", elapsed=None):
    """The same as Markdown: the summary (counts, FAIL rows, provenance), then the table."""
    path = Path(path)
    rows = all_rows(results)
    failed = [r for r in rows if r.compared and not r.passed]
    n_pass = sum(1 for r in rows if r.compared and r.passed)
    info = [r for res in results for r in res.info]
    lines = [f"{n_pass} pass, {len(failed)} FAIL, {sum(1 for r in rows if not r.compared)} not "
             f"compared (of {len(rows)} rows); {len(info)} more figures measured for information",
             ""]
    lines += [f"- FAIL: {r.case}: {fail_reason(r)}" for r in failed]
    prov = provenance(fmu, backend)
    if elapsed is not None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        prov["run"] = f"{elapsed / 60:.1f} min (load {load:.1f} at its end)"
    lines += [""] + [f"- {k}: {v}" for k, v in prov.items()] + [""]
    text = "\n".join(lines) + markdown_table(rows) + "\n"
    if info:
        text += "\nMeasured for information:\n\n" + markdown_table(info) + "\n"
    path.write_text(text, encoding="utf-8")
    return path
