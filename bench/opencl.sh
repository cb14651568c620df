#!/bin/sh
# opencl.sh - a model-zoo network through the OpenCL backend beside our own
# C bundle of the same network, at the same thread count, alternating.
#
#   bench/opencl.sh [build-dir] [model]        (model: resnet50 by default)
#
# The network is utils/gen-models.py's light_<model>.onnx (fill weights
# unless WEIGHTS=random; BATCH=N for a batch of N), taken through
#   glow-import | glow-opt -O2 -backend=opencl | glow-irgen
#     | glow-llc -O2 -backend=opencl -emit=ir          (device copies, plan)
# and run by glow-run -backend=opencl with GLOW_OPENCL_PROFILE=RUNS+1 (the
# backend's profiling hook: RUNS+1 runs, the first paying for the device
# compiler, the median wall time of the others, and per run the time in
# kernels, in device copies and how much of the copy time overlapped a
# kernel, from the queues' profiling events); beside it the C bundle
# (glow-llc -O2 -backend=c -emit-main, ${CC:-cc} ${CFLAGS:--O3
# -march=native}), whose driver runs THREADS threads (its -threads; it
# defaults to every core) with -runs RUNS after 3 warm-up runs. The OpenCL
# device runs THREADS threads too (default 1; PoCL reads POCL_MAX_PTHREAD_COUNT and, in newer releases,
# POCL_CPU_MAX_CU_NUM). ${ROUNDS:-3} rounds alternate the two and each side
# keeps its best median, of wall time and of processor time (the steadier
# figure on a shared machine). Prints both, their ratios, the overlap and
# the machine's load average before and after.
# Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
model=${2:-resnet50}
bin=$build/bin
runs=${RUNS:-10}
rounds=${ROUNDS:-3}
threads=${THREADS:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$here/utils/gen-models.py" -o "$tmp" --weights "${WEIGHTS:-fill}" --seed "${SEED:-0}" \
	--batch "${BATCH:-1}" "$model"
onnx=$tmp/light_$model.onnx
"$bin/glow-import" "$onnx" -o "$tmp/m.glow"
"$bin/glow-opt" -O2 -backend=opencl "$tmp/m.glow" | "$bin/glow-irgen" |
	"$bin/glow-llc" -O2 -backend=opencl -emit=ir -o "$tmp/ocl.gir"
"$bin/glow-opt" -O2 -backend=c "$tmp/m.glow" | "$bin/glow-irgen" |
	"$bin/glow-llc" -O2 -backend=c -emit-main -o "$tmp/c"
${CC:-cc} ${CFLAGS:--O3 -march=native} -o "$tmp/c/run" "$tmp/c"/*.c -lm
# the input: seeded uniform [0, 1) floats as .npy, its name from the signature
input=$("$bin/glow-run" -print-signature "$tmp/ocl.gir" | awk '$1 == "input" { sub(":", "", $2); print $2; exit }')
dims=$("$bin/glow-run" -print-signature "$tmp/ocl.gir" | sed -n 's/^ *input [^:]*: [a-z0-9]*<\(.*\)>$/\1/p' |
	head -1 | sed 's/ x /,/g')
"$py" "$here/bench/npy_uniform.py" "$tmp/in.npy" "$dims"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
best_c=
best_o=
best_cc=
best_oc=
note=
for r in $(seq "$rounds"); do
	cl=$(cd "$tmp/c" && ./run -weights main.weights.bin -input "$input=$tmp/in.npy" -runs "$runs" -warmup 3 -threads "$threads")
	c=$(echo "$cl" | awk '{ for (i = 1; i < NF; i++) if ($i == "median_ms") print $(i + 1) }')
	cc_cpu=$(echo "$cl" | awk '{ for (i = 1; i < NF; i++) if ($i == "cpu_median_ms") print $(i + 1) }')
	n=$(POCL_MAX_PTHREAD_COUNT=$threads POCL_CPU_MAX_CU_NUM=$threads GLOW_OPENCL_PROFILE=$((runs + 1)) \
		"$bin/glow-run" -backend=opencl "$tmp/ocl.gir" -input "$input=$tmp/in.npy" -o "$tmp/out.npy" 2>&1 |
		grep 'note: opencl:')
	o=$(echo "$n" | sed 's/.*median \([0-9.]*\) ms.*/\1/')
	oc=$(echo "$n" | sed -n 's/.*processor time \([0-9.]*\) ms.*/\1/p')
	echo "round $r: C bundle $c ms (processor $cc_cpu ms), OpenCL $o ms (processor ${oc:-?} ms)"
	if [ -z "$best_c" ] || awk "BEGIN { exit !($c < $best_c) }"; then best_c=$c; fi
	if [ -z "$best_o" ] || awk "BEGIN { exit !($o < $best_o) }"; then best_o=$o; note=$n; fi
	if [ -z "$best_cc" ] || awk "BEGIN { exit !($cc_cpu < $best_cc) }"; then best_cc=$cc_cpu; fi
	if [ -n "$oc" ] && { [ -z "$best_oc" ] || awk "BEGIN { exit !($oc < $best_oc) }"; }; then best_oc=$oc; fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
echo "model $model, batch ${BATCH:-1}, $threads thread(s), best of $rounds rounds of $runs runs"
echo "C bundle (${CC:-cc} ${CFLAGS:--O3 -march=native}): median $best_c ms"
echo "OpenCL: median $best_o ms"
awk "BEGIN { printf \"ratio OpenCL / C bundle: %.2f (wall)\n\", $best_o / $best_c }"
[ -z "$best_oc" ] || awk "BEGIN { printf \"processor time per run: C bundle %.3f ms, OpenCL %.3f ms, ratio %.2f\n\", $best_cc, $best_oc, $best_oc / $best_cc }"
echo "$note" | sed 's/^.*note: /best OpenCL round: /'
echo "load average before: $load0, after: $load1 ($(nproc) cores)"
