#!/bin/sh
# threads-kernels.sh - the kernels split among the threads by issue 16's
# second round (reductions, softmax, normalizations, data movement,
# gathers, resize, matrix products of activations), one at a time, at 1
# and at N threads, on both backends.
#
#   bench/threads-kernels.sh [build-dir] [kind...]
#   bench/threads-kernels.sh [build-dir] sweep
#
# Each kind is a one-instruction program (the shapes of a layer at batch
# 8, below) compiled as a C bundle (glow-llc -O2 -backend=c -emit-main,
# ${CC:-cc} ${CFLAGS:--O2 -march=native} -pthread), its driver run with
# -runs ${RUNS:-20} -warmup 3 at each thread count of ${THREADS:-"1 2"}:
# the median wall time, the median processor time of a run (all threads),
# and the speed-up over the first count. The interpreter runs the same
# program (glow-run -threads=N -time: the best "run" stage of
# ${IRUNS:-3}). The thread counts alternate ${ROUNDS:-3} times and each
# keeps its best round, so a load spike on a shared machine rarely decides
# a ratio. Figures only: nothing is asserted, no test runs this.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
[ $# -ge 1 ] && shift
bin=$build/bin
threads=${THREADS:-"1 2"}
runs=${RUNS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# prog KIND: the declarations and the instruction of one kind
prog() {
	x='%x = weight constant float<8 x 56 x 56 x 64>, xavier 4 seed 1'
	c64='%s = weight constant float<64>, xavier 1 seed 2
  %b = weight constant float<64>, xavier 1 seed 3
  %m = weight constant float<64>, xavier 1 seed 4
  %v = weight constant float<64>, splat 0.5'
	y='%y = weight mutable float<8 x 56 x 56 x 64>'
	# x, its per-channel operands and a result of its shape
	xcy="$x
  $c64
  $y"
	case $1 in
	softmax) pd='%x = weight constant float<64 x 4096>, xavier 4 seed 1
  %y = weight mutable float<64 x 4096>'
		pi='%1 = softmax @out %y, @in %x {axis = 1}' ;;
	batchnorm) pd=$xcy
		pi='%1 = batchnormalization @out %y, @in %x, @in %s, @in %b, @in %m, @in %v' ;;
	layernorm) pd='%x = weight constant float<512 x 768>, xavier 4 seed 1
  %s = weight constant float<768>, xavier 1 seed 2
  %b = weight constant float<768>, xavier 1 seed 3
  %y = weight mutable float<512 x 768>'
		pi='%1 = layernormalization @out %y, @in %x, @in %s, @in %b {axis = 1}' ;;
	instancenorm) pd=$xcy
		pi='%1 = instancenormalization @out %y, @in %x, @in %s, @in %b' ;;
	lrn) pd='%x = weight constant float<8 x 27 x 27 x 96>, xavier 4 seed 1
  %y = weight mutable float<8 x 27 x 27 x 96>'
		pi='%1 = localresponsenormalization @out %y, @in %x {half_window_size = 2}' ;;
	reducemean) pd="$x
  %y = weight mutable float<8 x 64>"
		pi='%1 = batchedreducemean @out %y, @in %x {axes = [1, 2]}' ;;
	reducemax) pd="$x
  %y = weight mutable float<8 x 56 x 56>"
		pi='%1 = batchedreducemax @out %y, @in %x {axes = [3]}' ;;
	argmax) pd='%x = weight constant float<256 x 1000>, xavier 4 seed 1
  %y = weight mutable index64<256>'
		pi='%1 = argmax @out %y, @in %x {axis = 1}' ;;
	gather) pd='%x = weight constant float<30000 x 512>, xavier 4 seed 1
  %i = weight constant index64<4096>, splat 7
  %y = weight mutable float<4096 x 512>'
		pi='%1 = gather @out %y, @in %x, @in %i' ;;
	resize) pd='%x = weight constant float<8 x 32 x 32 x 64>, xavier 4 seed 1
  %y = weight mutable float<8 x 64 x 64 x 64>'
		pi='%1 = resizebilinear @out %y, @in %x {scale = [1.0, 2.0, 2.0, 1.0]}' ;;
	concat) pd="$x
  %y = weight mutable float<8 x 56 x 56 x 128>, zero"
		pi='%1 = inserttensor @inout %y, @in %x {start = [0, 0, 0, 64]}' ;;
	pad) pd="$x
  %y = weight mutable float<8 x 60 x 60 x 64>"
		pi='%1 = pad @out %y, @in %x {mode = reflect, pads = [0, 2, 2, 0, 0, 2, 2, 0]}' ;;
	cumsum) pd="$x
  $y"
		pi='%1 = cumsum @out %y, @in %x {axis = 2}' ;;
	batchmatmul) pd='%a = weight constant float<8 x 256 x 128>, xavier 4 seed 1
  %w = weight constant float<8 x 128 x 256>, xavier 4 seed 2
  %y = weight mutable float<8 x 256 x 256>'
		pi='%1 = batchmatmul @out %y, @in %a, @in %w' ;;
	*) echo "threads-kernels.sh: unknown kind '$1'" >&2; exit 1 ;;
	esac
	printf 'function @f\ndeclare {\n  %s\n}\nprogram {\n  %s\n}\n' "$pd" "$pi"
}

