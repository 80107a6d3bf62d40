"""Make the CONTACT reference data of the Manchester benchmark case A-2.2 (run by hand).

    python make_reference.py CONTACT_EXE CONTACT_EXAMPLES_FOLDER

Needs CONTACT (github eve70a/CONTACT, built outside this project) and its
examples folder (MBench_S1002_v3.prw, MBench_UIC60_v3.prr, mbench_a22_left.ref_out,
mbench_a22_right.ref_out). Writes, next to this script:

- a22_ref_out.csv: CONTACT's stored A-2.2 outputs (examples/mbench_a22_{left,right}
  .ref_out: 10 kN vertical load per wheel, creep, the benchmark's roll and yaw),
  parsed: per case and wheel the position, roll, yaw, contact reference location
  (YCP/ZCP on the wheel, rail and in the track), normal force, contact angle,
  approach.
- a22_rigid_contact.csv: CONTACT run here at vanishing load (1 N per wheel, 0.02 mm
  elements) at the A-2.2 positions and yaw, with the roll of the rigid wheelset
  (the project's static contact, sign turned to CONTACT's lateral axis): the
  contact reference location tends to the rigid contact point as the load
  vanishes (1 N and 10 N differ by < 0.1 um in Delta r). CONTACT's wheelset
  heights of the left and right wheel, found separately, agree within 0.3 um on
  the tread: the roll is the rigid one in CONTACT's geometry too.

CONTACT's lateral axis points to the RIGHT (Y_WS > 0 moves the wheelset to the
right rail); the project's y points LEFT. So the project's left wheel at
(y, roll, yaw) is CONTACT's right wheel at (y, -roll, -yaw).
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
Y_MM = [round(0.5 * k, 1) for k in range(1, 21)]
YAW_PER_MM = 2.4e-3          # the benchmark's yaw: 0 : 1.2 : 24 mrad for y = 0 : 0.5 : 10 mm


def case_block(config, y, fz, dx, roll, yaw):
    return ["", "  1 MODULE",
            f" {config}203100    C-P-B-T-N-F-S",
            " 0022033    V-L-D-C-M-Z-E",
            " 0000321    H-G-I-A-O-W-R",
            "    999     100    30    1     1e-5",
            "  0.300   0.300",
            "  0.280   0.280   82000.  82000.",
            f"  {dx}   {dx}   1.000   90d   8.0   4.0",
            "   14.0     0    1435.0   0.000",
            "  'MBench_UIC60_v3.prr'   0     1.0   0.0",
            "     0.0    0.0   0.000   0.0   0.0   0.000",
            "  1360.0  -70.0   460.0",
            "  'MBench_S1002_v3.prw'   0     1.0   0.0",
            f"  0.0  {y}  {fz}  {roll:.10e} {yaw:.6f}  0.0",
            " 2000. 0.0    0.0   0.0        0.0  -4.34811810"]


def parse_out(path):
    """Per case: position, roll, yaw and the first patch's reference location."""
    rows = []
    text = open(path, encoding="utf-8", errors="replace").read()
    for case in text.split(" Case ")[1:]:
        pos = re.search(r"Y_WS.*?\n\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", case)
        ref = re.search(r"CONTACT REFERENCE LOCATION.*?\n.*?\n\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                        r"\s*\n\s*\n\s+XCP\(W\).*?\n\s+(\S+)\s+(\S+)\s+(\S+)", case, re.S)
        force = re.search(r"FN\s+FX\s+FS.*?\n\s+(\S+)\s+(\S+)\s+(\S+).*?APPROACH\s+PMAX\s*\n"
                          r"\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)", case, re.S)
        if not (pos and ref):
            continue
        rows.append({
            "y_mm": float(pos.group(2)), "z_ws_mm": float(pos.group(3)), "roll_rad": float(pos.group(4)),
            "yaw_rad": float(pos.group(5)), "xcp_tr_mm": float(ref.group(1)), "ycp_tr_mm": float(ref.group(2)),
            "zcp_tr_mm": float(ref.group(3)), "delta_rad": float(ref.group(4)), "ycp_r_mm": float(ref.group(5)),
            "zcp_r_mm": float(ref.group(6)), "ycp_w_mm": float(ref.group(8)), "zcp_w_mm": float(ref.group(9)),
            "fn_n": float(force.group(1)) if force else float("nan"),
            "fs_n": float(force.group(3)) if force else float("nan"),
            "approach_mm": float(force.group(4)) if force else float("nan"),
            "pmax_mpa": float(force.group(5)) if force else float("nan"),
            "patches": case.count("DATA FOR CONTACT PATCH"),
        })
    return rows


def write_csv(path, rows, header_lines):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        for line in header_lines:
            fh.write(f"# {line}\n")
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main(argv):
    exe, examples = argv[1], argv[2]
    sys.path.insert(0, ROOT)
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.points import static_contact
    setup = ContactSetup.from_names("MBench_S1002_v3", "MBench_UIC60_v3", inclination_ratio=40,
                                    gauge=1.435, back_to_back=1.360, nominal_radius=0.46)
    # stored outputs of CONTACT's own example
    rows = []
    for side in ("left", "right"):
        for r in parse_out(os.path.join(examples, f"mbench_a22_{side}.ref_out")):
            rows.append({"side": side, **r})
    write_csv(os.path.join(HERE, "a22_ref_out.csv"), rows, [
        "CONTACT (github eve70a/CONTACT, Apache-2.0) examples/mbench_a22_left.ref_out and "
        "mbench_a22_right.ref_out, parsed by make_reference.py",
        "Manchester benchmark A-2.2: 10 kN vertical per wheel, steady rolling with creep, "
        "CONTACT's axes (y to the right, z down), mm, rad, N, MPa"])
    # rigid contact: CONTACT at vanishing load with the rigid roll
    work = tempfile.mkdtemp(prefix="contact-a22-")
    for name in ("MBench_S1002_v3.prw", "MBench_UIC60_v3.prr"):
        shutil.copy(os.path.join(examples, name), work)
    rolls = {}
    for y in Y_MM:
        sc = static_contact(setup, y * 1e-3, yaw=-YAW_PER_MM * y, epsilon=0.0)
        rolls[y] = -sc.roll
    for side, config in (("left", 0), ("right", 1)):
        lines = [f"% A-2.2 positions at 1 N per wheel, 0.02 mm elements, {side} wheel"]
        for y in Y_MM:
            lines += case_block(config, y, 1.0, 0.02, rolls[y], YAW_PER_MM * y)
        lines += ["", "  0 MODULE", ""]
        with open(os.path.join(work, f"rigid_{side}.inp"), "w") as fh:
            fh.write("\n".join(lines))
        subprocess.run([exe, "2", f"rigid_{side}"], cwd=work, check=True, stdout=subprocess.DEVNULL)
    left = parse_out(os.path.join(work, "rigid_left.out"))
    right = parse_out(os.path.join(work, "rigid_right.out"))
    rigid = []
    for l, r in zip(left, right):
        rigid.append({"y_mm": l["y_mm"], "yaw_rad": l["yaw_rad"], "roll_rad": l["roll_rad"],
                      "zcp_w_left_mm": l["zcp_w_mm"], "zcp_w_right_mm": r["zcp_w_mm"],
                      "delta_r_mm": round(r["zcp_w_mm"] - l["zcp_w_mm"], 4),
                      "ycp_w_left_mm": l["ycp_w_mm"], "ycp_w_right_mm": r["ycp_w_mm"],
                      "z_ws_left_mm": l["z_ws_mm"], "z_ws_right_mm": r["z_ws_mm"]})
    write_csv(os.path.join(HERE, "a22_rigid_contact.csv"), rigid, [
        "CONTACT (github eve70a/CONTACT) run by make_reference.py: A-2.2 positions and yaw, 1 N per "
        "wheel, DX = DS = 0.02 mm, roll of the rigid wheelset, the benchmark's profile files",
        "delta_r_mm = ZCP(W) right - ZCP(W) left (the wheel profile heights at the contact points); "
        "CONTACT's axes (y to the right, z down), mm, rad"])
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
