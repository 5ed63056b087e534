#!/usr/bin/env python3
"""Timesketch's own importer must accept scanner's timesketch-* timelines.

Usage: timesketch_check.py FILE...   (each FILE a .csv or .jsonl timeline)

Each file goes through timesketch.lib.utils.read_and_validate_csv or
read_and_validate_jsonl, the functions Timesketch's server runs on an upload.
A file passes when the importer raises nothing, yields one event per row of the
file (the CSV reader silently drops rows whose datetime it cannot parse: none
may be dropped), and every event has datetime, timestamp_desc and message and a
datetime that parses.
"""
import csv
import io
import sys

from dateutil import parser
from timesketch.lib import utils

REQUIRED = ("datetime", "timestamp_desc", "message")


def rows_in(path):
    with open(path, encoding="utf-8", newline="") as f:
        if path.endswith(".csv"):
            return sum(1 for _ in csv.DictReader(f))
        return sum(1 for line in f if line.strip())


def events(path):
    if path.endswith(".csv"):
        with open(path, encoding="utf-8") as f:
            return list(utils.read_and_validate_csv(f))
    with open(path, encoding="utf-8") as f:
        return list(utils.read_and_validate_jsonl(f))


def check(path):
    expected = rows_in(path)
    got = events(path)
    if expected == 0:
        return f"{path}: no rows to import"
    if len(got) != expected:
        return f"{path}: Timesketch imported {len(got)} of {expected} rows"
    for n, e in enumerate(got, 1):
        missing = [k for k in REQUIRED if k not in e or e[k] in ("", None)]
        if missing:
            return f"{path}: event {n} lacks {', '.join(missing)}"
        parser.parse(str(e["datetime"]))
        if not isinstance(e.get("timestamp"), int):
            return f"{path}: event {n} has no integer timestamp"
    print(f"{path}: Timesketch accepted {len(got)} events")
    return None


def check_or_error(path):
    try:
        return check(path)
    except Exception as e:  # the importer's own errors: RuntimeError, DataIngestionError, ...
        return f"{path}: Timesketch refused it: {type(e).__name__}: {e}"


def main(paths):
    failures = [m for m in map(check_or_error, paths) if m]
    for m in failures:
        print(m, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
