#!/usr/bin/env bash
# Issue 33: the attack corpus zipped gives the timeline of the same files unpacked, byte
# for byte, EvtxFile included (the zip scanned as attack.zip, the files from a folder of
# that name), and the summary names what was not read; the two wall times are printed.
#   .ci/archives_compare.sh BIN SHARED WORK
set -euo pipefail
bin=$(realpath "$1"); shared=$(realpath "$2"); work=$3
d="$work/archives"
mkdir -p "$d/u/attack.zip" "$d/z"
cp -r "$shared/corpus/evtx-attack-samples" "$d/u/attack.zip/"
(cd "$d/u/attack.zip" && python3 - "$d/z/attack.zip" <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED)
for root, dirs, files in os.walk("evtx-attack-samples"):
    dirs.sort()
    for f in sorted(files):
        z.write(os.path.join(root, f))
z.close()
PY
)
rules="$shared/rules/hayabusa-rules"
run() { # DIR FLAG OUT
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$1" && "$bin" csv-timeline "$2" attack.zip -r "$rules" -p verbose -U -o "$3" -C 2>"$3.err" >/dev/null)
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.2f}')"
}
tu=$(run "$d/u" -d "$d/unpacked.csv")
tz=$(run "$d/z" -f "$d/zipped.csv")
cmp "$d/unpacked.csv" "$d/zipped.csv"
grep -q "not read: 2 files" "$d/zipped.csv.err" ||
  { echo "the zip's README and licence were not named as not read"; cat "$d/zipped.csv.err"; exit 1; }
echo "attack corpus zipped: $(($(wc -l <"$d/zipped.csv") - 1)) detections, the unpacked timeline byte for byte; wall ${tz} s zipped, ${tu} s unpacked"
rm -rf "$d"
