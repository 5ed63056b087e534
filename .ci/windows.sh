#!/usr/bin/env bash
# Windows, checked under Wine (not on Windows itself): builds scanner.exe with Debian's
# Rust and MinGW, runs it under Wine 8 and compares its outputs with the Linux build's.
#   .ci/windows.sh LINUX_SCANNER SHARED    (WINDOWS_EXE=scanner.exe: no build; NO_WINE_TESTS=1)
# Checks: the attack corpus's CSV and JSONL timelines, the metrics commands and search
# equal to Linux's (paths aside); -l reading the prefix's C:\Windows\System32\winevt\Logs;
# Windows path forms (drive paths, forward slashes, trailing separators, paths past 260
# characters, non-ASCII names) in and out; no-clobber and atomic replacement; Ctrl-C;
# then the portable test suites with Wine as the test runner.
set -euo pipefail
cd "$(dirname "$0")/.."
linux=$(realpath "$1")
SHARED=$(realpath "$2")
stage_start=$(date +%s)
say() { echo "windows: $*"; }

pkgs=(rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  t=$(date +%s)
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) ||
    { echo "apt-get could not install ${missing[*]}"; exit 1; }
  say "packages installed in $(( $(date +%s) - t )) s"
fi

# The tests run under Wine: the unit and integration tests (--tests; the doc-tests run
# on Linux) of every package: scanner-files (the file system seam), scanner-yaml,
# scanner-rules (loading from folders, the caches), scanner-input (discovery, archives,
# EVTX and JSON), scanner-engine (detection, the spilling sorts), scanner-timeline,
# scanner-evtx-writer and scanner-cli (every command end to end: outputs and their atomic
# writing, path forms, archives, timelines, reports).
test_pkgs=(--tests -p scanner-files -p scanner-yaml -p scanner-rules -p scanner-input
  -p scanner-engine -p scanner-timeline -p scanner-evtx-writer -p scanner-cli)
t=$(date +%s)
if [ -n "${WINDOWS_EXE:-}" ]; then
  exe=$(realpath "$WINDOWS_EXE")   # a scanner.exe built already
elif [ "${NO_WINE_TESTS:-0}" = 1 ]; then
  exe=$(realpath "$(.ci/windows/build.sh)")
  say "scanner.exe built in $(( $(date +%s) - t )) s: $(stat -c %s "$exe") bytes"
else
  # scanner.exe and the test binaries in one cargo run: they share every dependency and
  # the standard library built, and the integration tests run this scanner.exe.
  exe=$(realpath "$(.ci/windows/build.sh tests "${test_pkgs[@]}")")
  say "scanner.exe and the test binaries built in $(( $(date +%s) - t )) s: scanner.exe $(stat -c %s "$exe") bytes"
fi

work=$(mktemp -d)
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wine=/usr/lib/wine/wine64
# The prefix's wineserver ended (and waited for) before its folder is removed; each
# step may fail (no server left running) without failing the stage under set -e.
trap '/usr/lib/wine/wineserver -k 2>/dev/null || true; /usr/lib/wine/wineserver -w 2>/dev/null || true
  rm -rf "$work" 2>/dev/null || { sleep 2; rm -rf "$work"; }' EXIT
t=$(date +%s)
$wine wineboot -i >/dev/null 2>&1
# Wine 8 has no bcryptprimitives.dll, whose ProcessPrng the standard library calls.
x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
  .ci/windows/processprng.c -lbcrypt
say "Wine prefix made in $(( $(date +%s) - t )) s"

win() { echo "Z:$(realpath -m "$1" | tr / '\\')"; }
run_exe() { $wine "$exe" "$@"; }
compare() { python3 .ci/windows/compare.py "$@"; }
corpus="$SHARED/corpus/evtx-attack-samples"
rules="$SHARED/rules/hayabusa-rules"
L="$work/linux"; W="$work/windows"
mkdir -p "$L" "$W"

