"""Compares an output of scanner.exe (run under Wine) with the Linux build's, paths aside.

    python compare.py LINUX_FILE WINDOWS_FILE [--map WINDOWS_PREFIX=LINUX_PREFIX ...]

A cell (CSV) or string (JSON Lines) that is a path, or paths joined by " ¦ ", is compared
in one form: a drive letter dropped, backslashes made slashes, repeated slashes made one;
a --map prefix (after that) is replaced, case aside (Windows names are). Everything else
must be equal, byte for byte, row for row. Prints the rows compared.
"""

import csv
import json
import re
import sys

DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def path_form(s, maps):
    parts = []
    for p in s.split(" ¦ "):
        if DRIVE.match(p):
            p = p[2:].replace("\\", "/")
        p = re.sub(r"/{2,}", "/", p) if p.startswith("/") else p
        for win, lin in maps:
            if p.lower().startswith(win.lower()):
                p = lin + p[len(win):]
        parts.append(p)
    return " ¦ ".join(parts)


def norm_json(v, maps):
    if isinstance(v, str):
        return path_form(v, maps)
    if isinstance(v, list):
        return [norm_json(x, maps) for x in v]
    if isinstance(v, dict):
        return {k: norm_json(x, maps) for k, x in v.items()}
    return v


def load(path, maps):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".jsonl"):
        return [norm_json(json.loads(l), maps) for l in data.decode("utf-8").splitlines() if l.strip()], data
    text = data.decode("utf-8-sig")
    return [[path_form(c, maps) for c in row] for row in csv.reader(text.splitlines())], data


def main():
    args = sys.argv[1:]
    maps = []
    while "--map" in args:
        i = args.index("--map")
        win, lin = args[i + 1].split("=", 1)
        maps.append((path_form(win, []), lin))
        del args[i : i + 2]
    linux, windows = args
    a, raw_a = load(linux, maps)
    b, raw_b = load(windows, maps)
    if (b"\r\n" in raw_a) != (b"\r\n" in raw_b):
        sys.exit(f"FAIL: {windows}: line endings differ from {linux}")
    if len(a) != len(b):
        sys.exit(f"FAIL: {windows}: {len(b)} rows, {linux}: {len(a)}")
    for n, (x, y) in enumerate(zip(a, b)):
        if x != y:
            sys.exit(f"FAIL: {windows}: row {n + 1} differs\n  linux:   {x}\n  windows: {y}")
    if not a:
        sys.exit(f"FAIL: {linux}: no rows to compare")
    print(f"{len(a)} rows equal (paths aside): {windows.rsplit('/', 1)[-1]}")


if __name__ == "__main__":
    main()
