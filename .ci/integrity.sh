#!/usr/bin/env bash
# log-integrity on the attack corpus against python-evtx (an independent parser, from
# PyPI): the record findings must be the same (see docs/log-integrity.md).
# usage: .ci/integrity.sh SCANNER_BIN SHARED_DIR WORK_DIR
set -euo pipefail
bin=$1 shared=$2 work=$3
dir="$work/integrity"
mkdir -p "$dir"
if python3 -m venv "$dir/venv"; then
  py=("$dir/venv/bin/python")
  "${py[@]}" -m pip install -q --disable-pip-version-check python-evtx==0.8.1
else
  echo "python3 -m venv failed: installing into $dir/site instead"
  python3 -m pip install -q --disable-pip-version-check --target "$dir/site" python-evtx==0.8.1
  py=(env "PYTHONPATH=$dir/site" python3)
fi
corpus="$shared/corpus/evtx-attack-samples"
set +e
"$bin" log-integrity -d "$corpus" --json -U -C -o "$dir/attack.jsonl" 2>"$dir/stderr"
rc=$?
set -e
cat "$dir/stderr"
[ "$rc" -eq 0 ] || { echo "log-integrity exited $rc on the attack corpus"; exit 1; }
"${py[@]}" .ci/integrity_check.py "$dir/attack.jsonl" "$corpus"
