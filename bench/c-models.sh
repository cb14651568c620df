#!/bin/sh
# c-models.sh - the model-zoo networks compiled by the C backend, beside
# onnxruntime in the same run.
#
#   bench/c-models.sh [build-dir] [models-dir] [model...]
#
# The models are light_<model>.onnx in models-dir, or when models-dir is
# empty or not given the networks of utils/gen-models.py generated into a
# temporary directory (weight fills by default, as the results below were
# measured; WEIGHTS=random SEED=N for seeded random weights, e.g.
# `WEIGHTS=random bench/c-models.sh build "" resnet50`). For each
# light_<model>.onnx: glow-import | glow-opt -O2 -backend=c (the C
# backend's graph pipeline: its post-lowering makes C.ConvAddRelu and
# splits the batch, docs/CBackend.md; until 2026-11-28 this script ran the
# generic -O2, without them) | glow-irgen |
# glow-llc -O2 -backend=c -emit-main -gemm=${GEMM:-builtin}, the bundle built
# with ${CC:-cc} ${CFLAGS:--O3 -march=native} (and -lopenblas when
# GEMM=openblas: matrix products by OpenBLAS's cblas_sgemm, one thread
# unless OPENBLAS_NUM_THREADS says otherwise), its driver run with -runs
# ${RUNS:-20} after 3 warm-up runs (median wall time of one inference) at
# each thread count of ${THREADS:-"1 $(nproc)"} (the driver's -threads N),
# then onnxruntime on the same model (../shared/tools/ort-bench.mjs beside
# the source tree, --threads N: the same intra-op thread count, same run
# count; needs ORT_PREFIX, see ../shared/tools/README.md; without it no
# peer figure), alternating for ${ROUNDS:-3} rounds and keeping each side's
# best round; all of it at each batch size of ${BATCHES:-"1 8"} (a batch
# other than 1: the network rewritten by bench/batch-model.py, read by
# both sides). Prints per model, batch and thread count the medians, the
# ratio ours/ort and
# our GFLOP/s (flops as glow-opt -passes=count-flops estimates them after
# the generic -O2, whose nodes it knows) and its fraction of the peak of
# that many cores (bench/peak.c: independent FMA chains on one core,
# measured first), the minima and their
# ratio, our median processor time per run (all threads; less disturbed
# than wall time when the machine is shared), the scaling (our time at the
# first thread count over this one's), the peak resident memory (GNU time's
# %M) of one run of our driver and of one onnxruntime session in node
# (node's own heap included), then the compile times: gen-s, the toolchain
# (glow-import, glow-opt -O2 -backend=c, glow-irgen, glow-llc -O2
# -backend=c, run one after another, wall seconds), and cc-s, the C
# compiler on the bundle.
# Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
models=${2:-}
[ $# -ge 2 ] && shift 2 || shift $#
list=${*:-"squeezenet resnet50 shufflenet inception_v1 inception_v2 densenet121 bvlc_alexnet zfnet512 vgg19"}
bin=$build/bin
runs=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/bench/models-lib.sh" # gen_models
if [ -z "$models" ]; then
	models=$tmp/models
	gen_models "$models" $list
fi
export ORT_PREFIX=${ORT_PREFIX:-/opt/ort}
gemm=${GEMM:-builtin}
libs=-lm
[ "$gemm" = openblas ] && libs="-lopenblas -lm"
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# in_npy FILE N: the input the model zoo's expected outputs use,
# arange(n)/n of 1x3x224x224, repeated for each of N images
in_npy() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
n, b = 150528, int(sys.argv[2])
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 3, 224, 224), }" % b
h += ' ' * (118 - len(h)) + '\n'
with open(sys.argv[1], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode())
    f.write(struct.pack('<%df' % n, *[i / n for i in range(n)]) * b)
PY
}
# the thread counts (THREADS, default 1 and every core of this machine)
# and batch sizes (BATCHES, default 1 and 8) of the table
threads=${THREADS:-"1 $(nproc)"}
batches=${BATCHES:-"1 8"}
# peak resident set of a command in MiB (GNU time), or - without it
rss_of() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f 'rss_kb %M' "$@" 2>&1 >/dev/null | sed -n 's/^rss_kb \([0-9]*\)$/\1/p' |
			awk '{ printf "%.0f", $1 / 1024 }'
	else
		echo -
	fi
}

# this core's peak: the best of five runs of twelve FMA chains
peak=0
if ${CC:-cc} -std=gnu11 -O2 -march=native -ffp-contract=fast -o "$tmp/peak" "$here/bench/peak.c"; then
	peak=$("$tmp/peak" | sed -n 's/^peak_gflops //p')
fi
echo "single-core fp32 peak: ${peak:-0} GFLOP/s (bench/peak.c)"
printf '%-14s %5s %3s %9s %9s %6s %8s %5s %9s %9s %6s %8s %6s %7s %7s %6s %6s\n' model batch thr ours-ms ort-ms ratio GFLOP/s peak \
	ours-min ort-min ratio cpu-ms scale rss-MiB ort-MiB gen-s cc-s
