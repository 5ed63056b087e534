#!/usr/bin/env bash
# contrib/openrelik's worker tested for real (see openrelik_test.py): Debian's
# redis-server, the worker's Python packages in a venv of the scratch folder.
#   .ci/openrelik_test.sh SCANNER [CORPUS RULES]
set -euo pipefail
cd "$(dirname "$0")/.."
scanner=$1
shift
start=$(date +%s)
if ! command -v redis-server >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) ||
    { echo "redis-server could not be installed"; exit 1; }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check -r contrib/openrelik/requirements.txt ||
  { echo "pip could not install the worker's packages"; exit 1; }
"$work/venv/bin/python" .ci/openrelik_test.py "$scanner" "$work/run" "$@"
echo "openrelik: stage took $(( $(date +%s) - start )) s"
