#!/usr/bin/env python3
"""The timeline against Hayabusa 4.0.0's, with the differences explained for 3.9.0.

usage: parity_hayabusa4.py PARITY_PY REFERENCE_4.csv OURS.csv EXPLAINED.csv FLOOR

docs/parity-explained.csv lists, with the event that shows it, every detection scanner
and Hayabusa 3.9.0 disagree on. 4.0 changed some of them (3.10's whole-value wildcard
match): those entries are listed here as now agreeing with 4.0 and left out of the
explained file given to parity.py, so that it is judged on the differences 4.0 still
has. Fails when an explained entry names a detection that 4.0 and scanner now disagree
on the other way round, or when recall or precision is under FLOOR.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

parity_py, ref_path, ours_path, explained_path, floor = sys.argv[1:6]
sys.path.insert(0, os.path.dirname(os.path.abspath(parity_py)))
import parity  # noqa: E402

_, ref, _, _ = parity.load(ref_path)
_, ours, _, _ = parity.load(ours_path)


def matches(k, e):
    # As parity.py matches an explained entry: same record and rule, path suffixes.
    return k[1:] == e[1:] and (k[0] == e[0] or k[0].endswith("/" + e[0]) or e[0].endswith("/" + k[0]))


with open(explained_path, newline="", encoding="utf-8-sig") as f:
    rows = list(csv.DictReader(f))
still, agree, reversed_ = [], [], []
for r in rows:
    e = (r["EvtxFile"].replace("\\", "/"), r["RecordID"].strip(), r["RuleID"].strip())
    in_ref = any(matches(k, e) for k in ref if k[2] == e[2])
    in_ours = any(matches(k, e) for k in ours if k[2] == e[2])
    if in_ref and in_ours:
        agree.append(r)
    elif in_ref or in_ours:
        still.append(r)
    else:
        reversed_.append(r)
print(f"explained differences with 3.9.0: {len(rows)}; 4.0 still differs on {len(still)}, "
      f"agrees with scanner on {len(agree)}:")
for r in agree:
    print(f"  now agreeing: {r['EvtxFile']} record {r['RecordID']} rule {r['RuleID']}")
for r in reversed_:
    print(f"  in neither timeline: {r['EvtxFile']} record {r['RecordID']} rule {r['RuleID']}")
with tempfile.NamedTemporaryFile("w", newline="", suffix=".csv", delete=False) as out:
    w = csv.DictWriter(out, fieldnames=["EvtxFile", "RecordID", "RuleID", "Reason"])
    w.writeheader()
    w.writerows(still)
try:
    run = subprocess.run([sys.executable, parity_py, ref_path, ours_path, "--explained", out.name],
                         capture_output=True, text=True, check=True)
finally:
    os.unlink(out.name)
print(run.stdout, end="")
line = [l for l in run.stdout.splitlines() if l.startswith("parity:")][-1]
recall, precision = (float(x) for x in re.search(r"recall=([\d.]+) precision=([\d.]+)", line).groups())
print(f"Hayabusa 4.0.0 timeline: recall {recall:.4f}, precision {precision:.4f}, floor {floor}")
ok = recall >= float(floor) and precision >= float(floor) and not reversed_
sys.exit(0 if ok else "parity with Hayabusa 4.0.0 below the floor, or explained entries in neither timeline")
