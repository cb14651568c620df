#!/usr/bin/env bash
# complete.sh FILE LINE: loads the bash completion FILE the way bash does for
# a command (sourced, then the function that `complete -p` names for the
# command), completes LINE as if the cursor were at its end and prints the
# candidates one per line.
set -o pipefail
file=$1
line=$2
source "$file"
cmd=${line%% *}
spec=$(complete -p "$cmd")
fn=${spec##*-F }
fn=${fn%% *}
COMP_LINE=$line
COMP_POINT=${#line}
read -r -a COMP_WORDS <<<"$line"
[[ $line == *' ' ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMPREPLY=()
"$fn" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
