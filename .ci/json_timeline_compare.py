#!/usr/bin/env python3
"""Compares scanner's JSON timeline with Hayabusa 4.0's, field for field, types included.

usage: json_timeline_compare.py REFERENCE.jsonl CANDIDATE [CANDIDATE...] [--show N]

Each file is JSON Lines or a stream of (pretty-printed) JSON objects, as `json-timeline`
writes them with and without -L. A detection is keyed as ../shared/tools/parity.py keys a
CSV row: (EvtxFile relative to the scanned folder, RecordID, RuleID). For the detections
both files have, every top-level key is compared, and inside Details, ExtraFieldInfo and
AllFieldInfo every key; a value equals only a value of the same JSON type (1 is not
true, "1" is not 1).

Each difference is put in one of the kinds below, which docs/parity.md ("JSON timeline")
shows with their events; any other kind is unexplained:

- quote: Hayabusa appends a `"` to a value that begins with a quote and does not end
  with one (its `close_unterminated_quote`), so it writes a text the event does not hold.
- extra-listed: a field in Hayabusa's ExtraFieldInfo, absent from scanner's, whose value
  both tools' Details show, identical (a multi-line SPN list; an empty value):
  ExtraFieldInfo is the fields Details does not show, as Hayabusa itself applies it to
  other multi-line values (a 4104 ScriptBlockText) and, in its CSV, to empty ones.

Both are Hayabusa's errors: scanner writes what the event holds, and leaves out of
ExtraFieldInfo every value Details shows.

Prints, per candidate: the detections of each side and both, the objects equal (and
those equal but for Hayabusa's errors), the fields equal, and the differences by kind
(with an example each). Exit status 1 when a candidate
has an unexplained difference or finds under 99% of the reference's detections.
"""
import argparse
import collections
import json
import os
import sys

WHERE = ("Details", "ExtraFieldInfo", "AllFieldInfo")


def objects(path):
    """The JSON objects of a file, one a line or as a stream of any layout."""
    text = open(path, encoding="utf-8").read()
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        o, i = dec.raw_decode(text, i)
        if not isinstance(o, dict):
            sys.exit(f"{path}: a JSON {type(o).__name__} where an object was expected")
        out.append(o)


def keyed(path):
    rows = objects(path)
    files = [r.get("EvtxFile", "").replace("\\", "/") for r in rows]
    dirs = [os.path.dirname(f) for f in files if f]
    root = os.path.commonpath(dirs) if dirs else ""
    out = {}
    for r, f in zip(rows, files):
        rel = os.path.relpath(f, root) if root else f
        out[(rel, r.get("RecordID"), r.get("RuleID"))] = dict(r, EvtxFile=rel)
    return out


def same(a, b):
    """JSON equality with types: Python's True == 1 and 1 == 1.0 do not count."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def kind(col, key, ref, ours, ref_row, our_row):
    """Which known difference a field is, or None."""
    if isinstance(ref, str) and isinstance(ours, str):
        # The quote Hayabusa appends: the value it was given is `ref` without it.
        quoted = len(ref) > 1 and ref[0] == '"' and ref[-1] == '"' and ref[-2] != '"'
        if quoted and ours == ref[:-1]:
            return "quote"
    if col != "ExtraFieldInfo":
        return None
    details = [v for v in our_row.get("Details", {}).values() if isinstance(v, str)]
    if ours is MISSING and isinstance(ref, str):
        ref_details = [v for v in ref_row.get("Details", {}).values() if isinstance(v, str)]
        if ref in details and ref in ref_details:
            return "extra-listed"
    return None


MISSING = object()

# The kinds that are Hayabusa's errors.
HAYABUSA_ERRORS = {"quote", "extra-listed"}


def compare(ref, cand):
    both = [k for k in ref if k in cand]
    fields = equal_fields = equal_objects = but_for_errors = 0
    kinds = collections.Counter()
    example = {}
    for k in both:
        a, b = ref[k], cand[k]
        whole = True
        seen = set()
        for col in list(a) + [c for c in b if c not in a]:
            x, y = a.get(col, MISSING), b.get(col, MISSING)
            if col in WHERE and isinstance(x, dict) and isinstance(y, dict):
                pairs = [(col, f, x.get(f, MISSING), y.get(f, MISSING))
                         for f in list(x) + [f for f in y if f not in x]]
            else:
                pairs = [(col, None, x, y)]
            for c, f, u, v in pairs:
                fields += 1
                if u is not MISSING and v is not MISSING and same(u, v):
                    equal_fields += 1
                    continue
                whole = False
                why = kind(c, f, u, v, a, b) or "unexplained"
                seen.add(why)
                name = f"{why}: {c}" + (f".{f}" if f is not None else "")
                kinds[name] += 1
                example.setdefault(name, (k, u, v))
        equal_objects += whole
        but_for_errors += seen <= HAYABUSA_ERRORS
    return both, fields, equal_fields, (equal_objects, but_for_errors), kinds, example


def shown(v):
    return "(absent)" if v is MISSING else json.dumps(v, ensure_ascii=False)[:160]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reference")
    ap.add_argument("candidates", nargs="+")
    ap.add_argument("--show", type=int, default=40, help="difference kinds to list")
    a = ap.parse_args()
    ref = keyed(a.reference)
    failed = False
    for path in a.candidates:
        cand = keyed(path)
        both, fields, eq_fields, (eq_objects, eq_but), kinds, example = compare(ref, cand)
        unexplained = sum(n for k, n in kinds.items() if k.startswith("unexplained"))
        by_kind = collections.Counter()
        for k, n in kinds.items():
            by_kind[k.split(":")[0]] += n
        print(f"{os.path.basename(path)}: reference {len(ref)}, scanner {len(cand)}, both {len(both)}")
        print(f"  objects equal: {eq_objects} of {len(both)} ({eq_objects / max(len(both), 1):.4f}); "
              f"but for Hayabusa's errors: {eq_but} ({eq_but / max(len(both), 1):.4f})")
        print(f"  fields equal: {eq_fields} of {fields} ({eq_fields / max(fields, 1):.4f})")
        print("  differences by kind: " + (", ".join(f"{k} {n}" for k, n in by_kind.most_common()) or "none"))
        for name, n in kinds.most_common(a.show):
            k, u, v = example[name]
            print(f"    {n:5} {name}  e.g. {k[0]} record {k[1]} rule {k[2]}")
            print(f"          Hayabusa {shown(u)}")
            print(f"          scanner  {shown(v)}")
        found = len(both) / max(len(ref), 1)
        if unexplained or found < 0.99:
            failed = True
        print(f"json parity: found={found:.4f} objects={eq_objects / max(len(both), 1):.4f} "
              f"fields={eq_fields / max(fields, 1):.4f} unexplained={unexplained}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