for m in $list; do
	for batch in $batches; do
	f=$models/light_$m.onnx
	[ -f "$f" ] || continue
	d=$tmp/$m
	mkdir -p "$d"
	if [ "$batch" != 1 ]; then
		# the network at batch N (bench/batch-model.py), for both sides
		if ! /usr/bin/python3 "$here/bench/batch-model.py" "$f" "$d/batch.onnx" "$batch"; then
			printf '%-14s %5s %10s\n' "$m" "$batch" failed
			continue
		fi
		f=$d/batch.onnx
	fi
	in_npy "$tmp/in.npy" "$batch"
	t0=$(date +%s.%N)
	if ! "$bin/glow-import" "$f" -o "$d/in.glow" ||
	   ! "$bin/glow-opt" -O2 -backend=c "$d/in.glow" -o "$d/opt.glow" ||
	   ! "$bin/glow-irgen" "$d/opt.glow" -o "$d/prog.gir" ||
	   ! "$bin/glow-llc" -O2 -backend=c -emit-main -gemm="$gemm" -bundle-name=model "$d/prog.gir" -o "$d" ||
	   ! t1=$(date +%s.%N) ||
	   ! ${CC:-cc} -std=c11 ${CFLAGS:--O3 -march=native} -pthread -o "$d/run" "$d/model.c" "$d/model_main.c" $libs; then
		printf '%-14s %5s %10s\n' "$m" "$batch" failed
		continue
	fi
	t2=$(date +%s.%N)
	flops=$("$bin/glow-opt" -passes=O2,count-flops "$d/in.glow" -o /dev/null 2>&1 |
		sed -n 's/^count-flops: module: [0-9]* nodes, \([^ ]*\) flops$/\1/p')
	one=
	for th in $threads; do
	# ROUNDS (default 3) alternating rounds, each a median of $runs runs on
	# both sides at th threads (our -threads, onnxruntime's
	# intraOpNumThreads); the best round of each side is kept (a load spike
	# on a shared machine then rarely decides the ratio)
	ours= omin= cpu= ort= rmin=
	for round in $(seq "${ROUNDS:-3}"); do
		line=$("$d/run" -weights "$d/model.weights.bin" "$tmp/in.npy" -threads "$th" -runs "$runs" -warmup 3 2>/dev/null)
		v=$(echo "$line" | sed -n 's/^median_ms \([^ ]*\) .*/\1/p')
		if [ -z "$ours" ] || awk -v a="$v" -v b="$ours" 'BEGIN { exit !(a < b) }'; then
			ours=$v
			cpu=$(echo "$line" | sed -n 's/.* cpu_median_ms \([^ ]*\) .*/\1/p')
		fi
		v=$(echo "$line" | sed -n 's/.* min_ms \([^ ]*\) .*/\1/p')
		if [ -z "$omin" ] || awk -v a="$v" -v b="$omin" 'BEGIN { exit !(a < b) }'; then omin=$v; fi
		oline=$(node "$here/../shared/tools/ort-bench.mjs" "$f" --runs "$runs" --threads "$th" 2>/dev/null || true)
		v=$(echo "$oline" | sed -n 's/.*: \([0-9.]*\) ms\/inference.*/\1/p')
		if [ -n "$v" ] && { [ -z "$ort" ] || awk -v a="$v" -v b="$ort" 'BEGIN { exit !(a < b) }'; }; then ort=$v; fi
		v=$(echo "$oline" | sed -n 's/.*(median of [0-9]*, min \([0-9.]*\),.*/\1/p')
		if [ -n "$v" ] && { [ -z "$rmin" ] || awk -v a="$v" -v b="$rmin" 'BEGIN { exit !(a < b) }'; }; then rmin=$v; fi
	done
	# peak memory: one inference of the bundle's driver, one onnxruntime
	# session with one run (node's own heap included)
	rss=$(rss_of "$d/run" -weights "$d/model.weights.bin" "$tmp/in.npy" -threads "$th")
	orss=$(rss_of node "$here/../shared/tools/ort-bench.mjs" "$f" --runs 1 --warmup 0 --threads "$th")
	[ -n "$one" ] || one=${ours:-0}
	awk -v m="$m" -v bt="$batch" -v th="$th" -v a="${ours:-0}" -v b="${ort:-0}" -v f="${flops:-0}" -v c="${cpu:-0}" \
	    -v am="${omin:-0}" -v bm="${rmin:-0}" -v pk="${peak:-0}" -v t0="$t0" -v t1="$t1" \
	    -v t2="$t2" -v one="$one" -v rss="${rss:--}" -v orss="${orss:--}" 'BEGIN {
		gs = t1 - t0
		cs = t2 - t1
		r = b > 0 && a > 0 ? sprintf("%.2f", a / b) : "-"
		rm = bm > 0 && am > 0 ? sprintf("%.2f", am / bm) : "-"
		gf = a > 0 ? f / a / 1e6 : 0
		pf = pk > 0 ? sprintf("%.0f%%", 100 * gf / (pk * th)) : "-"
		sc = a > 0 ? sprintf("%.2f", one / a) : "-"
		printf "%-14s %5s %3s %9.2f %9.2f %6s %8.1f %5s %9.2f %9.2f %6s %8.2f %6s %7s %7s %6.2f %6.2f\n", m, bt, th, a, b, r, gf, pf, am, bm, rm, c, sc, rss, orss, gs, cs }'
	done
	rm -rf "$d"
	done
done
