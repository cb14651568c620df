#!/bin/sh
# quant-speed.sh - the int8 C bundles of the model-zoo networks against
# our own float C bundles, in the same run: processor time per inference
# and the size of the constants region.
#
#   bench/quant-speed.sh [build-dir] [model...]
#
# The networks are utils/gen-models.py's with seeded random weights
# (--weights random --seed ${SEED:-0}), as bench/quant.sh measures their
# accuracy. For each network: the float bundle (glow-opt -O2 -backend=c |
# glow-irgen | glow-llc -O2 -backend=c -emit-main); a profile over
# ${CALIB:-4} seeded uniform [0, 1) images (glow-opt -O2 -backend=c
# -precision=profile, glow-run -backend=c -profile); the int8 per-channel
# bundles of the schemas in ${SCHEMAS:-"symmetric asymmetric"} (glow-opt
# -O2 -backend=c -precision=quantize -quant-per-channel). Each bundle is
# built with ${CC:-cc} ${CFLAGS:--O3 -march=native} and its driver run on
# one other image with -threads ${THREADS:-1} -warmup 3 -runs ${RUNS:-10};
# the bundles alternate for ${ROUNDS:-3} rounds and each keeps its best
# round's median processor time per run (the driver's cpu_median_ms: less
# disturbed than wall time on a shared machine). Printed per bundle: that
# time, the float bundle's over it (the speed-up), the constants region
# (NAME_CONSTANT_SIZE) and its fraction of the float bundle's.
# CHECK=1 first compares each int8 bundle's last quantized value (the
# operand of the graph's last Dequantize, saved as an extra output) with
# the interpreter's, bit for bit (glow-run -expected, zero tolerance).
# KEEP=DIR keeps the bundles (DIR/NAME/NAME, with its weights and the
# input DIR/x.npy of the last network) for profiling: perf record on
# DIR/NAME/NAME -weights DIR/NAME/NAME.weights.bin DIR/x.npy -runs 200.
# Figures only: nothing is asserted (but CHECK), no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/models-lib.sh" # bench_args, find_python
bench_args "squeezenet resnet50" "$@"
runs=${RUNS:-10} rounds=${ROUNDS:-3} threads=${THREADS:-1}
schemas=${SCHEMAS:-"symmetric asymmetric"} cc=${CC:-cc} cflags=${CFLAGS:--O3 -march=native}
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP"
	tmp=$(cd "$KEEP" && pwd)
	rm -f "$tmp"/*.best
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
fi
find_python
"$py" "$here/utils/gen-models.py" -o "$tmp" --weights random --seed "${SEED:-0}" $list >/dev/null

# bundle IN.gir NAME: the bundle NAME of IN in $tmp/NAME, built
bundle() {
	"$bin/glow-llc" -O2 -backend=c -emit-main -bundle-name="$2" "$1" -o "$tmp/$2"
	(cd "$tmp/$2" && $cc -std=c11 $cflags -pthread "$2.c" "$2_main.c" -lm -o "$2")
}
# cpu_ms NAME INPUT: the median processor time per run of bundle NAME
cpu_ms() {
	"$tmp/$1/$1" -weights "$tmp/$1/$1.weights.bin" "$2" -threads "$threads" -warmup 3 -runs "$runs" |
		sed -n 's/.*cpu_median_ms \([0-9.]*\).*/\1/p'
}
# const_bytes NAME: the bundle's constants region in bytes
const_bytes() {
	sed -n "s/^#define $1_CONSTANT_SIZE \([0-9]*\)u.*/\1/p" "$tmp/$1/$1.h"
}
# save_last IN.glow OUT.glow: IN with the operand of its last Dequantize
# also saved, as the output @qout
save_last() {
	"$py" - "$1" "$2" <<'PY'
import re, sys
src = open(sys.argv[1]).read().split('\n')
deq = [l for l in src if re.search(r'= Dequantize\(', l)][-1]
x = re.search(r'Dequantize\((%[^)]*)\)', deq).group(1)
ty = [l for l in src if l.strip().startswith(x + ' = ')][0].rsplit(' : ', 1)[1]
out, done = [], False
for l in src:
    if l.startswith('func') and not done:
        out.append('placeholder @qout : ' + ty)
        done = True
    out.append(l)
    if l.strip().startswith(x + ' = '):
        out.append('  Save(%s, @qout)' % x)
open(sys.argv[2], 'w').write('\n'.join(out))
PY
}

