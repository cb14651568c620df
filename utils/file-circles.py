#!/usr/bin/env python3
"""file-circles.py - finds circles of files inside a folder of C sources.

    utils/file-circles.py [--root DIR] [--skip PATH]... [-v] [TOP...]

For every folder under each TOP (default: lib backends tools, relative to
--root, the source tree this script belongs to), each folder on its own
(a file depends only on files of its own folder, never across folders),
builds the graph "A.c uses a non-static function defined in B.c": A's text
calls it or takes its address, in a function body, an initializer or a
#define body of A. Prototypes, comments, string and character literals,
member names (`x.fn`, `p->fn`), parameters and local variables that
shadow a function, and the other preprocessor lines do not count, and a
name that reaches A only through a table file it includes
(an X-macro row of a .def file) does not either: A depends on what its
own text names. Each strongly connected component of two or more files
is a circle, printed as a closed walk through all of its files,

    FOLDER: a.c -> b.c (fn) -> a.c (fn2)

the function in parentheses being one (the first by name) that the file
before the arrow uses from the file after it; -v prints, below each
circle, every edge inside it with all the functions it uses.

--skip PATH     leave PATH (relative to --root) out: a folder, or one .c
                file of a folder; repeatable. A skip that is no longer
                needed (the folder has no circle, or none that goes
                through the file) gets a note on stderr, so a stale skip
                is noticed. A skip that names neither is an error.

Exit status: 0 without circles, 1 with circles (printed on stdout),
2 on a usage error (an unknown option, a TOP that is not a folder, a
--skip that is neither a folder nor a .c file). Only the Python standard
library.
"""
import argparse
import os
import re
import sys
from collections import deque

# One token of C: an identifier, a number, or one punctuation character
# (the parser below needs no multi-character operators except `->`).
TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|\S")
KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed
sizeof static struct switch typedef union unsigned void volatile while
_Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
_Static_assert _Thread_local
""".split())


def strip_c(text):
	"""Returns (code, macros): TEXT without comments, string and character
	literals (each replaced by a space, newlines kept) and without
	preprocessor lines; MACROS is the text of the #define bodies (the
	macro's name and parameters removed), whose names count as uses."""
	out = []
	i, n = 0, len(text)
	while i < n:
		c = text[i]
		if c == "/" and text.startswith("/*", i):
			j = text.find("*/", i + 2)
			j = n if j < 0 else j + 2
			out.append("\n" * text.count("\n", i, j) or " ")
			i = j
		elif c == "/" and text.startswith("//", i):
			j = text.find("\n", i)
			i = n if j < 0 else j
		elif c in "\"'":
			j = i + 1
			while j < n and text[j] != c and text[j] != "\n":
				j += 2 if text[j] == "\\" else 1
			out.append(" ")
			i = j + 1
		else:
			out.append(c)
			i += 1
	code_lines, macros = [], []
	in_directive = is_define = False
	for line in "".join(out).split("\n"):
		stripped = line.strip()
		if in_directive:  # a continuation line of a directive
			if is_define:
				macros.append(stripped)
		elif stripped.startswith("#"):
			m = re.match(r"#\s*define\s+[A-Za-z_]\w*(\([^)]*\))?", stripped)
			is_define = m is not None
			if is_define:
				macros.append(stripped[m.end():])
		else:
			code_lines.append(line)
			continue
		in_directive = stripped.endswith("\\")
		code_lines.append("")
	return "\n".join(code_lines), " ".join(m.rstrip("\\") for m in macros)


def scan_file(path):
	"""Returns (defined, used) for the C file PATH: the names of its
	non-static functions, and every identifier its function bodies,
	initializers and #define bodies use (not after `.` or `->`)."""
	with open(path, encoding="utf-8", errors="replace") as f:
		code, macros = strip_c(f.read())
	tokens = TOKEN.findall(code)
	defined, used = set(), set()
	decl = []  # tokens of the top-level declaration being read
	i, n = 0, len(tokens)

	def body_end(start):
		"""Index after the brace group that opens at START."""
		depth = 0
		for j in range(start, n):
			if tokens[j] == "{":
				depth += 1
			elif tokens[j] == "}":
				depth -= 1
				if depth == 0:
					return j + 1
		return n

	def use_range(lo, hi, own=frozenset()):
		"""Adds the names used in tokens[lo:hi] but those in OWN."""
		for j in range(lo, hi):
			t = tokens[j]
			if is_name(t) and t not in own and (j == 0 or tokens[j - 1] not in (".", "->")):
				used.add(t)

	while i < n:
		t = tokens[i]
		if t == ";":
			decl = []
			i += 1
		elif t == "=" and decl.count("(") == decl.count(")"):
			# an initializer: everything to the declaration's end uses
			end = i
			while end < n and tokens[end] != ";":
				end = body_end(end) if tokens[end] == "{" else end + 1
			use_range(i + 1, end)
			decl = []
			i = end + 1
		elif t == "{":
			end = body_end(i)
			name = function_name(decl)
			if name is not None:
				if "static" not in decl:
					defined.add(name)
				use_range(i + 1, end - 1, params(decl) | locals_of(tokens, i + 1, end - 1))
				decl = []
			else:
				decl.append("{}")  # struct, union or enum body: skipped
			i = end
		else:
			decl.append(t)
			i += 1
	for t in TOKEN.findall(macros):
		if is_name(t):
			used.add(t)
	return defined, used


