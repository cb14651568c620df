#!/bin/sh
# run-text-bench.sh - text round-trip benchmark: glow-opt against mlir-opt.
#
# Generates a node-heavy and a weight-heavy graph as .glow and as equivalent
# tosa .mlir (bench/gen_graph.py), then times `glow-opt in.glow -o out.glow`
# and `mlir-opt in.mlir -o out.mlir` on them side by side (bench/measure.py)
# and prints a table with the speedups and whether the targets are met.
# Builds nothing: point -g at a glow-opt built with CMAKE_BUILD_TYPE=Release.
#
# usage: bench/run-text-bench.sh [-g glow-opt] [-m mlir-opt|-m ''] [-n nodes]
#          [-w weight-MB] [-r runs] [-s seed] [-d dir] [-k] [-M]
#   -g  glow-opt to measure (default: build/bin/glow-opt in the source tree)
#   -m  mlir-opt to compare with (default /usr/lib/llvm-14/bin/mlir-opt;
#       empty or missing: glow-opt only)
#   -n  nodes of the node-heavy graph (default 1000000)
#   -w  megabytes (10^6 bytes) of constant data in the weight-heavy graph
#       (default 100)
#   -r  runs per tool and file; the median is reported (default 3)
#   -s  generator seed (default 1)
#   -d  directory for the generated files (default: a new temporary
#       directory, removed at the end unless -k)
#   -k  keep the generated files
#   -M  print the table as markdown
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
glow_opt=$root/build/bin/glow-opt
mlir_opt=/usr/lib/llvm-14/bin/mlir-opt
nodes=1000000
weight_mb=100
runs=3
seed=1
dir=
keep=0
markdown=

while getopts g:m:n:w:r:s:d:kMh opt; do
	case $opt in
	g) glow_opt=$OPTARG ;;
	m) mlir_opt=$OPTARG ;;
	n) nodes=$OPTARG ;;
	w) weight_mb=$OPTARG ;;
	r) runs=$OPTARG ;;
	s) seed=$OPTARG ;;
	d) dir=$OPTARG ;;
	k) keep=1 ;;
	M) markdown=--markdown ;;
	h) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done

if [ ! -x "$glow_opt" ]; then
	echo "run-text-bench.sh: no glow-opt at $glow_opt (build it, or pass -g)" >&2
	exit 1
fi
if [ -n "$mlir_opt" ] && [ ! -x "$mlir_opt" ]; then
	echo "run-text-bench.sh: no mlir-opt at $mlir_opt; measuring glow-opt only" >&2
	mlir_opt=
fi

if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/text-bench.XXXXXX")
	if [ "$keep" = 0 ]; then
		trap 'rm -rf "$dir"' EXIT INT TERM
	fi
else
	mkdir -p "$dir"
fi

echo "generating $nodes nodes and $weight_mb MB of weights (seed $seed) in $dir" >&2
python3 "$here/gen_graph.py" --out-dir "$dir" --nodes "$nodes" --weight-mb "$weight_mb" \
	--seed "$seed" >&2
python3 "$here/measure.py" --dir "$dir" --glow-opt "$glow_opt" --mlir-opt "$mlir_opt" \
	--runs "$runs" $markdown
