# text-bench-lib.sh - what run-text-bench.sh and run-ir-bench.sh share: their
# options (-g -m -n -w -r -s -d -k -M -h), the checks of the two tools and
# the directory of the generated files. Sourced (not run) after the script
# sets `tool` (the glow tool measured: glow-opt, glow-llc) and `tag` (the
# temporary directory's prefix); leaves glow (the tool's path), mlir_opt
# (empty: glow only), count (-n), weight_mb, runs, seed, markdown and dir
# set, dir existing.

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
me=$(basename "$0")
glow=$root/build/bin/$tool
mlir_opt=/usr/lib/llvm-14/bin/mlir-opt
count=1000000
weight_mb=100
runs=3
seed=1
dir=
keep=0
markdown=

while getopts g:m:n:w:r:s:d:kMh opt; do
	case $opt in
	g) glow=$OPTARG ;;
	m) mlir_opt=$OPTARG ;;
	n) count=$OPTARG ;;
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

if [ ! -x "$glow" ]; then
	echo "$me: no $tool at $glow (build it, or pass -g)" >&2
	exit 1
fi
if [ -n "$mlir_opt" ] && [ ! -x "$mlir_opt" ]; then
	echo "$me: no mlir-opt at $mlir_opt; measuring $tool only" >&2
	mlir_opt=
fi

if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX")
	if [ "$keep" = 0 ]; then
		trap 'rm -rf "$dir"' EXIT INT TERM
	fi
else
	mkdir -p "$dir"
fi
