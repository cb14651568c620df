#!/bin/sh
# make-corpus.sh DIR [PATTERN|dataset] - seeds a fuzzing corpus with every
# file of the test suite matching PATTERN (default '*.glow'; '*.prof' for
# fuzz-profile), or with `dataset` the IDX and .npy files of
# test/dataset/Inputs/corpus for fuzz-dataset (named by content hash, so
# re-running adds only new files).
set -eu
out=${1:?usage: make-corpus.sh DIR [PATTERN|dataset]}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
if [ "${2:-}" = dataset ]; then
	find "$root/test/dataset/Inputs/corpus" \( -name '*.idx' -o -name '*.npy' \) -type f
else
	find "$root/test" -name "${2:-*.glow}" -type f
fi | while read -r f; do
	h=$(sha1sum "$f" | cut -c1-40)
	cp "$f" "$out/$h"
done
echo "$(ls "$out" | wc -l) files in $out"
