#!/bin/sh
# make-corpus.sh DIR [PATTERN] - seeds a fuzzing corpus with every file of
# the test suite matching PATTERN (default '*.glow'; '*.prof' for
# fuzz-profile), named by content hash, so re-running adds only new files.
set -eu
out=${1:?usage: make-corpus.sh DIR [PATTERN]}
pattern=${2:-*.glow}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
find "$root/test" -name "$pattern" -type f | while read -r f; do
	h=$(sha1sum "$f" | cut -c1-40)
	cp "$f" "$out/$h"
done
echo "$(ls "$out" | wc -l) files in $out"
