#!/usr/bin/env python3
"""Turn scanner's JSON Lines timeline into Elasticsearch/OpenSearch _bulk lines.

Usage: scanner json-timeline -L -O ... -o timeline.jsonl
       python3 bulk.py [--index NAME] [timeline.jsonl ...] > bulk.ndjson
       curl -H 'Content-Type: application/x-ndjson' --data-binary @bulk.ndjson URL/_bulk

Each detection becomes an action line and a document line. Details,
ExtraFieldInfo and AllFieldInfo, objects in the JSON timeline whose keys and
value types change from rule to rule, are written as one text value
("Key: value ¦ Key: value", as in the CSV timeline) so that no two rules can
give one field two types (the index template maps them as text).
Standard library only.
"""
import json
import sys

FIELD_OBJECTS = ("Details", "ExtraFieldInfo", "AllFieldInfo")


def as_text(value):
    if isinstance(value, dict):
        # A value without a label (Details' bare `%Details%`) is under the key "".
        return " ¦ ".join(f"{k}: {as_text(v)}" if k else as_text(v) for k, v in value.items())
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ¦ ".join(as_text(v) for v in value)
    return "" if value is None else str(value)


def bulk_lines(lines, index):
    action = json.dumps({"index": {"_index": index}})
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as e:
            raise SystemExit(f"line {number}: not JSON ({e})")
        for field in FIELD_OBJECTS:
            if field in doc:
                doc[field] = as_text(doc[field])
        yield action
        yield json.dumps(doc, ensure_ascii=False)


def main(argv):
    index = "scanner-timeline"
    if len(argv) >= 2 and argv[0] == "--index":
        index, argv = argv[1], argv[2:]
    out = sys.stdout
    if not argv:
        argv = ["-"]
    for path in argv:
        f = sys.stdin if path == "-" else open(path, encoding="utf-8")
        with f:
            for line in bulk_lines(f, index):
                out.write(line + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
