#!/bin/sh
# c-node.sh - what the C backend's own node C.ConvAddRelu changes: one
# network's C bundle with and without the backend's post-lowering hook,
# built by the same tools, run alternately.
#
#   bench/c-node.sh [build-dir] [model]        (model: resnet50 by default)
#
# The network is utils/gen-models.py's light_<model>.onnx with seeded random
# weights (test/cross/Inputs/xavier.py), taken through glow-opt -O2
# -backend=c ("with": C.ConvAddRelu nodes) and through the same pipeline
# without its post-lowering pass ("without": the generic Convolution, Add
# and Relu, which the code generator fuses when they are adjacent), then
# glow-irgen, glow-llc -O2 -backend=c -emit-main and ${CC:-cc} ${CFLAGS:--O3
# -march=native}. Prints the number of C.ConvAddRelu nodes, both memory
# plans' activation bytes, then ${ROUNDS:-8} rounds alternating the two
# drivers (-threads ${THREADS:-1} -runs ${RUNS:-5} -warmup 1), each round's
# median processor time per run, and the load average before and after.
# Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-resnet50}
bin=$build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$here/utils/gen-models.py" -o "$tmp" "$model"
"$bin/glow-import" "$tmp/light_$model.onnx" -o "$tmp/imported.glow"
"$py" "$here/test/cross/Inputs/xavier.py" "$tmp/imported.glow" "$tmp/m.glow"
input=$("$bin/glow-irgen" "$tmp/m.glow" | "$bin/glow-run" - -print-signature |
	sed -n 's/^  input [^:]*: float<\(.*\)>$/\1/p' | head -n 1 | sed 's/ x /x/g')
"$py" "$here/test/cross/Inputs/npyrand.py" "$input" "$tmp/x.npy"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in with without; do
	if [ $v = with ]; then
		"$bin/glow-opt" -O2 -backend=c "$tmp/m.glow" -o "$tmp/$v.glow"
	else
		"$bin/glow-opt" -passes=fold,optimize,lower,cleanup,cleanup,check-supported -backend=c \
			"$tmp/m.glow" -o "$tmp/$v.glow"
	fi
	"$bin/glow-irgen" "$tmp/$v.glow" | "$bin/glow-llc" -O2 -backend=c -emit=ir -o "$tmp/$v.gir"
	mkdir -p "$tmp/$v"
	"$bin/glow-llc" "$tmp/$v.gir" -backend=c -emit-main -bundle-name=m -o "$tmp/$v"
	# shellcheck disable=SC2086
	${CC:-cc} -std=c11 ${CFLAGS:--O3 -march=native} -pthread -o "$tmp/$v/m.exe" "$tmp/$v/m.c" \
		"$tmp/$v/m_main.c" -lm
	printf '%-8s C.ConvAddRelu nodes %3s, activations %s bytes\n' $v \
		"$(grep -c 'C\.ConvAddRelu(' "$tmp/$v.glow" || true)" \
		"$(sed -n 's/.*activations = \([0-9]*\).*/\1/p' "$tmp/$v.gir" | head -n 1)"
done
r=0
while [ $r -lt "${ROUNDS:-8}" ]; do
	for v in with without; do
		t=$("$tmp/$v/m.exe" -weights "$tmp/$v/m.weights.bin" "$tmp/x.npy" -threads "${THREADS:-1}" \
			-runs "${RUNS:-5}" -warmup 1 | sed -n 's/.*cpu_median_ms \([0-9.]*\).*/\1/p')
		printf 'round %d %-8s cpu_median_ms %s\n' $r $v "$t"
	done
	r=$((r + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