printf '%-12s %-16s %10s %8s %12s %7s\n' network bundle cpu-ms speedup constants ratio
for m in $list; do
	g=$tmp/$m.glow
	"$bin/glow-import" "$tmp/light_$m.onnx" -o "$g"
	"$bin/glow-opt" -O2 -backend=c "$g" | "$bin/glow-irgen" -o "$tmp/$m.f.gir"
	sig=$("$bin/glow-run" "$tmp/$m.f.gir" -print-signature)
	in=$(echo "$sig" | sed -n 's/^  input \([^:]*\): float<\(.*\)>$/\1/p' | head -n 1)
	dims=$(echo "$sig" | sed -n 's/^  input [^:]*: float<\(.*\)>$/\1/p' | head -n 1 | sed 's/ x /,/g')
	"$py" "$here/bench/sqnr.py" images "$tmp/calib.npy" "${CALIB:-4}" "$dims" 1
	"$py" "$here/bench/sqnr.py" image "$tmp/x.npy" "$dims" 2 0
	"$bin/glow-opt" -O2 -backend=c -precision=profile "$g" | "$bin/glow-irgen" |
		"$bin/glow-llc" -O2 -backend=c -emit=ir -o "$tmp/$m.p.gir"
	rm -f "$tmp/$m.prof"
	"$bin/glow-run" "$tmp/$m.p.gir" -backend=c -input "$in=$tmp/calib.npy" -profile="$tmp/$m.prof"
	names="${m}_f"
	bundle "$tmp/$m.f.gir" "${m}_f"
	for s in $schemas; do
		q=$tmp/$m.$s.glow
		"$bin/glow-opt" -O2 -backend=c -precision=quantize -profile="$tmp/$m.prof" -quant-schema="$s" \
			-quant-per-channel "$g" -o "$q"
		n=$(echo "${m}_$s" | tr -c 'a-zA-Z0-9_\n' '_')
		"$bin/glow-irgen" "$q" -o "$tmp/$n.gir"
		bundle "$tmp/$n.gir" "$n"
		names="$names $n"
		if [ "${CHECK:-0}" = 1 ]; then
			save_last "$q" "$tmp/$n.s.glow"
			"$bin/glow-irgen" "$tmp/$n.s.glow" | "$bin/glow-llc" -O2 -backend=c -emit=ir -o "$tmp/$n.s.gir"
			"$bin/glow-run" "$tmp/$n.s.gir" -input "$in=$tmp/x.npy" -output-dir "$tmp/$n.ref" -output-format=npy
			"$bin/glow-run" "$tmp/$n.s.gir" -backend=c -input "$in=$tmp/x.npy" \
				-expected "qout=$tmp/$n.ref/qout.npy" -rtol=0 -atol=0 >&2
		fi
	done
	r=0
	while [ $r -lt "$rounds" ]; do
		for n in $names; do
			t=$(cpu_ms "$n" "$tmp/x.npy")
			b=$(cat "$tmp/$n.best" 2>/dev/null || echo 1e30)
			awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }' && echo "$t" >"$tmp/$n.best"
		done
		r=$((r + 1))
	done
	ft=$(cat "$tmp/${m}_f.best")
	fc=$(const_bytes "${m}_f")
	for n in $names; do
		t=$(cat "$tmp/$n.best")
		c=$(const_bytes "$n")
		awk -v m="$m" -v n="${n#${m}_}" -v t="$t" -v ft="$ft" -v c="$c" -v fc="$fc" 'BEGIN {
			printf "%-12s %-16s %10.2f %8.2f %12d %7.3f\n", m, (n == "f" ? "float" : "int8-" n), t, ft / t, c, c / fc }'
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
