#!/usr/bin/env python3
"""conformance.py - runs the ONNX conformance suite (test/onnx) and prints
pass/fail/xfail/unsupported counts per optimization level, per folder and
per op type, and the pass rate of the node cases whose graph inputs and
outputs are only float32, int64, int32 or bool tensors (the "core" subset,
788 cases in ONNX 1.12).

    utils/conformance.py [-b BUILD] [-O O0,O2] [-j N] [--folders node,...]
                         [--data DIR] [--results FILE] [--failures]
                         [--markdown] [--prune-xfail]

-b BUILD     the build directory whose test/ holds the configured lit suite
             (default: build)
--results F  summarize an existing lit JSON result file (lit -o F) instead
             of running the suite
--failures   also list each failing case with the first error line
--markdown   print the tables as Markdown (for docs/Conformance.md)
--prune-xfail
             rewrite test/onnx/xfail.txt without the 'case' rules of the
             cases that passed (XPASS) at every level run, and print a
             proposed rule (with the first error) for each FAIL case; the
             reasons of the rules that stay are not touched: check them

Only the Python standard library; lit from LLVM 14.
"""
import argparse
import collections
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "test", "onnx"))
import onnxcase  # noqa: E402

LIT = "/usr/lib/llvm-14/build/utils/lit/lit.py"
FOLDERS = "node,simple,pytorch-converted,pytorch-operator"
# lit result code -> column
COLUMNS = ["pass", "fail", "xfail", "xpass", "unsupported"]
CODES = {"PASS": "pass", "FAIL": "fail", "XFAIL": "xfail", "XPASS": "xpass", "UNSUPPORTED": "unsupported",
         "TIMEOUT": "fail", "UNRESOLVED": "fail"}


def run_lit(build, levels, jobs, folders, data, out):
    suite = os.path.join(build, "test", "onnx")
    argv = [sys.executable, LIT, "-q", "-j", str(jobs), "-o", out, "-D", "onnx_opt=" + levels,
            "-D", "onnx_folders=" + folders, "-D", "onnx_subset=none"]
    if data:
        argv += ["-D", "onnx_data=" + data]
    argv.append(suite)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def first_error(output):
    for line in output.splitlines():
        if "error:" in line:
            msg = line.split("error:", 1)[1].strip()
            if "model.onnx: " in msg:
                msg = msg.split("model.onnx: ", 1)[1]
            return msg[:160]
    for line in output.splitlines():
        if line.startswith("exit status") or "timed out" in line:
            return line
    return output.strip().splitlines()[-1][:160] if output.strip() else ""


def load(results, data):
    """[(level, Case, column, output)] from a lit JSON result file."""
    with open(results) as f:
        r = json.load(f)
    rows = []
    cache = {}
    for t in r["tests"]:
        name = t["name"].split(" :: ", 1)[-1]
        parts = name.split("/")
        if len(parts) < 4 or parts[-4] != "onnx":
            continue
        level, folder, case = parts[-3:]
        key = folder + "/" + case
        if key not in cache:
            cache[key] = onnxcase.Case(folder, case, os.path.join(data, folder, case))
        rows.append((level, cache[key], CODES.get(t["code"], "fail"), t.get("output", "")))
    return rows


def table(title, keys, counts, md):
    lines = []
    head = [title] + COLUMNS + ["total"]
    if md:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    else:
        lines.append("%-40s" % title + "".join("%12s" % h for h in head[1:]))
    for k in keys:
        c = counts[k]
        vals = [c[col] for col in COLUMNS] + [sum(c.values())]
        if md:
            lines.append("| " + " | ".join([k] + [str(v) for v in vals]) + " |")
        else:
            lines.append("%-40s" % k + "".join("%12d" % v for v in vals))
    return "\n".join(lines)