def is_name(t):
	"""Whether token T is an identifier that is not a keyword."""
	return (t[0].isalpha() or t[0] == "_") and t not in KEYWORDS


def params(decl):
	"""The parameter names of a function definition's declaration DECL:
	in each parameter of the list after the name, the name inside
	`( * name )` or else its last identifier (a function's parameter
	that shares a name with a function of the folder shadows it)."""
	start = decl.index("(", decl.index(function_name(decl)))
	names, chunk, depth = set(), [], 0
	for t in decl[start + 1:]:
		if t == "(":
			depth += 1
		elif t == ")":
			if depth == 0:
				break
			depth -= 1
		if t == "," and depth == 0:
			names |= param_name(chunk)
			chunk = []
		else:
			chunk.append(t)
	return names | param_name(chunk)


def param_name(chunk):
	"""The name one parameter's tokens CHUNK declare, as a set (empty for
	`void` or an unnamed parameter)."""
	for k in range(len(chunk) - 1):
		if chunk[k] == "*" and k > 0 and chunk[k - 1] == "(" and is_name(chunk[k + 1]):
			return {chunk[k + 1]}
	last = max((k for k, t in enumerate(chunk) if is_name(t)), default=0)
	return {chunk[last]} if last > 0 else set()  # the first token is a type


NOT_A_TYPE = frozenset(("return", "case", "goto", "sizeof", "else", "do"))


def locals_of(tokens, lo, hi):
	"""The names a function body tokens[lo:hi] declares as variables: an
	identifier after a type (an identifier, a keyword or a `*` after one)
	and before `=`, `;`, `,` or `[`. Scopes are not told apart: a local
	shadows a function of the folder in the whole body."""
	names = set()
	for j in range(lo + 1, hi - 1):
		t = tokens[j]
		if not is_name(t) or tokens[j + 1] not in ("=", ";", ",", "["):
			continue
		prev = tokens[j - 1]
		if prev == "*":
			k = j - 1
			while k > lo and tokens[k] == "*":
				k -= 1
			prev = tokens[k]
		if (prev[0].isalpha() or prev[0] == "_") and prev not in NOT_A_TYPE:
			names.add(t)
	return names


def function_name(decl):
	"""The name a top-level declaration DECL (tokens before a `{`) defines
	as a function, or None when the brace opens a struct, union, enum or
	initializer: the identifier before the first `(` at parenthesis depth
	0, when the declaration ends in `)` (attributes included)."""
	if not decl or decl[-1] != ")" or decl[0] == "typedef":
		return None
	k = 0
	while k < len(decl):
		if decl[k] == "__attribute__":  # skip its (( ... ))
			depth, k = 0, k + 1
			while k < len(decl):
				depth += {"(": 1, ")": -1}.get(decl[k], 0)
				k += 1
				if depth == 0:
					break
			continue
		if decl[k] == "(":
			name = decl[k - 1] if k > 0 else ""
			if not (name[:1].isalpha() or name[:1] == "_") or name in KEYWORDS or name.isupper():
				return None  # a function pointer's declarator, or a macro's use
			return name
		k += 1
	return None


def folder_graph(folder, leave_out=()):
	"""Returns {file: {dependency: sorted function names}} for the .c files
	directly in FOLDER but those named in LEAVE_OUT, over their non-static
	functions."""
	files = sorted(f for f in os.listdir(folder)
	               if f.endswith(".c") and f not in leave_out and
	               os.path.isfile(os.path.join(folder, f)))
	scans = {f: scan_file(os.path.join(folder, f)) for f in files}
	owners = {}
	for f in files:
		for name in scans[f][0]:
			owners.setdefault(name, []).append(f)
	graph = {}
	for f in files:
		edges = {}
		for name in scans[f][1]:
			for owner in owners.get(name, ()):
				if owner != f and name not in scans[f][0]:
					edges.setdefault(owner, []).append(name)
		graph[f] = {g: sorted(names) for g, names in edges.items()}
	return graph


