#!/bin/sh
# train-paths.sh - the CNN's training step three ways, in one run: glow-run
# -backend=c on the step alone (a bundle per function: the placeholders
# reset and copied in and out per step, the path of a module without @F),
# glow-run -backend=c through the training bundle of the step and @F, and
# that bundle's own driver (glow-llc -backend=c -emit-main, cc -O3
# -march=native), each one epoch of the first LIMIT training images on one
# thread, ROUNDS times, with bench/peak.c's processor-time peak after each
# round and the load average. Then checks that the three wrote the same
# weights (cmp). Figures only; bench/README.md ("Training bundles").
#
#   bench/train-paths.sh [build-dir]
#
# Environment: DATA (default /usr/share/datasets/fashion-mnist), LIMIT
# (default 6400), ROUNDS (default 2), CC.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$here/build}" && pwd)/bin
data=${DATA:-/usr/share/datasets/fashion-mnist}
limit=${LIMIT:-6400}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
echo "start $(date -u), load average $(load)"
"$bin/glow-opt" -passes=differentiate,O2 -mode=train -backend=c -learning-rate=0.01 -momentum=0.9 -weight-decay=0.0005 \
	-batch-size=64 "$here/examples/fashion/cnn.glow" -o cnn.glow
"$bin/glow-opt" -passes=count-flops cnn.glow -o /dev/null 2>&1 | grep '@train_grad'
"$bin/glow-irgen" cnn.glow | "$bin/glow-llc" -O2 -o cnn.gir
"$bin/glow-irgen" -func=@train_grad cnn.glow | "$bin/glow-llc" -O2 -o step.gir
gzip -dc "$data/train-images-idx3-ubyte.gz" > images
gzip -dc "$data/train-labels-idx1-ubyte.gz" > labels
${CC:-cc} -std=gnu11 -O2 -march=native -ffp-contract=fast -o peak "$here/bench/peak.c"
"$bin/glow-llc" -backend=c -emit-main -bundle-name=cnn -o bundle cnn.gir
${CC:-cc} -std=c11 -O3 -march=native -pthread -o bundle/cnn_main bundle/cnn.c bundle/cnn_main.c -lm
set -- -train-data image=images -train-data label=labels
# the in-process compiles first, so that the timed runs are the training only
"$bin/glow-run" step.gir -backend=c -threads=1 -epochs=1 -limit=64 "$@" > /dev/null
"$bin/glow-run" cnn.gir -backend=c -threads=1 -epochs=1 -limit=64 "$@" > /dev/null
mkdir -p old new drv
for round in $(seq "${ROUNDS:-2}"); do
	echo "round $round, load average $(load)"
	printf 'old path: '
	"$bin/glow-run" step.gir -backend=c -threads=1 -epochs=1 -seed=1 -limit=$limit "$@" -output-dir old -output-format=npy
	printf 'training bundle in glow-run: '
	"$bin/glow-run" cnn.gir -backend=c -threads=1 -epochs=1 -seed=1 -limit=$limit "$@" -output-dir new -output-format=npy
	printf 'training bundle driver: '
	./bundle/cnn_main -weights bundle/cnn.weights.bin -threads 1 -epochs 1 -seed 1 -limit $limit "$@" -output-dir drv
	./peak | grep cpu
done
same=0
for f in new/*.npy; do
	cmp -s "$f" "old/${f#new/}" && cmp -s "$f" "drv/${f#new/}" && same=$((same + 1))
done
echo "$same of $(ls new | wc -l) weight files bitwise the same in the three runs"
echo "end $(date -u), load average $(load)"
