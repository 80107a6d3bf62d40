"""Look at the validation report in a real browser (run by hand; Chromium is a
Debian package, outside `make test`):

    apt-get update && apt-get install -y chromium
    python tests/browser/screenshot_report.py demo-output/report.html --png report.png

Takes a 1400 x 900 screenshot of the page in headless Chromium (a new, empty
profile folder, no network, no sync) and measures, in the same browser, where
the summary's parts are: the counts, the FAIL rows, the version, the commit
and the FMU hash must all lie inside the first 1400 x 900 pixels. Prints one
line per part with its bottom edge in pixels; exit 0 when all are inside,
1 otherwise. Look at the PNG too: the measurement says where, not whether it
reads well. Results of a run are written down in docs/validation.md.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WIDTH, HEIGHT = 1400, 900
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}"]

# the parts of the summary that must be seen first (CSS selectors or the
# provenance row's name), measured by a script added to a copy of the page
PROBE = """<script>
window.addEventListener('load', () => {
  const out = {};
  const box = (name, el) => { if (el) { const r = el.getBoundingClientRect();
    out[name] = [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)]; } };
  box('counts', document.querySelector('.summary .counts'));
  const fails = document.querySelectorAll('.summary .fails tr');
  box('FAIL rows', fails.length ? fails[fails.length - 1] : null);
  out['FAIL rows shown'] = Math.max(fails.length - 1, 0);
  for (const tr of document.querySelectorAll('.summary .prov tr')) {
    box(tr.cells[0].textContent.trim(), tr); }
  out['page height'] = document.documentElement.scrollHeight;
  const img = document.querySelector('img');
  out['first figure top'] = img ? Math.round(img.getBoundingClientRect().top) : -1;
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>"""
REQUIRED = ("counts", "FAIL rows", "version", "commit", "FMU")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no Chromium found: apt-get update && apt-get install -y chromium")


def run_browser(args, profile) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=300)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report.html of `wheelset-fmu report` / demo")
    parser.add_argument("--png", type=Path, default=Path("report-1400x900.png"))
    args = parser.parse_args()
    page = args.report.resolve()
    with tempfile.TemporaryDirectory(prefix="wheelset-chromium-") as tmp:
        shot = run_browser([f"--screenshot={args.png.resolve()}", page.as_uri()], Path(tmp, "a"))
        if not args.png.exists():
            print(shot.stderr[-2000:], file=sys.stderr)
            return 1
        probe = Path(tmp, "probe.html")
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                         encoding="utf-8")
        dom = run_browser(["--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                          Path(tmp, "b"))
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    if not found:
        print("the page did not report its layout", file=sys.stderr)
        return 1
    boxes = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    inside = True
    for name in REQUIRED:
        if name == "FAIL rows" and boxes.get("FAIL rows shown") == 0:
            print("FAIL rows: none to show")
            continue
        left, top, right, bottom = boxes.get(name, (0, 0, 10 ** 6, 10 ** 6))
        ok = right <= WIDTH and bottom <= HEIGHT
        inside &= ok
        print(f"{name:10s} {'inside' if ok else 'OUTSIDE'} the first {WIDTH} x {HEIGHT} px: "
              f"bottom {bottom} px, right {right} px")
    print(f"{boxes.get('FAIL rows shown', 0)} FAIL rows listed; page {boxes['page height']} px "
          f"high at {WIDTH} px, first figure at {boxes['first figure top']} px; screenshot "
          f"{args.png}")
    return 0 if inside else 1


if __name__ == "__main__":
    sys.exit(main())