echo "== windows: attack corpus timelines, metrics and search against the Linux build"
t=$(date +%s)
both() { # both NAME ARGS... : the command on Linux (-o $L/NAME) and on Windows (-o $W/NAME)
  local name=$1; shift
  local la=() wa=()
  for a in "$@"; do
    case $a in
      @corpus) la+=("$corpus"); wa+=("$(win "$corpus")") ;;
      @rules) la+=("$rules"); wa+=("$(win "$rules")") ;;
      *) la+=("$a"); wa+=("$a") ;;
    esac
  done
  "$linux" "${la[@]}" -q -o "$L/$name"
  run_exe "${wa[@]}" -q -o "$(win "$W/$name")"
  compare "$L/$name" "$W/$name"
}
both timeline.csv csv-timeline -d @corpus -r @rules -p verbose -U
both timeline.jsonl json-timeline -L -d @corpus -r @rules -p verbose -U
both eid-metrics.csv eid-metrics -d @corpus
both computer-metrics.csv computer-metrics -d @corpus
both log-metrics.csv log-metrics -d @corpus -U
both search-mimikatz.csv search -d @corpus -k mimikatz -i -U
both search-regex.csv search -d @corpus -r 'psexe[cs]' -U
say "corpus comparisons in $(( $(date +%s) - t )) s"

echo "== windows: -l reads C:\\Windows\\System32\\winevt\\Logs"
logs="$WINEPREFIX/drive_c/windows/system32/winevt/Logs"
mkdir -p "$logs"
mapfile -t evtx < <(find "$corpus" -name '*.evtx' | sort)
cp "${evtx[@]:0:40}" "$logs/"
"$linux" csv-timeline -d "$logs" -r "$rules" -p verbose -U -q -o "$L/live.csv"
run_exe csv-timeline -l -r "$(win "$rules")" -p verbose -U -q -o "$(win "$W/live.csv")"
compare "$L/live.csv" "$W/live.csv" --map "C:\\windows\\System32\\winevt\\Logs=$logs"

