#!/bin/sh
# run-ir-bench.sh - text round-trip benchmark of the instruction IR:
# glow-llc against mlir-opt.
#
# Generates an instruction-heavy and a weight-heavy program as .gir and as
# equivalent MLIR on memrefs (bench/gen_ir.py), then times
# `glow-llc in.gir -o out.gir` (parse, verify, print) and
# `mlir-opt in.mlir -o out.mlir` on them side by side (bench/measure.py:
# median of the runs, wall and CPU time, MB/s, instructions/s in the
# "nodes/s" column, peak RSS, RSS/input, speedups and the targets), and
# checks that glow-llc printed each input back byte for byte.
# Builds nothing: point -g at a glow-llc built with CMAKE_BUILD_TYPE=Release.
#
# usage: bench/run-ir-bench.sh [-g glow-llc] [-m mlir-opt|-m ''] [-n instrs]
#          [-w weight-MB] [-r runs] [-s seed] [-d dir] [-k] [-M]
#   -g  glow-llc to measure (default: build/bin/glow-llc in the source tree)
#   -m  mlir-opt to compare with (default /usr/lib/llvm-14/bin/mlir-opt;
#       empty or missing: glow-llc only)
#   -n  instructions of the instruction-heavy program (default 1000000)
#   -w  megabytes (10^6 bytes) of constant data in the weight-heavy program
#       (default 100)
#   -r  runs per tool and file; the median is reported (default 3)
#   -s  generator seed (default 1)
#   -d  directory for the generated files (default: a new temporary
#       directory, removed at the end unless -k); files already generated
#       there with the same arguments are reused
#   -k  keep the generated files
#   -M  print the table as markdown
set -eu

tool=glow-llc
tag=ir-bench
. "$(cd "$(dirname "$0")" && pwd)/text-bench-lib.sh"
instrs=$count

stamp="--instrs $instrs --weight-mb $weight_mb --seed $seed"
if [ -f "$dir/manifest.tsv" ] && [ "$(cat "$dir/args" 2>/dev/null)" = "$stamp" ]; then
	echo "reusing the programs in $dir ($stamp)" >&2
else
	echo "generating $instrs instructions and $weight_mb MB of weights (seed $seed) in $dir" >&2
	python3 "$here/gen_ir.py" --out-dir "$dir" $stamp >&2
	echo "$stamp" >"$dir/args"
fi

# The round trip is exact: the output is the input without its comment line.
for f in nodes weights; do
	[ -f "$dir/$f.gir" ] || continue
	"$glow" "$dir/$f.gir" -o "$dir/$f.check.gir"
	if ! tail -n +2 "$dir/$f.gir" | cmp -s - "$dir/$f.check.gir"; then
		echo "run-ir-bench.sh: glow-llc did not print $f.gir back unchanged" >&2
		exit 1
	fi
	rm -f "$dir/$f.check.gir"
done

python3 "$here/measure.py" --dir "$dir" --glow-opt "$glow" --mlir-opt "$mlir_opt" \
	--runs "$runs" $markdown
