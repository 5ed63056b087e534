#!/usr/bin/env python3
"""Validates an ATT&CK Navigator layer with MITRE's own reader (mitreattack-python's
navlayers, strict): every field must load, and what it loads back must hold the same
techniques, scores, comments and metadata.

usage: navigator_check.py LAYER_JSON
"""
import io
import json
import sys
from contextlib import redirect_stdout

from mitreattack.navlayers import Layer


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    said = io.StringIO()
    layer = Layer(strict=True)
    with redirect_stdout(said):
        layer.from_file(path)
    loaded = layer.to_dict()
    if loaded is None or said.getvalue().strip():
        print(f"{path}: the Navigator's reader refused it: {said.getvalue()}")
        sys.exit(1)
    key = lambda t: t["techniqueID"]
    want = sorted(raw["techniques"], key=key)
    got = sorted(loaded.get("techniques", []), key=key)
    fields = ["techniqueID", "score", "comment", "metadata"]
    differ = [
        (w["techniqueID"], f)
        for w, g in zip(want, got)
        for f in fields
        if w.get(f) != g.get(f)
    ]
    if len(want) != len(got) or differ:
        print(f"{path}: loaded back differently: {len(want)} vs {len(got)} techniques, {differ[:5]}")
        sys.exit(1)
    for k in ["name", "domain", "versions", "gradient", "sorting"]:
        if raw[k] != loaded.get(k):
            print(f"{path}: {k} loaded back as {loaded.get(k)!r}, was {raw[k]!r}")
            sys.exit(1)
    print(f"navigator check: {path} loads in mitreattack-python's navlayers (strict): "
          f"{len(got)} techniques, layer {loaded['versions']['layer']}")


if __name__ == "__main__":
    main()
