#!/usr/bin/env python3
"""Compares scanner's extract-base64 CSV with Hayabusa 3.9.0's for the same corpus.

usage: extract_base64_compare.py REFERENCE_CSV OUR_CSV

Rows are compared as multisets with every column, the File Name reduced to its path
inside the corpus (Hayabusa wrote the path it was given, from another folder). Hayabusa
writes rows in the order its threads finished; scanner in file order, then record order.
Rows of the events Hayabusa 4.0 adds (PwSh 4100/4102, PwShClassic 403/600) are counted
apart. Agreement under 0.99 either way fails.
"""
import csv
import sys
from collections import Counter

ADDED_EVENTS = {"PwSh 4100", "PwSh 4102", "PwShClassic 403", "PwShClassic 600"}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def norm(r):
    r = list(r)
    r[12] = r[12].replace("\\", "/").split("evtx-attack-samples/")[-1]
    return tuple(r)


(h1, r), (h2, o) = read(sys.argv[1]), read(sys.argv[2])
assert h1 == h2, f"extract-base64 header {h2} != {h1}"
added = [x for x in o if x[10] in ADDED_EVENTS]
o = [x for x in o if x[10] not in ADDED_EVENTS]
rc, oc = Counter(map(norm, r)), Counter(map(norm, o))
equal = sum((rc & oc).values())
print(f"extract-base64: {equal} of {len(r)} rows equal ({len(o)} of scanner's; "
      f"{len(added)} rows of 4.0's added events)")
for x in rc - oc:
    print(f"  only Hayabusa: {[c[:80] for c in x]}")
for x in oc - rc:
    print(f"  only scanner: {[c[:80] for c in x]}")
ok = (not r or equal / len(r) >= 0.99) and (not o or equal / len(o) >= 0.99)
sys.exit(0 if ok else "extract-base64: agreement under 0.99")
