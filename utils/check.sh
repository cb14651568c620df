#!/usr/bin/env bash
# Builds the toolchain and runs the whole lit test suite.
#   utils/check.sh [BUILD_DIR] [extra cmake args...]
# Prints lit's report, then one summary line "lit: N passed, N failed, N skipped".
# Needs the packages of utils/install-deps.sh: run as root it installs the
# missing ones first (so it works on a fresh Debian machine as the first
# command); otherwise it names the missing ones and how to install them,
# and exits 1 before building.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
JOBS=$(nproc 2>/dev/null || echo 2)

if [ "$(id -u)" -eq 0 ]; then
  bash utils/install-deps.sh
elif ! bash utils/install-deps.sh --check > /dev/null; then
  echo "check: error: packages are missing (above); install them, then run utils/check.sh again" >&2
  exit 1
fi

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$BUILD" -j "$JOBS"

LIT=/usr/lib/llvm-14/build/utils/lit/lit.py
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
python3 "$LIT" -sv -j "$JOBS" "$BUILD/test" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

count() {
  local v
  v=$(sed -n "s/^ *$1 *: *\([0-9][0-9]*\).*/\1/p" "$log" | tail -n 1)
  echo "${v:-0}"
}
# lit's summary lines: "  Passed             : 12"; known failures (XFAIL)
# and unsupported tests count as skipped, unexpected passes as failures
passed=$(count Passed)
failed=$(( $(count Failed) + $(count "Unexpectedly Passed") + $(count Unresolved) + $(count "Timed Out") ))
skipped=$(( $(count Unsupported) + $(count Excluded) + $(count "Expectedly Failed") ))
echo "lit: $passed passed, $failed failed, $skipped skipped"
if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ]; then
  exit 1
fi
if [ "$passed" -eq 0 ]; then
  echo "lit: no test ran" >&2
  exit 1
fi
