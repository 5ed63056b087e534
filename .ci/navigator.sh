#!/usr/bin/env bash
# The timeline's --attack-navigator layer for the attack corpus, loaded by MITRE's own
# reader (mitreattack-python's navlayers, from PyPI, strict). See docs/attack-navigator.md.
# usage: .ci/navigator.sh SCANNER_BIN SHARED_DIR WORK_DIR
set -euo pipefail
bin=$1 shared=$2 work=$3
dir="$work/navigator"
mkdir -p "$dir"
if python3 -m venv "$dir/venv"; then
  py=("$dir/venv/bin/python")
  "${py[@]}" -m pip install -q --disable-pip-version-check mitreattack-python==6.3.1
else
  echo "python3 -m venv failed: installing into $dir/site instead"
  python3 -m pip install -q --disable-pip-version-check --target "$dir/site" mitreattack-python==6.3.1
  py=(env "PYTHONPATH=$dir/site" python3)
fi
"$bin" csv-timeline -d "$shared/corpus/evtx-attack-samples" -r "$shared/rules/hayabusa-rules" \
  -q -C -o "$dir/timeline.csv" --attack-navigator "$dir/layer.json"
"${py[@]}" .ci/navigator_check.py "$dir/layer.json"
