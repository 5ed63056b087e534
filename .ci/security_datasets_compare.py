#!/usr/bin/env python3
"""Compares scanner's detections on the Security-Datasets JSON files with Hayabusa 3.9.0's.

Usage: security_datasets_compare.py SCANNER_CSV HAYABUSA_TSV [MIN_AGREEMENT]

SCANNER_CSV is `scanner csv-timeline -p verbose` output (its EvtxFile and RuleID columns);
HAYABUSA_TSV is `file <TAB> rule id <TAB> count` per (file, rule), files by base name.
Agreement is counted both ways, in detections: of Hayabusa's, how many scanner also has
for the same file and rule, and of scanner's, how many Hayabusa has; and in (file, rule)
pairs whose counts are equal. Exits 1 if either detection agreement is under the minimum
(0.99 by default).
"""
import csv
import os
import sys
from collections import Counter


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    minimum = float(sys.argv[3]) if len(sys.argv) == 4 else 0.99
    csv.field_size_limit(1 << 30)
    ours = Counter()
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            ours[(os.path.basename(row["EvtxFile"]), row["RuleID"])] += 1
    theirs = Counter()
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            name, rule, count = line.rstrip("\n").split("\t")
            theirs[(name, rule)] += int(count)
    shared = sum(min(n, ours[k]) for k, n in theirs.items())
    total_h = sum(theirs.values())
    total_s = sum(ours.values())
    pairs = set(ours) | set(theirs)
    equal = sum(1 for k in pairs if ours[k] == theirs[k])
    of_h = shared / total_h if total_h else 1.0
    of_s = shared / total_s if total_s else 1.0
    print(f"Hayabusa: {total_h} detections; scanner: {total_s}; in both: {shared}")
    print(f"agreement, of Hayabusa's detections found by scanner: {of_h:.4f}")
    print(f"agreement, of scanner's detections found by Hayabusa: {of_s:.4f}")
    print(f"(file, rule) pairs with equal counts: {equal}/{len(pairs)} ({equal / max(len(pairs), 1):.4f})")
    files_h = {k[0] for k in theirs}
    files_s = {k[0] for k in ours}
    print(f"files with detections: Hayabusa {len(files_h)}, scanner {len(files_s)}")
    diffs = sorted(
        ((ours[k] - theirs[k], k) for k in pairs if ours[k] != theirs[k]),
        key=lambda d: (-abs(d[0]), d[1]),
    )
    if diffs:
        print("largest differences (scanner minus Hayabusa, file, rule):")
        for d, (name, rule) in diffs[:25]:
            print(f"  {d:+7d}  {name}  {rule}")
    if of_h < minimum or of_s < minimum:
        print(f"FAIL: agreement under {minimum}")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
