#!/usr/bin/env python3
"""Checks the rule counts of `scanner coverage` against a rule index built here.

usage: coverage_rules_check.py COVERAGE_JSONL RULES_DIR [CONFIG_DIR] [EID_METRICS_CSV]

The index is built from the rules' YAML (PyYAML), not by scanner: each detection rule's
Channel and EventID constraint from its detection (a selection's exact `Channel` and
`EventID` values, ANDed across a selection's keys and across `and`, ORed across a
list, `or`, `1 of`; `not`, any other field and a key with a modifier constrain
nothing; a Channel with a wildcard matches the channels its pattern does). A rule with no Channel constraint is
channel-less. Rules are those scanner loads by default: not `deprecated` or
`unsupported`, not listed in CONFIG_DIR's exclude_rules.txt or noisy_rules.txt, no
`|expand` of a placeholder without values (CONFIG_DIR/expand/NAME.txt), not
correlations.

For every coverage row of a kind in the evidence (`read`, `channel-less rules only`,
`unread`), the rules with that Channel (case aside) whose EventIDs hold the row's
EventID (or are unconstrained) must be its `Rules`, and the channel-less rules whose
EventIDs hold it its `ChannelLessRules`. With EID_METRICS_CSV (eid-metrics' counts of
the same evidence), every (Channel, EventID) eid-metrics counts must be a coverage row:
the join of the independent event counts with the independent index. Prints the
differences (with a rule for each) and exits 1 on any.
"""
import csv
import fnmatch
import json
import os
import re
import sys

import yaml

ANY = None  # an unconstrained dimension


def and_dim(a, b):
    if a is ANY:
        return b
    if b is ANY:
        return a
    return a & b


def or_dim(items):
    out = set()
    for i in items:
        if i is ANY:
            return ANY
        out |= i
    return frozenset(out)


def exact(values, event_id):
    """The exact values of a field's value(s), or ANY."""
    vs = values if isinstance(values, list) else [values]
    out = set()
    for v in vs:
        if v is None or isinstance(v, (dict, list)):
            return ANY
        if isinstance(v, bool):
            return ANY
        out.add(str(v) if event_id else str(v).lower())
    return frozenset(out)


def of_selection(sel):
    if isinstance(sel, dict):
        ch, eid = ANY, ANY
        for key, value in sel.items():
            if key == "Channel":
                ch = and_dim(ch, exact(value, False))
            elif key == "EventID":
                eid = and_dim(eid, exact(value, True))
        return ch, eid
    if isinstance(sel, list) and sel and all(isinstance(i, dict) for i in sel):
        parts = [of_selection(i) for i in sel]
        return or_dim(p[0] for p in parts), or_dim(p[1] for p in parts)
    return ANY, ANY


TOKEN = re.compile(r"\(|\)|(?:1|all|any) of [^\s()]+|[^\s()]+")


def of_condition(cond, sels):
    """The constraint of a condition text over selections `sels` (name -> constraint)."""
    tokens = TOKEN.findall(cond.split("|")[0])
    pos = 0

    def names(pattern):
        if pattern == "them":
            return [n for n in sels if not n.startswith("_")]
        return [n for n in sels if fnmatch.fnmatchcase(n, pattern)]

    def primary():
        nonlocal pos
        t = tokens[pos]
        pos += 1
        if t == "(":
            c = expr()
            pos += 1  # ")"
            return c
        if t.lower() == "not":
            primary()
            return ANY, ANY
        m = re.fullmatch(r"(1|all|any) of ([^\s()]+)", t)
        if m:
            parts = [sels[n] for n in names(m.group(2))]
            if m.group(1) == "all":
                c = (ANY, ANY)
                for p in parts:
                    c = (and_dim(c[0], p[0]), and_dim(c[1], p[1]))
                return c
            return or_dim(p[0] for p in parts), or_dim(p[1] for p in parts)
        return sels.get(t, (ANY, ANY))

    def conj():
        nonlocal pos
        c = primary()
        while pos < len(tokens) and tokens[pos].lower() == "and":
            pos += 1
            d = primary()
            c = (and_dim(c[0], d[0]), and_dim(c[1], d[1]))
        return c

    def expr():
        nonlocal pos
        parts = [conj()]
        while pos < len(tokens) and tokens[pos].lower() == "or":
            pos += 1
            parts.append(conj())
        return or_dim(p[0] for p in parts), or_dim(p[1] for p in parts)

    return expr()


def in_channels(ch, patterns):
    """Whether channel `ch` (lowercase) is one of `patterns` (Sigma wildcards `*`, `?`)."""
    return any(fnmatch.fnmatchcase(ch, p.replace("[", "[[]")) for p in patterns)


def ids(path):
    if not path or not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {line.split("#")[0].strip() for line in f if line.split("#")[0].strip()}


