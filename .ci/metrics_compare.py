#!/usr/bin/env python3
"""Compares scanner's eid-metrics, computer-metrics and log-metrics CSVs with Hayabusa
3.9.0's for the same corpus.

usage: metrics_compare.py REFERENCE_DIR OUR_DIR

Rows are compared as sets (the content), and the order separately: both tools sort by
the count, most first, but Hayabusa leaves the order of equal counts to its hash maps
(eid-metrics) or to the order its threads finished the files (log-metrics), while
scanner sorts them by channel and EventID, or by path. Every difference is either
listed below with its reason, or makes the script fail.
"""
import csv
import sys

# Files Hayabusa 3.9.0 does not read at all and scanner does. etw_rpc_zerologon.evtx
# holds 415 ETW records (provider Microsoft-Windows-RPC, EventID 6) whose Channel is
# empty; the file is in none of Hayabusa's outputs (likely its channel filter: a file's
# channel comes from its first record, and no rule names an empty one). scanner counts them: they are events of the log an analyst was given.
UNREAD_BY_HAYABUSA = {"etw_rpc_zerologon.evtx": 415}
# The rows those records make in scanner's eid-metrics: (Channel, ID).
UNREAD_EID_ROWS = {("", "6")}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def percent(n, total):
    # As both tools compute it: one decimal of n / total.
    return f"{round(n / total * 1000) / 10:.1f}%"


def eid(ref, ours):
    (h1, r), (h2, o) = read(ref), read(ours)
    assert h1 == h2, f"eid-metrics header {h2} != {h1}"
    ref_total = sum(int(x[0]) for x in r)
    our_total = sum(int(x[0]) for x in o)
    mine = {(x[2], x[3]): x for x in o}
    equal = explained = 0
    bad = []
    for x in r:
        y = mine.pop((x[2], x[3]), None)
        if y == x:
            equal += 1
        elif (
            y is not None
            and y[0] == x[0]
            and y[2:] == x[2:]
            and x[1] == percent(int(x[0]), ref_total)
            and y[1] == percent(int(y[0]), our_total)
            and our_total - ref_total == sum(UNREAD_BY_HAYABUSA.values())
        ):
            # Same count: the share differs only because scanner's total holds the
            # records of the files Hayabusa does not read.
            explained += 1
        else:
            bad.append(f"reference row {x} vs {y}")
    for key, y in mine.items():
        if key not in UNREAD_EID_ROWS:
            bad.append(f"row only in scanner: {y}")
    counts = [int(x[0]) for x in o]
    if counts != sorted(counts, reverse=True):
        bad.append("scanner's rows are not sorted by Total, most first")
    return "eid-metrics", equal, explained, len(r), bad


def computer(ref, ours):
    (h1, r), (h2, o) = read(ref), read(ours)
    assert h1 == h2, f"computer-metrics header {h2} != {h1}"
    equal = sum(1 for x, y in zip(r, o) if x == y)
    bad = [] if r == o else [f"rows differ: {[x for x in o if x not in r]} / {[x for x in r if x not in o]}"]
    # Hayabusa's order is fully determined (Events, most first, then the name).
    with open(ref, encoding="utf-8") as a, open(ours, encoding="utf-8") as b:
        if a.read() != b.read():
            bad.append("the files differ byte for byte (quoting or order)")
    return "computer-metrics", equal, 0, len(r), bad


def log(ref, ours):
    (h1, r), (h2, o) = read(ref), read(ours)
    assert h1 == h2, f"log-metrics header {h2} != {h1}"
    mine = [tuple(y) for y in o]
    equal = 0
    bad = []
    for x in r:
        if tuple(x) in mine:
            mine.remove(tuple(x))
            equal += 1
        else:
            bad.append(f"reference row not in scanner's: {x}")
    for y in mine:
        if UNREAD_BY_HAYABUSA.get(y[0]) != int(y[2].replace(",", "")):
            bad.append(f"row only in scanner: {y}")
    counts = [int(y[2].replace(",", "")) for y in o]
    if counts != sorted(counts, reverse=True):
        bad.append("scanner's rows are not sorted by Events, most first")
    return "log-metrics", equal, 0, len(r), bad


def main():
    ref, ours = sys.argv[1], sys.argv[2]
    failed = False
    for check, name in ((eid, "eid-metrics"), (computer, "computer-metrics"), (log, "log-metrics")):
        title, equal, explained, total, bad = check(f"{ref}/{name}.csv", f"{ours}/{name}.csv")
        note = f" ({explained} more differ only as explained in .ci/metrics_compare.py)" if explained else ""
        print(f"{title}: {equal} of {total} rows equal{note}")
        for b in bad:
            print(f"  unexplained: {b}")
        failed |= bool(bad)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