# chain KIND N: 200 instructions of one kind on N floats, one after the
# other (add: the interpreter's cheapest elementwise kernel; softmax: rows
# of 512), for the size at which a split starts to pay (sweep below)
chain() {
	printf 'function @f\ndeclare {\n  %%a = weight constant float<%s>, xavier 4 seed 1\n' "$2"
	printf '  %%y = weight mutable float<%s>\n}\nprogram {\n' "$2"
	printf '  %%b = alloc float<%s>\n  %%c = alloc float<%s>\n  %%0 = copy @out %%b, @in %%a\n' "$2" "$2"
	# each instruction reads the previous one's result (nothing to delete)
	for i in $(seq 100); do
		if [ "$1" = add ]; then
			echo "  %$i.1 = add @out %c, @in %a, @in %b"
			echo "  %$i.2 = add @out %b, @in %a, @in %c"
		else
			echo "  %$i.1 = softmax @out %c, @in %b {axis = 1}"
			echo "  %$i.2 = softmax @out %b, @in %c {axis = 1}"
		fi
	done
	printf '  %%e = add @out %%y, @in %%b, @in %%a\n  %%f = dealloc @out %%c\n  %%g = dealloc @out %%b\n}\n'
}

# best_of LABEL TH SCALE SED CMD...: the least number the sed script SED
# prints from the output of ROUNDS runs of CMD, times SCALE, over the 202
# instructions of a chain: one row of the sweep
best_of() {
	label=$1 th=$2 scale=$3 pat=$4
	shift 4
	best=
	for round in $(seq "${ROUNDS:-3}"); do
		v=$("$@" 2>&1 | sed -n "$pat")
		best=$(awk -v a="$v" -v b="${best:-1e9}" 'BEGIN { print a < b ? a : b }')
	done
	printf '%-20s %3s %10.2f\n' "$label" "$th" "$(awk -v v="$best" -v s="$scale" 'BEGIN { print v * s / 202 }')"
}

# `sweep`: microseconds per instruction of the chains at each size and
# thread count (the interpreter's add; a bundle's softmax), the best of
# ROUNDS
if [ "${1:-}" = sweep ]; then
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	printf '%-20s %3s %10s\n' chain thr us/instr
	for n in 2048 8192 32768 131072; do
		chain add "$n" >"$tmp/add.gir"
		for th in $threads; do
			best_of "interp add $n" "$th" 1e6 's/^glow-run: time: run *\([0-9.]*\) s$/\1/p' \
				"$bin/glow-run" "$tmp/add.gir" -threads="$th" -time
		done
	done
	for n in 2048 4096 8192 32768; do
		chain softmax "$((n / 512)) x 512" >"$tmp/sm.gir"
		"$bin/glow-llc" -O2 -backend=c -emit-main -bundle-name=k "$tmp/sm.gir" -o "$tmp"
		${CC:-cc} -std=c11 ${CFLAGS:--O2 -march=native} -pthread -o "$tmp/run" "$tmp/k.c" "$tmp/k_main.c" -lm
		for th in $threads; do
			best_of "c softmax $n" "$th" 1e3 's/^median_ms \([^ ]*\) .*/\1/p' \
				"$tmp/run" -weights "$tmp/k.weights.bin" -threads "$th" -runs "$runs" -warmup 3
		done
	done
	exit 0
fi

kinds=${*:-"softmax batchnorm layernorm instancenorm lrn reducemean reducemax argmax gather resize concat pad cumsum batchmatmul"}
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-13s %3s %9s %9s %6s %10s %6s\n' kind thr c-ms c-cpu-ms c-x interp-ms i-x
for k in $kinds; do
	d=$tmp/$k
	mkdir -p "$d"
	prog "$k" >"$d/p.gir"
	"$bin/glow-llc" -O2 -backend=c -emit-main -bundle-name=k "$d/p.gir" -o "$d"
	${CC:-cc} -std=c11 ${CFLAGS:--O2 -march=native} -pthread -o "$d/run" "$d/k.c" "$d/k_main.c" -lm
	for round in $(seq "${ROUNDS:-3}"); do
		for th in $threads; do
			line=$("$d/run" -weights "$d/k.weights.bin" -threads "$th" -runs "$runs" -warmup 3)
			echo "$th $line" >>"$d/c.txt"
			for r in $(seq "${IRUNS:-3}"); do
				"$bin/glow-run" "$d/p.gir" -threads="$th" -time 2>&1 >/dev/null |
					sed -n "s/^glow-run: time: run *\([0-9.]*\) s$/$th \1/p" >>"$d/i.txt"
			done
		done
	done
	# the best round per thread count; speed-ups over the first count
	awk -v k="$k" -v order="$threads" '
	FNR == NR { th = $1; m = $3; c = $7
		if (!(th in cm) || m < cm[th]) { cm[th] = m; cc[th] = c }; next }
	{ th = $1; v = $2 * 1000; if (!(th in im) || v < im[th]) im[th] = v }
	END { n = split(order, t, " ")
		for (i = 1; i <= n; i++)
			printf "%-13s %3s %9.3f %9.3f %6.2f %10.3f %6.2f\n", k, t[i], cm[t[i]], cc[t[i]],
				cm[t[1]] / cm[t[i]], im[t[i]], im[t[1]] / im[t[i]] }' "$d/c.txt" "$d/i.txt"
	rm -rf "$d"
done
