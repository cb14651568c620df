#!/usr/bin/env bash
# Builds every libFuzzer target (utils/fuzz/fuzz_*.c) with clang and runs each
# for SECONDS seconds on a seed corpus taken from the test suite. Fails on the
# first crash, leak, sanitizer report or timeout a target finds.
#   utils/fuzz/run-fuzzers.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-fuzz}
SECS=${2:-60}

# -O1: the instrumented code runs some three times faster than at -O0, so
# each second tries that many more inputs (and legitimately large ones stay
# within -timeout); the sanitizers and glow_assert check the same
cmake -S . -B "$BUILD" -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null
targets=()
for src in utils/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  targets+=("${name//_/-}")
done
# glow-models: the model-zoo networks (utils/gen-models.py) seed the ONNX targets
cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" glow-models >/dev/null

for t in "${targets[@]}"; do
  corpus="$BUILD/corpus/$t"
  mkdir -p "$corpus"
  case "$t" in
    *glow*) pattern='*.glow' ;;
    *gir*) pattern='*.gir' ;;
    *onnx*|*import*) pattern='*.onnx' ;;
    *profile*) pattern='*.prof' ;;
    *dataset*|*train-driver*) pattern='*.idx' ;;
    *) pattern='*' ;;
  esac
  find test examples -name "$pattern" -type f 2>/dev/null | while read -r f; do
    cp "$f" "$corpus/$(sha1sum "$f" | cut -c1-40)"
  done
  if [[ "$t" == *dataset* || "$t" == *train-driver* ]]; then
    # the IDX and .npy seeds of test/dataset/Inputs/corpus (the *.idx above and the .npy batches)
    for f in test/dataset/Inputs/corpus/*.npy; do
      [ -f "$f" ] && cp "$f" "$corpus/$(sha1sum "$f" | cut -c1-40)"
    done
  fi
  if [[ "$pattern" == '*.onnx' ]]; then
    for f in "$BUILD"/models/*.onnx /usr/share/libonnx-testdata/data/node/test_{add,conv,relu,reshape,gemm}*/model.onnx; do
      [ -f "$f" ] && cp "$f" "$corpus/$(sha1sum "$f" | cut -c1-40)"
    done
  fi
done

# run the targets side by side, as many at once as there are processors
# (each is one process; SECONDS each, so the whole run takes about
# SECONDS x targets / processors); each target's output is printed whole
# when it finishes, and the first failure found stops the run
JOBS=$(nproc 2>/dev/null || echo 2)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
fuzz_one() {
  local t=$1 corpus="$BUILD/corpus/$1"
  mkdir -p "$BUILD/artifacts/$t"
  {
    echo "fuzz: $t for ${SECS}s on $(ls "$corpus" | wc -l) seeds"
    local rc=0
    # UBSan's findings with their stack, as ASan's come
    UBSAN_OPTIONS=print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS} \
    "$BUILD/bin/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$BUILD/artifacts/$t/" -print_final_stats=1 "$corpus" > "$logs/$t.full" 2>&1 || rc=$?
    echo "$rc" > "$logs/$t.rc"
    if [ "$rc" -ne 0 ]; then
      # a finding: its report from the first line libFuzzer or a sanitizer
      # wrote about it (the top of the stack is what tells where), then the
      # name of the input it saved
      awk '/^==[0-9]+== *ERROR|^ALARM: working on the last Unit|deadly signal|out-of-memory|^==[0-9]+==WARNING|runtime error:/ {on=1} on && n < 60 {print; n++}' "$logs/$t.full"
      grep -E '^(artifact_prefix|Test unit written|Base64)' "$logs/$t.full" || true
    else
      tail -n 15 "$logs/$t.full"
    fi
  } > "$logs/$t.log"
}
pids=()
names=()
failed=""
reap() { # waits for the oldest running target and reports it
  wait "${pids[0]}" || true
  local t=${names[0]}
  cat "$logs/$t.log"
  if [ "$(cat "$logs/$t.rc" 2>/dev/null || echo 1)" -ne 0 ]; then
    echo "fuzz: $t FAILED (artifacts in $BUILD/artifacts/$t)" >&2
    failed=$t
  fi
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}
for t in "${targets[@]}"; do
  while [ "${#pids[@]}" -ge "$JOBS" ]; do reap; done
  [ -n "$failed" ] && break
  fuzz_one "$t" &
  pids+=($!)
  names+=("$t")
done
while [ "${#pids[@]}" -gt 0 ]; do reap; done
if [ -n "$failed" ]; then
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran clean"
