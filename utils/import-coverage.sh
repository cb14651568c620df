#!/bin/sh
# import-coverage.sh - runs glow-import over every ONNX node test model and
# prints how many import, then each failing test with the first error.
#
#   utils/import-coverage.sh [path/to/glow-import] [data dir]
#
# Defaults: glow-import from PATH, /usr/share/libonnx-testdata/data/node.
# Exit status 0 (it reports; it does not judge).
IMPORT=${1:-glow-import}
DATA=${2:-/usr/share/libonnx-testdata/data/node}
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

total=0
ok=0
for dir in "$DATA"/*/; do
	model="$dir/model.onnx"
	[ -f "$model" ] || continue
	total=$((total + 1))
	name=$(basename "$dir")
	if "$IMPORT" "$model" -o "$TMP/out.glow" >/dev/null 2>"$TMP/err"; then
		ok=$((ok + 1))
	else
		# the first error line, without the program and file prefix
		msg=$(grep -m1 "error:" "$TMP/err" | sed -e 's|^[^:]*: error: [^:]*: ||')
		[ -n "$msg" ] || msg="(crashed or no diagnostic: $(head -c 200 "$TMP/err"))"
		printf '%s\t%s\n' "$name" "$msg" >>"$TMP/fail"
	fi
done

echo "imported $ok of $total node test models"
if [ -f "$TMP/fail" ]; then
	echo
	echo "failures by reason (count, reason):"
	# group unsupported operators by op type; other errors by message
	cut -f2 "$TMP/fail" | sed -e 's/unsupported operator \([^ ]*\) .*/unsupported operator \1/' \
		-e 's/^node "[^"]*" (\([^)]*\)): /\1: /' | sort | uniq -c | sort -rn
	echo
	echo "failing tests:"
	cat "$TMP/fail"
fi
exit 0
