#!/usr/bin/env bash
# coverage on the attack corpus with hayabusa-rules against eid-metrics and the timeline
# (see docs/coverage.md).
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
