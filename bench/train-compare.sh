#!/bin/sh
# train-compare.sh - the CNN's training speed of two builds, alternating
# in one run: bench/train.sh (this tree's script, each build's tools and
# so each build's kernels) on the first LIMIT training images for one
# epoch, ROUNDS times each, the load average before every run. Each
# train.sh run prints bench/peak.c's processor-time peak measured just
# before it, and its epoch line (loss, accuracy, processor seconds,
# images per processor second, GFLOP/s and the fraction of that peak);
# the two builds' losses and accuracies show whether the change kept the
# arithmetic (bitwise the same weights give the same printed digits).
# Figures only; bench/README.md ("The CNN step without patch matrices").
#
#   bench/train-compare.sh BASE-BUILD NEW-BUILD
#
# Environment: LIMIT (default 6400), ROUNDS (default 2), RUNNER and
# THREADS as bench/train.sh takes them (defaults glow-run, 1), DATA, CC.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ne 2 ]; then
	echo "usage: bench/train-compare.sh BASE-BUILD NEW-BUILD" >&2
	exit 1
fi
for b in "$1" "$2"; do
	if [ ! -x "$b/bin/glow-run" ]; then
		echo "train-compare.sh: $b/bin/glow-run not found (build the tools first)" >&2
		exit 1
	fi
done
echo "start $(date -u)"
for round in $(seq "${ROUNDS:-2}"); do
	for b in "$1" "$2"; do
		echo "round $round, $b"
		LIMIT=${LIMIT:-6400} CNN_EPOCHS=1 "$here/bench/train.sh" "$b" cnn | grep -v '^cnn:\|^runner:'
	done
done
echo "end $(date -u)"