def summarize(rows, md, failures):
    out = []
    levels = sorted(set(r[0] for r in rows))
    by_level = collections.defaultdict(collections.Counter)
    core_level = {}
    for level, c, col, _ in rows:
        by_level[level][col] += 1
        if c.folder == "node" and c.is_core():
            core_level.setdefault(level, collections.Counter())[col] += 1
    out.append(("## " if md else "== ") + "per level")
    out.append("")
    out.append(table("level", levels, by_level, md))
    out.append("")
    for level in levels:
        cc = core_level.get(level, collections.Counter())
        out.append("core -%s: %d of %d pass (%.1f%%)%s" % (
            level, cc["pass"] + cc["xpass"], sum(cc.values()),
            100.0 * (cc["pass"] + cc["xpass"]) / max(1, sum(cc.values())), "  " if md else ""))
    out.append("")
    for level in levels:
        lr = [r for r in rows if r[0] == level]
        out.append(("## " if md else "== ") + "-" + level)
        out.append("")
        by_folder = collections.defaultdict(collections.Counter)
        for _, c, col, _ in lr:
            by_folder[c.folder][col] += 1
        out.append(table("folder", sorted(by_folder), by_folder, md))
        out.append("")
        core = [r for r in lr if r[1].folder == "node" and r[1].is_core()]
        cc = collections.Counter(r[2] for r in core)
        inscope = len(core) - cc["unsupported"]
        out.append("core node subset (inputs and outputs float32/int64/int32/bool): %d cases, %d pass "
                   "(%.1f%%); %d in scope (not unsupported), %d pass (%.1f%%); %d fail, %d xfail, %d xpass"
                   % (len(core), cc["pass"] + cc["xpass"], 100.0 * (cc["pass"] + cc["xpass"]) / max(1, len(core)),
                      inscope, cc["pass"] + cc["xpass"],
                      100.0 * (cc["pass"] + cc["xpass"]) / max(1, inscope), cc["fail"], cc["xfail"], cc["xpass"]))
        out.append("")
        by_op = collections.defaultdict(collections.Counter)
        for _, c, col, _ in lr:
            if c.folder == "node":
                by_op[c.main_op()][col] += 1
        out.append(("### " if md else "") + "node cases per op type (-%s)" % level)
        out.append("")
        out.append(table("op type", sorted(by_op, key=str.lower), by_op, md))
        out.append("")
        if failures:
            out.append(("### " if md else "") + "failures (-%s)" % level)
            out.append("")
            for _, c, col, text in lr:
                if col in ("fail", "xpass", "xfail"):
                    out.append("%s %s [%s] %s" % (col.upper(), c.key, c.main_op(), first_error(text)))
            out.append("")
    return "\n".join(out)


def prune_xfail(rows, path):
    """Deletes from the rule file at path the 'case' rules whose case was
    XPASS at every level it ran; returns (deleted keys, proposed lines for
    the FAIL cases)."""
    status = collections.defaultdict(set)
    for _, c, col, _ in rows:
        status[c.key].add(col)
    passed = set(k for k, cols in status.items() if cols == {"xpass"})
    kept, deleted = [], []
    with open(path) as f:
        for line in f:
            parts = line.split("#", 1)[0].split(None, 2)
            if len(parts) == 3 and parts[0].split("@")[0] == "case" and parts[1] in passed:
                deleted.append(parts[1])
                continue
            kept.append(line)
    with open(path, "w") as f:
        f.writelines(kept)
    proposed = []
    seen = set()
    for level, c, col, text in rows:
        if col == "fail" and c.key not in seen:
            seen.add(c.key)
            lv = sorted(lv for lv, c2, col2, _ in rows if c2.key == c.key and col2 == "fail")
            kind = "case" if len(lv) == len(set(r[0] for r in rows)) else "case@" + lv[0]
            proposed.append("%-6s %-68s %s" % (kind, c.key, first_error(text)))
    return deleted, proposed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("-O", "--levels", default="O0,O2,fp16,c-O0,c")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--folders", default=FOLDERS)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--results")
    ap.add_argument("--failures", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--prune-xfail", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print("conformance.py: no ONNX test data in %s (Debian: libonnx-testdata)" % a.data, file=sys.stderr)
        return 1
    results = a.results
    tmp = None
    if not results:
        fd, tmp = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        results = tmp
        run_lit(a.build, a.levels, a.jobs, a.folders, a.data, results)
    try:
        rows = load(results, a.data)
    finally:
        if tmp:
            os.unlink(tmp)
    if not rows:
        print("conformance.py: no results (is %s configured?)" % a.build, file=sys.stderr)
        return 1
    if a.prune_xfail:
        deleted, proposed = prune_xfail(rows, os.path.join(HERE, "..", "test", "onnx", "xfail.txt"))
        for k in deleted:
            print("deleted rule: " + k)
        for line in proposed:
            print("proposed rule: " + line)
        return 0
    print(("Run on %s.\n" % datetime.date.today().isoformat()))
    print(summarize(rows, a.markdown, a.failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
