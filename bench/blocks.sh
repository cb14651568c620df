#!/bin/sh
# blocks.sh - a Loop run as a block (docs/InstrIR.md, "Blocks") against the
# same Loop unrolled, on the C backend and the interpreter.
#
#   bench/blocks.sh [-b bin-dir] [-n trips]
#
# The Loop carries a float<4096> through `acc = tanh(acc * 0.5 + x)` for
# `trips` iterations (default 256):
#
#   blocks    glow-opt -O2 -backend=c (which keeps the Loop) | glow-irgen |
#             glow-llc -O2 -backend=c -emit=ir
#   unrolled  glow-opt -passes='loop-unroll{max-trips=trips},O2' -backend=c | ...
#
# and prints, per form, the lines of the planned .gir, its activation
# arena, the processor seconds of glow-run -backend=c with an empty bundle
# cache (generation, cc, one run) and of a second run (cached), and of the
# interpreter; then whether both forms give bitwise the same outputs.
# Figures only; the exit status is 1 when a pipeline failed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
trips=256
while getopts b:n: o; do
	case $o in
	b) bin=$OPTARG ;;
	n) trips=$OPTARG ;;
	*) exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/loop.glow" <<GLOW
placeholder @x : float<4096>
placeholder @out : float<4096>
constant @n : i64<> = splat $trips
constant @t : bool<> = splat true
constant @h : float<4096> = splat 0.5

func @main {
  %l = Loop(@n, @t, @x) : float<4096> body(%i : i64<>, %go : bool<>, %acc : float<4096>) {
    %m = Mul(%acc, @h) : float<4096>
    %s = Add(%m, @x) : float<4096>
    %r = Tanh(%s) : float<4096>
    Yield(%go, %r)
  }
  Save(%l, @out)
}
GLOW
python3 "$here/utils/tensor-make.py" -o "$tmp/x.npy" float 4096 \
	$(python3 -c "print(' '.join(str((i % 7) * 0.1) for i in range(4096)))")
"$bin/glow-opt" -O2 -backend=c "$tmp/loop.glow" | "$bin/glow-irgen" |
	"$bin/glow-llc" -O2 -backend=c -emit=ir -o "$tmp/blocks.gir"
"$bin/glow-opt" -passes="loop-unroll{max-trips=$trips},O2" -backend=c "$tmp/loop.glow" | "$bin/glow-irgen" |
	"$bin/glow-llc" -O2 -backend=c -emit=ir -o "$tmp/unrolled.gir"
# processor seconds (user + system) of a command, its children included
cpu() {
	/usr/bin/time -f "%U %S" -o "$tmp/t" "$@" > /dev/null
	awk '{ printf "%.2f", $1 + $2 }' "$tmp/t"
}
echo "| form | .gir lines | arena bytes | C: compile + run s | C: cached run s | interpreter s |"
echo "|---|---|---|---|---|---|"
for f in blocks unrolled; do
	export GLOW_CBACKEND_CACHE="$tmp/cache-$f"
	mkdir -p "$GLOW_CBACKEND_CACHE"
	arena=$(sed -n 's/.*activations = \([0-9]*\).*/\1/p' "$tmp/$f.gir" | head -1)
	c1=$(cpu "$bin/glow-run" "$tmp/$f.gir" -backend=c -input x="$tmp/x.npy" -o "$tmp/$f.c.npy")
	c2=$(cpu "$bin/glow-run" "$tmp/$f.gir" -backend=c -input x="$tmp/x.npy" -o "$tmp/$f.c2.npy")
	i1=$(cpu "$bin/glow-run" "$tmp/$f.gir" -input x="$tmp/x.npy" -o "$tmp/$f.i.npy")
	echo "| $f | $(wc -l < "$tmp/$f.gir") | $arena | $c1 | $c2 | $i1 |"
done
cmp -s "$tmp/blocks.c.npy" "$tmp/unrolled.c.npy" && cmp -s "$tmp/blocks.i.npy" "$tmp/unrolled.i.npy" &&
	echo "outputs: bitwise the same" || echo "outputs: DIFFER"
