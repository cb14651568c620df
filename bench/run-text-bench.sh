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

tool=glow-opt
tag=text-bench
. "$(cd "$(dirname "$0")" && pwd)/text-bench-lib.sh"
nodes=$count

echo "generating $nodes nodes and $weight_mb MB of weights (seed $seed) in $dir" >&2
python3 "$here/gen_graph.py" --out-dir "$dir" --nodes "$nodes" --weight-mb "$weight_mb" \
	--seed "$seed" >&2
python3 "$here/measure.py" --dir "$dir" --glow-opt "$glow" --mlir-opt "$mlir_opt" \
	--runs "$runs" $markdown