def components(graph):
	"""Strongly connected components of GRAPH with two or more nodes, each
	sorted, in order of their first node (Tarjan's algorithm, iterative)."""
	index, low, on_stack, stack, result = {}, {}, set(), [], []
	counter = 0
	for root in sorted(graph):
		if root in index:
			continue
		work = [(root, iter(sorted(graph[root])))]
		index[root] = low[root] = counter
		counter += 1
		stack.append(root)
		on_stack.add(root)
		while work:
			node, succ = work[-1]
			advanced = False
			for nxt in succ:
				if nxt not in index:
					index[nxt] = low[nxt] = counter
					counter += 1
					stack.append(nxt)
					on_stack.add(nxt)
					work.append((nxt, iter(sorted(graph[nxt]))))
					advanced = True
					break
				if nxt in on_stack:
					low[node] = min(low[node], index[nxt])
			if advanced:
				continue
			work.pop()
			if work:
				low[work[-1][0]] = min(low[work[-1][0]], low[node])
			if low[node] == index[node]:
				comp = []
				while True:
					w = stack.pop()
					on_stack.discard(w)
					comp.append(w)
					if w == node:
						break
				if len(comp) > 1:
					result.append(sorted(comp))
	return sorted(result)


def shortest_path(graph, members, src, dst):
	"""Shortest path SRC..DST (a list of files, both ends included) inside
	MEMBERS, breadth first, ties broken by file name."""
	prev = {src: None}
	queue = deque([src])
	while queue:
		node = queue.popleft()
		for nxt in sorted(graph[node]):
			if nxt in members and nxt not in prev:
				prev[nxt] = node
				if nxt == dst:
					path = [dst]
					while prev[path[-1]] is not None:
						path.append(prev[path[-1]])
					return path[::-1]
				queue.append(nxt)
	raise AssertionError("no path inside a strongly connected component")


def closed_walk(graph, comp):
	"""A closed walk through every file of the component COMP: from its
	first file, to the nearest file not yet visited, and back."""
	members = set(comp)
	walk = [comp[0]]
	todo = set(comp[1:])
	while todo:
		best = None
		for target in sorted(todo):
			path = shortest_path(graph, members, walk[-1], target)
			if best is None or len(path) < len(best):
				best = path
		walk.extend(best[1:])
		todo -= set(best)
	walk.extend(shortest_path(graph, members, walk[-1], comp[0])[1:])
	return walk


def stale_skip(path):
	"""Notes on stderr that --skip PATH changes nothing any more."""
	print("file-circles: note: no circle goes through %s; --skip %s is no longer needed"
	      % (path, path), file=sys.stderr)


def main():
	default_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	ap = argparse.ArgumentParser(prog="file-circles",
	                             description="Circles of files inside a folder of C sources.")
	ap.add_argument("tops", metavar="TOP", nargs="*", default=["lib", "backends", "tools"],
	                help="folders to scan, each subfolder on its own (default: lib backends tools)")
	ap.add_argument("--root", default=default_root,
	                help="the tree TOP and --skip are relative to (default: this script's source tree)")
	ap.add_argument("--skip", action="append", default=[], metavar="PATH",
	                help="leave PATH out: a folder or one .c file (repeatable)")
	ap.add_argument("-v", "--verbose", action="store_true",
	                help="also print every edge of each circle with all its functions")
	args = ap.parse_args()

	root = args.root
	for top in args.tops:
		if not os.path.isdir(os.path.join(root, top)):
			ap.error("TOP '%s' is not a folder under %s" % (top, root))
	skips, skip_files = set(), {}
	for skip in args.skip:
		norm = os.path.normpath(skip)
		path = os.path.join(root, norm)
		if os.path.isdir(path):
			skips.add(norm)
		elif os.path.isfile(path) and norm.endswith(".c"):
			skip_files.setdefault(os.path.dirname(norm), set()).add(os.path.basename(norm))
		else:
			ap.error("--skip '%s' is neither a folder nor a .c file under %s" % (skip, root))

	folders = []
	for top in args.tops:
		for dirpath, dirnames, _ in os.walk(os.path.join(root, top)):
			dirnames.sort()
			folders.append(os.path.relpath(dirpath, root))
	found = 0
	for folder in sorted(set(folders)):
		graph = folder_graph(os.path.join(root, folder))
		comps = components(graph)
		if folder in skips:
			if not comps:
				stale_skip(folder)
			continue
		left_out = skip_files.get(folder, set())
		for name in sorted(left_out):
			if not any(name in comp for comp in comps):
				stale_skip(os.path.join(folder, name))
		if left_out:
			graph = folder_graph(os.path.join(root, folder), left_out)
			comps = components(graph)
		for comp in comps:
			found += 1
			walk = closed_walk(graph, comp)
			text = walk[0]
			for a, b in zip(walk, walk[1:]):
				text += " -> %s (%s)" % (b, graph[a][b][0])
			print("%s: %s" % (folder, text))
			if args.verbose:
				for a in comp:
					for b in sorted(graph[a]):
						if b in comp:
							print("  %s -> %s: %s" % (a, b, ", ".join(graph[a][b])))
	for skip in sorted((skips | set(skip_files)) - set(folders)):
		print("file-circles: note: --skip %s is outside the folders scanned" % skip, file=sys.stderr)
	return 1 if found else 0


if __name__ == "__main__":
	sys.exit(main())
