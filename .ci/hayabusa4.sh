#!/usr/bin/env bash
# Hayabusa 4.0.0 as the reference: its command lines (../shared/reference/README.md,
# "Hayabusa 4.0.0"), run with scanner in its place from a folder holding its rules/, and
# every output compared with 4.0's; then -G with a real GeoLite2 City database.
#
# usage: .ci/hayabusa4.sh SCANNER SHARED WORK
set -euo pipefail
scanner="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" shared="$(cd "$2" && pwd)" work=$3
here="$(cd "$(dirname "$0")" && pwd)"
ref="$(cd "$shared/reference/hayabusa-4.0.0" && pwd)"
corpus="$(cd "$shared/corpus/evtx-attack-samples" && pwd)"
start=$(date +%s)
mkdir -p "$work"
ln -sfn "$(cd "$shared/rules/hayabusa-rules" && pwd)" "$work/rules"
cd "$work"

echo "-- dfir-timeline -t csv and -t jsonl (4.0's command lines: -w, -s, -N)"
"$scanner" dfir-timeline -d "$corpus" -o evtx-attack-samples.csv -w -p verbose -U -q -C -s -N
"$scanner" dfir-timeline -d "$corpus" -t jsonl -o evtx-attack-samples.jsonl -w -p verbose -U -q -C -s -N
python3 "$here/parity_hayabusa4.py" "$shared/tools/parity.py" "$ref/evtx-attack-samples.csv" \
  evtx-attack-samples.csv "$here/../docs/parity-explained.csv" "${PARITY_MIN:-0.999}"
python3 "$here/json_timeline_compare.py" "$ref/evtx-attack-samples.jsonl" \
  evtx-attack-samples.jsonl evtx-attack-samples.jsonl --show 3

echo "-- the analysis commands (4.0's command lines)"
"$scanner" eid-metrics -d "$corpus" -o eid-metrics.csv -q -C -Q
"$scanner" log-metrics -d "$corpus" -o log-metrics.csv -U -q -C -Q
"$scanner" computer-metrics -d "$corpus" -o computer-metrics.csv -q -C -Q
"$scanner" logon-summary -d "$corpus" -o logon-summary -U -q -C -Q
"$scanner" extract-base64 -d "$corpus" -o extract-base64.csv -U -q -C -Q
"$scanner" pivot-keywords-list -d "$corpus" -o pk -w -q -C -Q
"$scanner" search -d "$corpus" -k mimikatz -i -o search-mimikatz.csv -U -q -C -Q
"$scanner" search -d "$corpus" -r 'psexe[cs]' -o search-regex.csv -U -q -C -Q
"$scanner" search -d "$corpus" -k lsass -k procdump -a -i -F 'EventID:1' -o search-and-filter.csv -U -q -C -Q
"$scanner" search -d "$corpus" -k whoami -L -o search-whoami.jsonl -U -q -C -Q
python3 "$here/metrics_compare.py" "$ref/commands" .
python3 "$here/logon_summary_compare.py" "$ref/commands" .
python3 "$here/extract_base64_compare.py" "$ref/commands/extract-base64.csv" extract-base64.csv
python3 "$here/search_compare.py" "$ref/commands" .

echo "-- -G with a real GeoLite2 City database (PyPI maxminddb-geolite2 2018.703: GeoLite2 data"
echo "   created by MaxMind, CC BY-SA; downloaded here, never committed)"
if python3 -m pip install -q --disable-pip-version-check --no-deps --target geolite2-pkg \
    maxminddb-geolite2==2018.703; then
  mkdir -p geoip
  city=$(find geolite2-pkg -name GeoLite2-City.mmdb | head -1)
  cp "$city" geoip/GeoLite2-City.mmdb
  # The package ships the City database only: it stands in for the Country one (its
  # records hold the country) and the ASN one (no organisation: ASN cells are "-").
  ln -sf GeoLite2-City.mmdb geoip/GeoLite2-Country.mmdb
  ln -sf GeoLite2-City.mmdb geoip/GeoLite2-ASN.mmdb
  "$scanner" dfir-timeline -d "$corpus" -o geoip.csv -w -p verbose -U -q -C -s -N -G geoip
  python3 - geoip.csv evtx-attack-samples.csv <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
plain = list(csv.DictReader(open(sys.argv[2], encoding="utf-8")))
geo = ["SrcASN", "SrcCountry", "SrcCity", "TgtASN", "TgtCountry", "TgtCity"]
assert list(rows[0].keys())[-6:] == geo, list(rows[0].keys())
assert [{k: v for k, v in r.items() if k not in geo} for r in rows] == plain, "-G changed other cells"
def row(file, record):
    return [r for r in rows if r["EvtxFile"].endswith(file) and r["RecordID"] == record][0]
checks = [
    ("sysmon_3_10_Invoke-Mimikatz_hosted_Github.evtx", "10272",
     ["Private", "-", "-", "-", "Netherlands", "Amsterdam"]),
    ("exec_persist_rundll32_mshta_scheduledtask_sysmon_1_3_11.evtx", "4128",
     ["Private", "-", "-", "-", "United States", "Houston"]),
]
for file, record, want in checks:
    got = [row(file, record)[k] for k in geo]
    assert got == want, (file, record, got, want)
    print(f"-G: {file} record {record}: {' | '.join(got)}")
looked = sum(1 for r in rows if r["TgtCountry"] not in ("", "-") or r["SrcCountry"] not in ("", "-"))
labelled = sum(1 for r in rows if r["SrcASN"] in ("Private", "Local") or r["TgtASN"] in ("Private", "Local"))
print(f"-G: {len(rows)} rows, {looked} with a country looked up, {labelled} with a Private or Local address")
PY
else
  echo "pip could not install maxminddb-geolite2 from PyPI"; exit 1
fi
echo "Hayabusa 4.0.0 stage: $(( $(date +%s) - start )) s"
