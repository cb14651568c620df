#!/bin/sh
# memplan.sh - quality of the static memory plan and of the memory-aware
# schedule on the bench models.
#
#   bench/memplan.sh [-b bin-dir] [-r max-ratio] [model.onnx|model.glow ...]
#
# For each model (default: the nine networks of utils/gen-models.py, with
# weight fills, generated into a temporary directory, and examples/lenet.glow),
# under both schedules:
#
#   glow-import M.onnx | glow-opt -O2 |
#     glow-irgen -print-schedule-stats -schedule=S | glow-llc -O2 -print-memory-plan
#
# (a .glow model skips glow-import) and prints one markdown table row:
#
#   nodes        the scheduled nodes (glow-irgen -print-schedule-stats)
#   peak topo    peak live activation bytes of the text's topological order
#   peak memory  the same for the memory-aware schedule (and the order it kept)
#   gain         1 - peak memory / peak topo
#   arena, lower bound, ratio   glow-llc's activation arena, the lower bound
#                of its program (the most bytes live at one point after the
#                -O2 IR passes) and arena / lower bound, per schedule
#   ratio ok     both ratios at most max-ratio (default 1.05)
#   sched ok     peak memory at most peak topo
#
# With several functions in a module the figures are summed over them (the
# ratio is then the summed arena over the summed bound). Figures only; the
# exit status is 1 when a pipeline failed, not when a target is missed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$here/build/bin
maxratio=1.05
usage() {
	echo "usage: $0 [-b bin-dir] [-r max-ratio] [model.onnx|model.glow ...]" >&2
	exit 2
}
while getopts b:r:h opt; do
	case $opt in
	b) bin=$OPTARG ;;
	r) maxratio=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
for t in glow-import glow-opt glow-irgen glow-llc; do
	[ -x "$bin/$t" ] || { echo "$0: $bin/$t not found (-b bin-dir)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/bench/models-lib.sh" # gen_models
if [ $# -eq 0 ]; then
	gen_models "$tmp/models"
	set -- "$tmp"/models/*.onnx "$here/examples/lenet.glow"
fi

# run FILE SCHED: the pipeline; schedule stats in $tmp/sched, plan in $tmp/plan
run() {
	case $1 in
	*.onnx) "$bin/glow-import" "$1" -o "$tmp/in.glow" || return 1 ;;
	*) cp "$1" "$tmp/in.glow" ;;
	esac
	"$bin/glow-opt" -O2 "$tmp/in.glow" -o "$tmp/opt.glow" &&
		"$bin/glow-irgen" -print-schedule-stats -schedule="$2" "$tmp/opt.glow" -o "$tmp/prog.gir" 2> "$tmp/sched" &&
		"$bin/glow-llc" -O2 -print-memory-plan "$tmp/prog.gir" -o /dev/null 2> "$tmp/plan"
}

# "nodes topo peak order" summed over the functions of $tmp/sched
sched_stats() {
	sed -n 's/^schedule @.*: \([0-9]*\) nodes, peak live bytes: topo \([0-9]*\), [a-z]* \([0-9]*\) (\([a-z-]*\) order)$/\1 \2 \3 \4/p' "$tmp/sched" |
		awk '{ n += $1; t += $2; p += $3; o = o == "" || o == $4 ? $4 : "mixed" }
			END { if (NR) print n, t, p, o }'
}

# "arena lower-bound" summed over the functions of $tmp/plan
plan_stats() {
	awk '/^  activation arena: [0-9]+ bytes$/ { a += $3; na++ }
		/^  lower bound: [0-9]+ bytes$/ { l += $3; nl++ }
		END { if (na && na == nl) print a, l }' "$tmp/plan"
}

echo "| model | nodes | peak topo | peak memory | gain | order | arena topo | lower bound topo | ratio topo | arena memory | lower bound memory | ratio memory | ratio ok | sched ok |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
status=0
for f in "$@"; do
	m=$(basename "$f")
	m=${m%.*}
	m=${m#light_}
	if ! run "$f" memory || ! ms=$(sched_stats) || [ -z "$ms" ] || ! mp=$(plan_stats) || [ -z "$mp" ] ||
	   ! run "$f" topo || ! tp=$(plan_stats) || [ -z "$tp" ]; then
		echo "| $m | failed | | | | | | | | | | | | |"
		status=1
		continue
	fi
	echo "$m $ms $tp $mp" | awk -v max="$maxratio" '{
		# model nodes peak-topo peak-mem order arena-t lb-t arena-m lb-m
		rt = $7 ? $6 / $7 : 1; rm = $9 ? $8 / $9 : 1
		gain = $3 ? 100 * (1 - $4 / $3) : 0
		rt_s = sprintf("%.3f", rt); rm_s = sprintf("%.3f", rm)
		ok = rt_s + 0 <= max + 0 && rm_s + 0 <= max + 0 ? "yes" : "no"
		printf "| %s | %d | %.0f | %.0f | %.1f%% | %s | %.0f | %.0f | %s | %.0f | %.0f | %s | %s | %s |\n",
			$1, $2, $3, $4, gain, $5, $6, $7, rt_s, $8, $9, rm_s, ok, $4 + 0 <= $3 + 0 ? "yes" : "no"
	}'
done
exit $status
