"""One self-contained HTML page of the validation suite: the table (case,
quantity, published value, this FMU's value, difference, tolerance, why this
tolerance, pass / FAIL / not compared, backend) and every figure embedded as a base64 PNG, with its backend."""
from __future__ import annotations

import base64
import datetime
import html
from pathlib import Path

from fmu_wheelset.validation.common import TABLE_HEADER, markdown_table

STYLE = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #bbb;padding:3px 6px}
th{background:#eee}.pass{color:#070}.FAIL{color:#b00;font-weight:bold}
figure{margin:1em 0}figcaption{font-size:13px;color:#444}img{max-width:100%}"""


def _img(path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(Path(path).name)}" src="data:image/png;base64,{data}">'


def all_rows(results):
    return [r for res in results for r in res.rows]


def write_report(results, path, title="Wheelset FMU validation", extra=""):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = all_rows(results)
    compared = [r for r in rows if r.compared]
    n_pass = sum(bool(r.passed) for r in compared)
    n_not = len(rows) - len(compared)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p>{n_pass} of {len(compared)} compared checks pass; {n_not} rows are reported, "
             "not compared (their note says why). Generated "
             f"{datetime.datetime.now().isoformat(timespec='seconds')}. Backend 'fmu': the FMU "
             "driven by FMPy (fmpy.simulate_fmu, FMI 2.0 co-simulation, communication step = "
             "output interval); 'core': solver.scenarios.simulate; 'geometry': "
             "solver.geometry_analysis (static, no dynamics).</p>", extra,
             "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in TABLE_HEADER + ["note"])
             + "</tr>"]
    for r in rows:
        cells = r.cells()
        tds = "".join(f"<td>{html.escape(c)}</td>" for c in cells[:7])
        css = {"pass": "pass", "FAIL": "FAIL"}.get(cells[7], "")
        tds += f"<td class='{css}'>{html.escape(cells[7])}</td><td>{html.escape(cells[8])}</td>"
        tds += f"<td>{html.escape(r.note)}</td>"
        parts.append(f"<tr>{tds}</tr>")
    parts.append("</table>")
    for res in results:
        parts.append(f"<h2>{html.escape(res.title)}</h2>")
        notes = "; ".join(n for n in res.notes if n)
        parts.append(f"<p>backend: <b>{html.escape(res.backend)}</b>"
                     + (f" ({html.escape(notes)})" if notes else "") + "; data: "
                     + ", ".join(html.escape(Path(c).name) for c in res.csv) + "</p>")
        for caption, fig in res.figures:
            parts.append(f"<figure>{_img(fig)}<figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def write_markdown(results, path):
    path = Path(path)
    path.write_text(markdown_table(all_rows(results)) + "\n", encoding="utf-8")
    return path
