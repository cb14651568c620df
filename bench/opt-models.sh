#!/bin/sh
# opt-models.sh - what glow-opt -O2 does to the model-zoo networks.
#
#   bench/opt-models.sh [build-dir] [models-dir]
#
# The models are light_<model>.onnx in models-dir, or when none is given the
# nine networks of utils/gen-models.py generated into a temporary directory
# (weight fills; WEIGHTS=random for seeded random weights, which change the
# constants glow-opt folds but not the graph). For each: imports it, prints
# the node count and the estimated flops (glow-opt -passes=count-flops)
# before and after -O2, the Transposes and BatchNormalizations left, then
# times glow-opt -O2 on ResNet-50 (best of 3 wall-clock runs) next to
# onnxruntime's session creation on the same model. Figures only; nothing
# is asserted.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
bin=$build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/bench/models-lib.sh" # gen_models
models=${2:-}
if [ -z "$models" ]; then
	models=$tmp/models
	gen_models "$models"
fi

flops() { # file -> "nodes flops"
	"$bin/glow-opt" -passes=count-flops "$1" -o /dev/null 2>&1 |
		sed -n 's/^count-flops: module: \([0-9]*\) nodes, \([^ ]*\) flops$/\1 \2/p'
}

printf '%-14s %8s %8s %12s %12s %6s %4s\n' model nodes nodes-O2 flops flops-O2 transp bn
for m in resnet50 densenet121 shufflenet squeezenet inception_v1 inception_v2 bvlc_alexnet vgg19 zfnet512; do
	f=$models/light_$m.onnx
	[ -f "$f" ] || continue
	"$bin/glow-import" "$f" -o "$tmp/in.glow"
	"$bin/glow-opt" -O2 "$tmp/in.glow" -o "$tmp/out.glow"
	set -- $(flops "$tmp/in.glow") $(flops "$tmp/out.glow")
	t=$(grep -c '= Transpose(' "$tmp/out.glow" || true)
	b=$(grep -c '= BatchNormalization(' "$tmp/out.glow" || true)
	printf '%-14s %8s %8s %12s %12s %6s %4s\n' "$m" "$1" "$3" "$2" "$4" "$t" "$b"
done

f=$models/light_resnet50.onnx
if [ -f "$f" ]; then
	"$bin/glow-import" "$f" -o "$tmp/in.glow"
	best=
	for i in 1 2 3; do
		s=$(date +%s.%N)
		"$bin/glow-opt" -O2 "$tmp/in.glow" -o "$tmp/out.glow"
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
	done
	echo "glow-opt -O2 on resnet50 (parse, optimize, print; best of 3): ${best}s"
	echo "output: $(wc -c < "$tmp/out.glow") bytes, $(grep -c '^constant' "$tmp/out.glow") constants," \
		"$(grep -c '= dense' "$tmp/out.glow") of them dense"
	"$bin/glow-opt" -O2 -time-passes "$tmp/in.glow" -o /dev/null 2>&1 | sed -n '1,40p'

	# The peer in the same run: onnxruntime's session creation (load and
	# graph optimization, all levels) on the same model, best of 3, from
	# ../shared/tools/ort-bench.mjs with onnxruntime-node in $ORT_PREFIX
	# (default /opt/ort; see ../shared/tools/README.md).
	ort=$here/../shared/tools/ort-bench.mjs
	export ORT_PREFIX=${ORT_PREFIX:-/opt/ort}
	if command -v node > /dev/null && [ -f "$ort" ] && [ -d "$ORT_PREFIX/node_modules/onnxruntime-node" ]; then
		obest=
		for i in 1 2 3; do
			ms=$(node "$ort" "$f" --runs 1 --warmup 0 --json | sed -n 's/.*"create_ms":\([0-9.]*\).*/\1/p')
			if [ -z "$obest" ] || [ "$(echo "$ms < $obest" | bc)" = 1 ]; then obest=$ms; fi
		done
		echo "onnxruntime session creation on resnet50 (load, optimize; best of 3): $(echo "scale=4; $obest / 1000" | bc)s"
	else
		echo "onnxruntime-node not found in $ORT_PREFIX: no peer figure"
	fi
fi
