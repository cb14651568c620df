#!/usr/bin/env python3
"""Generates the man page and the bash completion of every tool.

    gen-docs.py --bin-dir BIN --list-kinds EXE --man-extra DIR --out SHARE TOOL...

Both come from the tool itself, so they cannot drift from its options:
  BIN/TOOL --help-man          the page: name, synopsis, options, exit status
  BIN/TOOL --help-completion   one line per option: -name TAB class TAB values
  BIN/TOOL -list-passes        the pass and pipeline names (class "passes")
  EXE (glow-list-kinds)        the node and instruction kinds (class "kinds")
DIR/TOOL.man adds prose: its lines before the first .SH go to the end of
DESCRIPTION, its sections (EXAMPLES, ...) after EXIT STATUS; SEE ALSO names
the other tools. Writes SHARE/man/man1/TOOL.1 and
SHARE/bash-completion/completions/TOOL, each whole or not at all.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def run(argv):
    """stdout of argv; a failure stops the build with the tool's message."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit("gen-docs: error: '%s' failed (exit %d): %s" % (" ".join(argv), r.returncode, r.stderr.strip()))
    return r.stdout


def write_atomic(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=os.path.basename(path) + ".tmp-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def man_page(tool, bin_dir, extra_dir, tools):
    page = run([os.path.join(bin_dir, tool), "--help-man"])
    desc, sections = "", ""
    extra = os.path.join(extra_dir, tool + ".man")
    if os.path.exists(extra):
        with open(extra) as f:
            text = f.read()
        if text.startswith(".SH "):
            cut = 0
        else:
            cut = text.find("\n.SH ") + 1 or len(text)
        desc, sections = text[:cut], text[cut:]
    if desc:
        marker = "\n.SH OPTIONS\n"
        if marker not in page:
            sys.exit("gen-docs: error: %s --help-man has no OPTIONS section" % tool)
        page = page.replace(marker, "\n.PP\n" + desc.rstrip("\n") + marker, 1)
    page += sections
    others = sorted(t for t in tools if t != tool)
    if others:
        page += ".SH SEE ALSO\n" + ",\n".join(".BR %s (1)" % t.replace("-", "\\-") for t in others) + "\n"
    return page


def pass_names(tool, bin_dir, has_list):
    """The names -list-passes prints: "  name - description" (passes) and
    "  name = contents - description" (pipelines). A tool without
    -list-passes (glow-diff) checks graph passes: glow-opt's list."""
    names = []
    lister = tool if has_list else "glow-opt"
    for line in run([os.path.join(bin_dir, lister), "-list-passes"]).splitlines():
        if line.startswith("  ") and line.strip():
            names.append(line.split()[0])
    return names


# The completion function; one copy in every tool's file, since bash-completion
# loads the file of the command being completed only. It reads the word being
# completed from COMP_LINE, as bash splits -passes=dce at '=', and hands back
# the part after bash's own word break.
COMPLETE_FN = r'''
_glow_complete()
{
	local key=${1##*/}
	key=_glow_${key//[^a-zA-Z0-9]/_}
	local -n _g_opts=${key}_opts _g_class=${key}_class _g_values=${key}_values
	local line=${COMP_LINE:0:COMP_POINT}
	local word=${line##*[[:space:]]}
	local before=${line%"$word"}
	before=${before%"${before##*[![:space:]]}"}
	local prev=${before##*[[:space:]]}
	local -a cands=()
	local opt value head
	# the tables spell options with one dash; --name is the same option
	if [[ $word == -*=* ]]; then
		opt=${word%%=*}
		opt=${opt#-}
		opt=-${opt#-}
		value=${word#*=}
		_glow_values "${_g_class[$opt]-}" "${_g_values[$opt]-}" "$value"
		head=${word%%=*}=
		cands=("${cands[@]/#/$head}")
	elif [[ $word == -* ]]; then
		mapfile -t cands < <(compgen -W "$_g_opts" -- "$word")
		if [[ ${#cands[@]} -eq 1 && ${cands[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null
		fi
	elif opt=${prev#-} && opt=-${opt#-} && [[ $prev == -* && $prev != *=* && -n ${_g_class[$opt]-} ]]; then
		_glow_values "${_g_class[$opt]}" "${_g_values[$opt]-}" "$word"
	else
		mapfile -t cands < <(compgen -f -- "$word")
	fi
	# bash replaces only the text after the last word-break character
	local breaks=${COMP_WORDBREAKS-$' \t\n"\'><=;|&(:'} strip="" i
	for ((i = ${#word} - 1; i >= 0; i--)); do
		if [[ $breaks == *"${word:i:1}"* ]]; then
			strip=${word:0:i+1}
			break
		fi
	done
	COMPREPLY=("${cands[@]#"$strip"}")
}

# Sets cands to the completions of value by the option's class: the listed
# values (enum), the last item of a comma list (passes, kinds), files, dirs.
_glow_values()
{
	local class=$1 values=$2 value=$3 head=""
	case $class in
	enum) mapfile -t cands < <(compgen -W "$values" -- "$value") ;;
	passes|kinds)
		if [[ $value == *,* ]]; then
			head=${value%,*},
			value=${value##*,}
		fi
		mapfile -t cands < <(compgen -W "$values" -- "$value")
		cands=("${cands[@]/#/$head}")
		;;
	file) mapfile -t cands < <(compgen -f -- "$value") ;;
	dir) mapfile -t cands < <(compgen -d -- "$value") ;;
	*) cands=() ;;
	esac
}
'''


def completion(tool, bin_dir, kinds):
    rows = [line.split("\t") for line in run([os.path.join(bin_dir, tool), "--help-completion"]).splitlines()]
    words, classes, values = [], {}, {}
    passes = None
    for name, cls, vals in rows:
        if cls == "flag":
            words.append(name)
            continue
        # long value options complete as -name= ; one-letter ones as -o FILE
        words.append(name + "=" if len(name.lstrip("-")) > 1 else name)
        classes[name] = cls
        if cls == "enum":
            values[name] = vals.replace("|", " ")
        elif cls == "passes":
            if passes is None:
                passes = pass_names(tool, bin_dir, any(r[0] == "-list-passes" for r in rows))
            values[name] = " ".join(passes)
        elif cls == "kinds":
            # glow-dot draws either IR, so its kinds are instruction kinds too
            values[name] = " ".join(kinds["node"] + (kinds["instr"] if tool == "glow-dot" else []))
    key = "_glow_" + "".join(c if c.isalnum() else "_" for c in tool)

    def assoc(d):
        return " ".join("[%s]=%s" % (k, shquote(v)) for k, v in d.items())

    return ("# bash completion of %s, generated from its option table (%s --help-completion)\n"
            "# by utils/install/gen-docs.py; do not edit.\n" % (tool, tool)
            + COMPLETE_FN
            + "\n%s_opts=%s\n" % (key, shquote(" ".join(words)))
            + "declare -gA %s_class=(%s)\n" % (key, assoc(classes))
            + "declare -gA %s_values=(%s)\n" % (key, assoc(values))
            + "complete -o bashdefault -o default -F _glow_complete %s\n" % tool)


def shquote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def main():
    ap = argparse.ArgumentParser(description="man pages and bash completion of the glow tools")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--list-kinds", required=True)
    ap.add_argument("--man-extra", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("tools", nargs="+")
    a = ap.parse_args()
    kinds = {"node": [], "instr": []}
    for line in run([a.list_kinds]).splitlines():
        level, name = line.split()
        kinds[level].append(name)
    for tool in a.tools:
        write_atomic(os.path.join(a.out, "man", "man1", tool + ".1"), man_page(tool, a.bin_dir, a.man_extra, a.tools))
        write_atomic(os.path.join(a.out, "bash-completion", "completions", tool), completion(tool, a.bin_dir, kinds))


if __name__ == "__main__":
    main()