def placeholders(config):
    """The `expand` placeholders with values (CONFIG_DIR/expand/NAME.txt)."""
    d = f"{config}/expand"
    if not os.path.isdir(d):
        return set()
    out = set()
    for name in os.listdir(d):
        if name.endswith(".txt"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                if any(line.strip() for line in f):
                    out.add(name[:-4])
    return out


def unexpandable(det, have):
    """Whether a `|expand` value names a placeholder without values (the rule is off)."""
    for sel in det.values():
        for m in sel if isinstance(sel, list) else [sel]:
            if not isinstance(m, dict):
                continue
            for key, value in m.items():
                if "|expand" in str(key):
                    for v in value if isinstance(value, list) else [value]:
                        if str(v).strip("%") not in have:
                            return True
    return False


def index(rules_dir, config):
    skip = ids(f"{config}/exclude_rules.txt") | ids(f"{config}/noisy_rules.txt")
    have = placeholders(config)
    out = []
    for root, _, files in os.walk(rules_dir):
        if os.sep + "config" in root[len(rules_dir):] or root.endswith(os.sep + "config"):
            continue
        for name in sorted(files):
            if not name.endswith((".yml", ".yaml")):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                try:
                    docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
                except yaml.YAMLError as e:
                    print(f"{path}: not YAML PyYAML reads ({str(e).splitlines()[0]}); left out")
                    continue
            for doc in docs:
                det = doc.get("detection")
                if not isinstance(det, dict) or "correlation" in doc:
                    continue
                if str(doc.get("status", "")).lower() in ("deprecated", "unsupported"):
                    continue
                if str(doc.get("id", "")) in skip:
                    continue
                if unexpandable(det, have):
                    continue
                sels = {k: of_selection(v) for k, v in det.items() if k not in ("condition", "timeframe")}
                cond = det.get("condition")
                if cond is None and len(sels) == 1:
                    # No condition: the one selection (as scanner reads such a rule).
                    cond = next(iter(sels))
                conds = cond if isinstance(cond, list) else [cond]
                parts = [of_condition(str(c), sels) for c in conds if c is not None]
                ch = or_dim(p[0] for p in parts) if parts else ANY
                eid = or_dim(p[1] for p in parts) if parts else ANY
                out.append((path, doc.get("title", ""), ch, eid))
    return out


def main():
    jsonl, rules_dir = sys.argv[1:3]
    config = sys.argv[3] if len(sys.argv) > 3 else f"{rules_dir}/config"
    eid_csv = sys.argv[4] if len(sys.argv) > 4 else None
    rules = index(rules_dir, config)
    rows = [json.loads(line) for line in open(jsonl, encoding="utf-8")]
    kinds = [r for r in rows if r["Status"] in ("read", "channel-less rules only", "unread")]
    differ = 0
    for r in kinds:
        ch = (r["Channel"] or "").lower()
        eid = r["EventID"] or ""

        def reads(rule):
            return rule[3] is ANY or eid in rule[3]

        named = [x for x in rules if x[2] is not ANY and in_channels(ch, x[2]) and reads(x)]
        free = [x for x in rules if x[2] is ANY and reads(x)]
        for what, want, got in (("Rules", named, r["Rules"]), ("ChannelLessRules", free, r["ChannelLessRules"])):
            if len(want) != got:
                differ += 1
                example = want[0][0] if want else "none"
                print(f"({r['Channel']}, {r['Provider']}, {eid}) {what}: coverage {got}, index {len(want)} (e.g. {example})")
    joined = unjoined = 0
    if eid_csv:
        # eid-metrics' kinds, joined with the index: the channel's full name from its
        # abbreviation, its rules counted here, against coverage's row of that kind.
        full = {}
        with open(f"{config}/channel_abbreviations.txt", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                full[row["Abbreviation"].lower()] = row["Channel"].lower()
        by_kind = {}
        for r in kinds:
            by_kind.setdefault(((r["Channel"] or "").lower(), r["EventID"] or ""), []).append(r)
        with open(eid_csv, encoding="utf-8") as f:
            for row in csv.DictReader(f):
                ch = full.get(row["Channel"].lower())
                eid = row["ID"]
                if ch is None or (ch, eid) not in by_kind:
                    unjoined += 1
                    continue
                joined += 1
                named = sum(1 for x in rules if x[2] is not ANY and in_channels(ch, x[2]) and (x[3] is ANY or eid in x[3]))
                for r in by_kind[(ch, eid)]:
                    if r["Rules"] != named:
                        differ += 1
                        print(f"eid-metrics ({row['Channel']}, {eid}): index {named} rules, coverage {r['Rules']}")
    print(
        f"coverage rules check: {len(rules)} rules indexed from {rules_dir} "
        f"({sum(1 for x in rules if x[2] is ANY)} channel-less); {len(kinds)} kinds compared"
        f"{f', {joined} eid-metrics kinds joined ({unjoined} not: no abbreviation to undo)' if eid_csv else ''}; "
        f"{differ} differ"
    )
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
