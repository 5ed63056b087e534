#!/usr/bin/env bash
# coverage on the attack corpus with hayabusa-rules against eid-metrics and the timeline
# and its rule counts against an independent rule index (see docs/coverage.md).
# usage: .ci/coverage.sh SCANNER_BIN SHARED_DIR WORK_DIR
set -euo pipefail
bin=$1 shared=$2 work=$3
dir="$work/coverage"
mkdir -p "$dir"
corpus="$shared/corpus/evtx-attack-samples"
rules="$shared/rules/hayabusa-rules"
"$bin" coverage -d "$corpus" -r "$rules" --json -q -C -o "$dir/coverage.jsonl"
"$bin" eid-metrics -d "$corpus" -c "$rules/config" -q -C -o "$dir/eid-metrics.csv"
"$bin" csv-timeline -d "$corpus" -r "$rules" -a -q -C -o "$dir/timeline.csv"
python3 .ci/coverage_check.py "$dir/coverage.jsonl" "$dir/eid-metrics.csv" "$rules/config" "$dir/timeline.csv"
# The rule counts against a rule index built from the rules' YAML (PyYAML, from PyPI),
# joined with eid-metrics' kinds; then the same with the built-in rules.
if python3 -m venv "$dir/venv"; then
  py=("$dir/venv/bin/python")
  "${py[@]}" -m pip install -q --disable-pip-version-check PyYAML==6.0.3
else
  echo "python3 -m venv failed: installing into $dir/site instead"
  python3 -m pip install -q --disable-pip-version-check --target "$dir/site" PyYAML==6.0.3
  py=(env "PYTHONPATH=$dir/site" python3)
fi
"${py[@]}" .ci/coverage_rules_check.py "$dir/coverage.jsonl" "$rules" "$rules/config" "$dir/eid-metrics.csv"
"$bin" coverage -d "$corpus" --builtin-rules --json -q -C -o "$dir/coverage-builtin.jsonl"
"${py[@]}" .ci/coverage_rules_check.py "$dir/coverage-builtin.jsonl" rules rules/config
