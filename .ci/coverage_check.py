#!/usr/bin/env python3
"""Checks `scanner coverage` against an independent count: eid-metrics.

usage: coverage_check.py COVERAGE_JSONL EID_METRICS_CSV CONFIG_DIR TIMELINE_CSV

The events of each (Channel, EventID) kind, summed over providers, must be the counts
eid-metrics gives (its Channel abbreviated as CONFIG_DIR's channel_abbreviations.txt
says, else with generic_abbreviations.txt's replacements: the config the eid-metrics
run read; channels compared without case, as Windows names them), and every kind
eid-metrics counts must be there; the detections of all kinds add up to the rows of
TIMELINE_CSV (csv-timeline -a with the same rules; the corpus gives no correlation
rows). Prints the
differences; exits 1 on any.
"""
import collections
import csv
import json
import sys


def main():
    jsonl, eid_csv, config, timeline = sys.argv[1:5]
    with open(f"{config}/channel_abbreviations.txt", encoding="utf-8") as f:
        channels = {row["Channel"]: row["Abbreviation"] for row in csv.DictReader(f)}
    with open(f"{config}/generic_abbreviations.txt", encoding="utf-8") as f:
        generic = [(r[0], r[1]) for r in csv.reader(f) if len(r) >= 2][1:]

    def abbrev(ch):
        if ch in channels:
            return channels[ch]
        for long, short in generic:
            ch = ch.replace(long, short)
        return ch

    coverage = collections.Counter()
    kinds = collections.Counter()
    detections = 0
    with open(jsonl, encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            kinds[o["Status"]] += 1
            detections += o["Detections"] or 0
            if o["Events"] is None:
                continue
            ch = o["Channel"] or ""
            coverage[(abbrev(ch).lower(), o["EventID"] or "")] += o["Events"]
    metrics = collections.Counter()
    with open(eid_csv, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            metrics[(row["Channel"].lower(), row["ID"])] += int(row["Total"].replace(",", ""))
    differ = 0
    for k in sorted(set(coverage) | set(metrics)):
        if coverage[k] != metrics[k]:
            differ += 1
            print(f"{k}: coverage {coverage[k]}, eid-metrics {metrics[k]}")
    with open(timeline, encoding="utf-8", newline="") as f:
        rows = sum(1 for _ in csv.DictReader(f))
    if rows != detections:
        differ += 1
        print(f"detections: coverage {detections}, timeline rows {rows}")
    print(f"coverage check: {detections} detections, {rows} timeline rows; {len(metrics)} (Channel, EventID) kinds in eid-metrics, "
          f"{sum(metrics.values())} events; rows by status {dict(sorted(kinds.items()))}; "
          f"{differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
