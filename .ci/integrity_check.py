#!/usr/bin/env python3
"""Checks `scanner log-integrity` against python-evtx (an independent EVTX parser).

usage: integrity_check.py SCANNER_JSONL EVTX_DIR [TOLERANCE_SECONDS]

From each file's records as python-evtx reads them (record header id, SystemTime,
Channel, EventID), in record id order: record id gaps and repeats, a time going back by
more than the tolerance, logs cleared (Security 1102, System 104) and logging
stopped (Security 1100, System 6006). Compares the set of (file, finding, channel,
first id, last id) with scanner's JSON Lines output (structure findings aside: python-evtx
does not check them) and prints both sides of any difference; exits 1 then.
"""
import datetime
import json
import os
import re
import sys

import Evtx.Evtx as evtx

CHANNEL = re.compile(r"<Channel>([^<]*)</Channel>")
EVENT_ID = re.compile(r"<EventID[^>]*>(\d+)</EventID>")
TIME = re.compile(r'SystemTime="([^"]+)"')


def when(s):
    """Seconds since the epoch of a SystemTime (python-evtx writes `2019-03-19
    23:47:14.870588+00:00` or `...Z`)."""
    s = s.strip().replace(" ", "T")
    s = re.sub(r"(Z|[+-]\d\d:\d\d)$", "", s)
    whole, _, frac = s.partition(".")
    t = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + (float("0." + frac) if frac else 0.0)


def findings(path, tolerance):
    """The record findings of one file, from its records in record header id order
    (the file's numbering; EventRecordID keeps a saved selection's source numbering)."""
    recs = []
    with evtx.Evtx(path) as log:
        for r in log.records():
            xml = r.xml()
            ch = CHANNEL.search(xml)
            eid = EVENT_ID.search(xml)
            t = TIME.search(xml)
            recs.append((r.record_num(), when(t.group(1)) if t else None,
                         int(eid.group(1)) if eid else None, ch.group(1) if ch else ""))
    recs.sort(key=lambda x: (x[0], x[1] or 0))
    out = set()
    i = 0
    while i < len(recs):
        rid, t, eid, ch = recs[i]
        low = ch.lower()
        same = 1
        while i + same < len(recs) and recs[i + same][0] == rid:
            same += 1
        if same > 1:
            out.add(("record id repeated", recs[i + same - 1][3], rid, rid))
        if i > 0:
            pid, pt, _, _ = recs[i - 1]
            if rid > pid + 1:
                out.add(("record id gap", ch, pid, rid))
            if pt is not None and t is not None and pt - t > tolerance:
                out.add(("time backwards", ch, pid, rid))
        if (low, eid) in (("security", 1102), ("system", 104)):
            out.add(("log cleared", ch, rid, rid))
        nxt = recs[i + same] if i + same < len(recs) else None
        if (low, eid) == ("security", 1100):
            out.add(("logging stopped", nxt[3] if nxt else ch, rid, nxt[0] if nxt else rid))
        if (low, eid) == ("system", 6006):
            start = next((x for x in recs[i + same:] if x[2] == 6005), None)
            out.add(("logging stopped", start[3] if start else ch, rid, start[0] if start else rid))
        i += same
    return out


def main():
    jsonl, root = sys.argv[1], sys.argv[2]
    tolerance = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    structural = {
        "file header checksum", "dirty file header", "file header chunk count",
        "file header next record id", "chunk header checksum", "chunk records checksum",
        "chunk header unreadable", "records in slack space",
    }
    scanner = set()
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            if o["Finding"] in structural:
                continue
            scanner.add((os.path.relpath(o["File"], root), o["Finding"], o["Channel"],
                         o["FirstRecordID"], o["LastRecordID"]))
    independent = set()
    for dirpath, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(".evtx"):
                p = os.path.join(dirpath, n)
                for kind, ch, a, b in findings(p, tolerance):
                    independent.add((os.path.relpath(p, root), kind, ch, a, b))
    only_s, only_i = scanner - independent, independent - scanner
    for x in sorted(only_s, key=str):
        print("scanner only:", x)
    for x in sorted(only_i, key=str):
        print("python-evtx only:", x)
    print(f"integrity check: {len(scanner)} record findings from scanner, "
          f"{len(independent)} from python-evtx, {len(only_s) + len(only_i)} differ")
    sys.exit(1 if only_s or only_i else 0)


if __name__ == "__main__":
    main()
