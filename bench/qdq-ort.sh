#!/bin/sh
# qdq-ort.sh - our int8 network against onnxruntime running the same
# network as an int8 QDQ ONNX model with the same scales, in the same run.
#
#   bench/qdq-ort.sh [build-dir] [model...]      (default: squeezenet resnet50)
#
# For each model-zoo network (utils/gen-models.py, seeded random weights,
# SEED default 0): glow-import, profiled by glow-run -profile over
# ${CALIB:-2} seeded uniform [0, 1) images (interpreter, -O2 profiling
# program); utils/qdq-model.py writes the QDQ model from that profile
# (--schema ${SCHEMA:-asymmetric}, --per-channel when PER_CHANNEL=1), and
# glow-import of it is checked to leave no float Convolution. Timed, each
# the median of ${RUNS:-20} single-threaded inferences after warm-up, best
# of ${ROUNDS:-3} alternating rounds: onnxruntime on the float model and on
# the QDQ model (../shared/tools/ort-bench.mjs, ORT_PREFIX naming an
# onnxruntime-node install), and our C bundles (glow-llc -O2 -backend=c
# -emit-main, cc ${CFLAGS:--O3 -march=native}) of the float graph (glow-opt
# -O2 -backend=c) and of glow-opt -O2 -backend=c -precision=quantize with
# the same profile and schema; "-" where the C backend does not quantize
# or compile the graph. The times are wall times (onnxruntime reports
# those): on a shared machine compare the columns of one run only.
# Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, find_python
bench_args "squeezenet resnet50" "$@"
runs=${RUNS:-20}
schema=${SCHEMA:-asymmetric}
pc=
qpc=
[ "${PER_CHANNEL:-0}" = 1 ] && pc=--per-channel && qpc=-quant-per-channel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ORT_PREFIX=${ORT_PREFIX:-/opt/ort}
ort="$here/../shared/tools/ort-bench.mjs"
find_python
"$py" "$here/utils/gen-models.py" -o "$tmp" --weights random --seed "${SEED:-0}" $list >/dev/null

# bundle GIR DIR: our C bundle of GIR built in DIR (DIR/run), 1 on failure
bundle() {
	"$bin/glow-llc" -O2 -backend=c -emit-main -bundle-name=model "$1" -o "$2" 2>/dev/null &&
		${CC:-cc} -std=c11 ${CFLAGS:--O3 -march=native} -pthread -o "$2/run" "$2/model.c" "$2/model_main.c" -lm
}
# ours DIR NPY: median ms of DIR's bundle
ours() {
	"$1/run" -weights "$1/model.weights.bin" "$2" -threads 1 -runs "$runs" -warmup 3 2>/dev/null |
		sed -n 's/^median_ms \([^ ]*\) .*/\1/p'
}
# ortms MODEL: onnxruntime's median ms
ortms() {
	node "$ort" "$1" --runs "$runs" --threads 1 2>/dev/null | sed -n 's/.*: \([0-9.]*\) ms\/inference.*/\1/p'
}
# min A B: the smaller number, A when B is empty
min() { [ -z "$2" ] && echo "$1" || awk -v a="$1" -v b="$2" 'BEGIN { print (b != "" && b < a) ? b : a }'; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); schema $schema${pc:+, per channel}"
printf '%-12s %10s %10s %10s %10s %8s %8s\n' model ort-f32 ort-int8 ours-f32 ours-int8 int8/ort f32/ort
for m in $list; do
	d=$tmp/$m
	mkdir -p "$d/f" "$d/q"
	onnx=$tmp/light_$m.onnx
	"$bin/glow-import" "$onnx" -o "$d/m.glow"
	"$bin/glow-opt" -O2 -backend=c "$d/m.glow" | "$bin/glow-irgen" -o "$d/f.gir"
	sig=$("$bin/glow-run" "$d/f.gir" -print-signature)
	in=$(echo "$sig" | sed -n 's/^  input \([^:]*\): float<\(.*\)>$/\1/p' | head -n 1)
	dims=$(echo "$sig" | sed -n 's/^  input [^:]*: float<\(.*\)>$/\1/p' | head -n 1 | sed 's/ x /,/g')
	"$py" "$here/bench/sqnr.py" images "$d/calib.npy" "${CALIB:-2}" "$dims" 1
	"$py" "$here/bench/sqnr.py" image "$d/in.npy" "$dims" 2 0
	"$bin/glow-opt" -O2 -precision=profile "$d/m.glow" | "$bin/glow-irgen" | "$bin/glow-llc" -O2 -o "$d/p.gir"
	"$bin/glow-run" "$d/p.gir" -input "$in=$d/calib.npy" -profile="$d/m.prof"
	"$py" "$here/utils/qdq-model.py" "$onnx" "$d/m.prof" -o "$d/qdq.onnx" --schema "$schema" $pc 2>/dev/null
	floatconv=$("$bin/glow-import" "$d/qdq.onnx" | grep -c "Convolution(.*: float" || true)
	[ "$floatconv" = 0 ] || echo "$m: the QDQ model imports with $floatconv float Convolutions"
	okf=0
	bundle "$d/f.gir" "$d/f" && okf=1
	okq=0
	"$bin/glow-opt" -O2 -backend=c -precision=quantize -profile="$d/m.prof" -quant-schema="$schema" $qpc \
		"$d/m.glow" -o "$d/q.glow"
	if grep -q "Convolution(.*: q" "$d/q.glow"; then
		"$bin/glow-irgen" "$d/q.glow" -o "$d/q.gir" && bundle "$d/q.gir" "$d/q" && okq=1
	fi
	of= oq= uf= uq=
	for r in $(seq "${ROUNDS:-3}"); do
		of=$(min "$(ortms "$onnx")" "$of")
		oq=$(min "$(ortms "$d/qdq.onnx")" "$oq")
		[ $okf = 1 ] && uf=$(min "$(ours "$d/f" "$d/in.npy")" "$uf")
		[ $okq = 1 ] && uq=$(min "$(ours "$d/q" "$d/in.npy")" "$uq")
	done
	ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo -; }
	printf '%-12s %10s %10s %10s %10s %8s %8s\n' "$m" "${of:--}" "${oq:--}" "${uf:--}" "${uq:--}" \
		"$(ratio "$uq" "$oq")" "$(ratio "$uf" "$of")"
done
