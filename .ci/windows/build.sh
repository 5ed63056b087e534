#!/usr/bin/env bash
# Builds scanner.exe (x86_64-pc-windows-gnu) with Debian's Rust (rustc-web, its standard
# library's source rebuilt with -Zbuild-std) and the MinGW linker, in a target folder of
# its own so the Linux build is left as it is; prints the path of scanner.exe.
#   .ci/windows/build.sh             the release build
#   .ci/windows/build.sh tests ARGS  scanner.exe and the test binaries of ARGS (packages),
#                                    in one cargo run sharing every dependency built
#   .ci/windows/build.sh test ARGS   cargo test ARGS for the target (the runner: Wine)
# The packages: rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 (see windows.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
target_dir="${WINDOWS_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/windows}"
# Debian's toolchain, not rustup's: it has no prebuilt standard library for Windows, so
# build-std compiles one from rust-web-src (RUSTC_BOOTSTRAP allows -Z on a stable rustc).
cargo=(env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 RUSTUP_TOOLCHAIN=
  CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
  CARGO_TARGET_DIR="$target_dir" /usr/bin/cargo)
# The standard library as Rust ships it for the target (unwinding), with the test crate:
# the binary and the tests run under Wine then share it and every dependency built.
std=(-Zbuild-std=std,panic_unwind,test --target x86_64-pc-windows-gnu)
# The test builds (CI's) link one binary per test file: without LTO each links in
# seconds rather than minutes; and at opt-level 1, which takes about a quarter less CPU
# to build than 3 (10.3 against 13.9 min from scratch) while the checks under Wine run
# as fast. Their scanner.exe is built the same way; the release build (no argument)
# keeps the workspace's opt-level 3 and thin LTO.
if [ "${1:-}" = tests ] || [ "${1:-}" = test ]; then
  cargo=(env CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_OPT_LEVEL=1 "${cargo[@]}")
fi
if [ "${1:-}" = tests ]; then
  shift
  # The binary the integration tests run is scanner.exe itself (CARGO_BIN_EXE_scanner).
  "${cargo[@]}" test --release --no-run "${std[@]}" "$@" >&2
  echo "$target_dir/x86_64-pc-windows-gnu/release/scanner.exe"
  exit
fi
if [ "${1:-}" = test ]; then
  shift
  "${cargo[@]}" test --release "${std[@]}" "$@"
  exit
fi
"${cargo[@]}" build --release -p scanner-cli "${std[@]}" >&2
echo "$target_dir/x86_64-pc-windows-gnu/release/scanner.exe"