echo "== windows: path forms in and out"
forms="$work/forms"
long="$forms/$(printf 'a%.0s' {1..60})/$(printf 'b%.0s' {1..60})/$(printf 'c%.0s' {1..60})/$(printf 'd%.0s' {1..60})"
uni="$forms/Журнал ログ é"
mkdir -p "$long" "$uni"
one=${evtx[19]}
cp "$one" "$long/Sécurité-long.evtx"
cp "$one" "$uni/Sécurité ログ.evtx"
[ ${#long} -gt 260 ] || { echo "the long folder is only ${#long} characters"; exit 1; }
"$linux" csv-timeline -d "$forms" -r "$rules" -p verbose -U -q -o "$L/forms.csv"
wf=$(win "$forms")
i=0
for d in "$wf" "$wf\\" "${wf//\\//}" "${wf//\\//}/" "$wf\\\\"; do
  i=$((i + 1))
  run_exe csv-timeline -d "$d" -r "$(win "$rules")" -p verbose -U -q -o "$(win "$uni/out $i ログ.csv")"
  compare "$L/forms.csv" "$uni/out $i ログ.csv"
done
run_exe csv-timeline -f "$(win "$long/Sécurité-long.evtx")" -f "$(win "$uni/Sécurité ログ.evtx")" \
  -r "$(win "$rules")" -p verbose -U -q -o "$(win "$long/out-long.csv")"
compare "$L/forms.csv" "$long/out-long.csv"
say "path forms: drive paths, forward slashes, trailing separators, ${#long}-character paths, non-ASCII names"

echo "== windows: no-clobber and atomic replacement"
out="$W/clobber.csv"
printf 'theirs' > "$out"
rc=0
run_exe csv-timeline -d "$(win "$uni")" -r "$(win "$rules")" -q -o "$(win "$out")" 2>"$work/clobber.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "exists; use -C" "$work/clobber.err" && [ "$(cat "$out")" = theirs ] ||
  { echo "an existing output was not refused without -C (exit $rc)"; cat "$work/clobber.err"; exit 1; }
run_exe csv-timeline -d "$(win "$uni")" -r "$(win "$rules")" -q -C -o "$(win "$out")"
head -1 "$out" | grep -q '"Timestamp"' || { echo "-C did not replace the output"; head -c 200 "$out"; exit 1; }
leftover=$(find "$W" -name '.*.tmp' | wc -l)
[ "$leftover" -eq 0 ] || { echo "temporary files left: $(find "$W" -name '.*.tmp')"; exit 1; }
say "existing output refused without -C and kept; replaced whole with -C; no temporary file left"

echo "== windows: Ctrl-C"
"$linux" evtx generate --records 40000 --seed 3 -o "$work/big.evtx"
ctrl="$work/ctrl"
mkdir -p "$ctrl"
wtemp="$WINEPREFIX/drive_c/users/$(id -un)/Temp"
mkdir -p "$wtemp"
before=$(find "$wtemp" -mindepth 1 -maxdepth 1 | wc -l)
set +e
$wine "$exe" csv-timeline -q -U --sort-memory 0 -f "$(win "$work/big.evtx")" -o "$(win "$ctrl/out.csv")" \
  2>"$work/ctrl.err" &
pid=$!
set -e
for _ in $(seq 1 600); do
  [ "$(find "$wtemp" -mindepth 2 | wc -l)" -gt 0 ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
spilled=$(find "$wtemp" -mindepth 2 | wc -l)
kill -INT "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
cat "$work/ctrl.err"
after=$(find "$wtemp" -mindepth 1 -maxdepth 1 | wc -l)
[ "$spilled" -gt 0 ] || { echo "the scan spilled nothing before it ended (exit $rc)"; exit 1; }
[ "$rc" -eq 130 ] && [ ! -e "$ctrl/out.csv" ] && [ -z "$(ls -A "$ctrl")" ] && [ "$after" -eq "$before" ] ||
  { echo "Ctrl-C: exit $rc, left: $(ls -A "$ctrl") $(find "$wtemp" -mindepth 1)"; exit 1; }
say "Ctrl-C while spilling: exit 130, $spilled spilled file(s) removed, no output"

echo "== windows: update-rules without git.exe"
# update-rules runs git; no Windows git.exe exists here (README, "Building for Windows"),
# so what is checked is the failure: clear, exit 1, nothing installed.
upd="$work/update-rules"
mkdir -p "$upd"
rc=0
run_exe update-rules -r "$(win "$upd/rules")" --url "file:///$(win "$upd/repo" | tr '\\' /)" \
  >"$upd/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot run git" "$upd/out" && grep -q "previous rule set, if any, is unchanged" "$upd/out" &&
  [ ! -e "$upd/rules" ] ||
  { echo "update-rules without git: exit $rc, $(ls -A "$upd")"; cat "$upd/out"; exit 1; }
say "update-rules without git.exe: exit 1, 'cannot run git', no rule folder made"

[ "${NO_WINE_TESTS:-0}" = 1 ] && { say "stage took $(( $(date +%s) - stage_start )) s"; exit 0; }
echo "== windows: test suites under Wine (CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER)"
t=$(date +%s)
# The tests .ci/windows/skip.txt lists (with the reason) are left out.
skips=()
while read -r name; do skips+=(--skip "$name"); done < <(grep -v -e '^#' -e '^$' .ci/windows/skip.txt)
wine_tests() {
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" .ci/windows/build.sh test "${test_pkgs[@]}" \
    --no-fail-fast -- "${skips[@]}"
}
# Once more if a run fails: Wine 8 under load has failed to start a test's scanner.exe
# (CreateProcess: ERROR_INTERNAL_ERROR, 1359) in one run of four; a real failure fails
# both runs.
wine_tests || { say "the test run failed: running it once more"; wine_tests; }
say "$(( ${#skips[@]} / 2 )) tests left out (.ci/windows/skip.txt)"
say "test suites under Wine in $(( $(date +%s) - t )) s"
say "stage took $(( $(date +%s) - stage_start )) s"
exit 0
