#!/usr/bin/env python3
"""Compares scanner's logon-summary CSVs with Hayabusa 3.9.0's (or 4.0's) for the same
corpus.

usage: logon_summary_compare.py REFERENCE_DIR OUR_DIR   (both hold
logon-summary-successful.csv and logon-summary-failed.csv)

Only 3.9.0's ten columns are compared, taken by name: scanner writes Hayabusa 4.0's
First/Last Logon (Attempt) columns where 4.0 does, right after the count. Rows are compared as multisets: both tools sort by the count, most
first, but 3.9.0 leaves equal counts in its hash map's order. Rows of the events 4.0 adds
(Security 4778/4779, RemoteConnectionManager 1149, LocalSessionManager 25) are additions,
counted and listed apart. Every other difference is either listed below with its reason
and the event that shows it, or makes the script fail when agreement is under 0.99 either
way.
"""
import csv
import sys
from collections import Counter

ADDED_EVENTS = {"Sec 4778", "Sec 4779", "RDS-RCM 1149", "RDS-LSM 25"}

# Rows only scanner has, and why. Hayabusa 3.9.0 runs logon-summary through its channel
# filter with a synthetic rule: a file is read only when its FIRST record's channel is one
# of the logon channels. "Lateral Movement/ImpersonateUser-via local Pass The Hash Sysmon
# and Security.evtx" starts with a Sysmon record, so 3.9.0 skips the whole file, yet it
# holds Security 4624 record 321446 (2021-04-20 20:33:00.296, TargetUserName user03,
# LogonType 3, WorkstationName MSEDGEWIN10, IpAddress 127.0.0.1): 3.9.0's own timeline
# of the corpus reports it ("Pass the Hash Activity 2", RecordID 321446). scanner counts
# it: it is a logon in the log an analyst was given.
EXPLAINED_OURS = {
    ("1", "Sec 4624", "user03", "MSEDGEWIN10", "MSEDGEWIN10", "3 - Network", "-", "-",
     "MSEDGEWIN10", "127.0.0.1"): "file skipped by 3.9.0's first-record channel filter",
}
EXPLAINED_REF = {}


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def compare(name, ref, ours):
    (h1, r), (h2, o) = read(ref), read(ours)
    missing = [c for c in h1 if c not in h2]
    assert not missing, f"{name}: no column {missing} in {h2}"
    # 3.9.0's columns, in its order, from scanner's rows.
    o = [[x[h2.index(c)] for c in h1] for x in o]
    # 4.0 (its First/Last columns) writes the events it added; 3.9.0 does not.
    four = any(c.startswith("First ") for c in h1)
    ev = h1.index("Event")
    added = [] if four else [x for x in o if x[ev] in ADDED_EVENTS]
    o = [tuple(x) for x in o if four or x[ev] not in ADDED_EVENTS]
    rc, oc = Counter(tuple(x) for x in r), Counter(o)
    equal = sum((rc & oc).values())
    # The explained rows are keyed by 3.9.0's ten columns (4.0's First/Last columns left
    # out), so that they name the same rows in either reference.
    ten = [i for i, c in enumerate(h1) if not c.startswith(("First ", "Last "))]
    key = lambda x: tuple(x[i] for i in ten)
    bad = []
    explained = 0
    for x, n in (oc - rc).items():
        if key(x) in EXPLAINED_OURS:
            explained += n
        else:
            bad.append(f"only scanner: {x}")
    for x, n in (rc - oc).items():
        if key(x) in EXPLAINED_REF:
            explained += n
        else:
            bad.append(f"only Hayabusa: {x}")
    print(f"{name}: {equal} of {len(r)} rows equal ({len(o)} of scanner's rows compared; "
          f"{explained} differ as explained in .ci/logon_summary_compare.py; "
          f"{len(added)} rows of 4.0's added events{' (compared: 4.0 writes them)' if four else ''})")
    for b in bad:
        print(f"  {b}")
    unexplained_ref = sum(n for x, n in (rc - oc).items() if key(x) not in EXPLAINED_REF)
    unexplained_ours = sum(n for x, n in (oc - rc).items() if key(x) not in EXPLAINED_OURS)
    ok_ref = not r or (len(r) - unexplained_ref) / len(r) >= 0.99
    ok_ours = not o or (len(o) - unexplained_ours) / len(o) >= 0.99
    return ok_ref and ok_ours


ok = True
for which in ("successful", "failed"):
    f = f"logon-summary-{which}.csv"
    ok &= compare(f"logon-summary {which}", f"{sys.argv[1]}/{f}", f"{sys.argv[2]}/{f}")
sys.exit(0 if ok else "logon-summary: agreement under 0.99")
