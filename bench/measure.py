#!/usr/bin/env python3
"""measure.py - times glow-opt and mlir-opt round trips of generated files.

Design: reads DIR/manifest.tsv written by gen_graph.py (file, format, node
count, bytes), runs the tool of each file's format `runs` times with the
output going to a file (`tool in -o out`), and measures each run by itself:
wall time with a monotonic clock around the child, CPU time from os.wait4's
rusage of that one child, peak RSS from GNU time's %M when /usr/bin/time is
GNU time, else from the same rusage (see run_once). The two
tools run alternately so that load from other processes hits both alike. The
median wall time of the runs is reported; peak RSS is the largest seen.

A pair is two files of the same stem (nodes.glow / nodes.mlir): the speedup is
mlir-opt's median time over glow-opt's on the same graph, by wall time and by
CPU time (user + system; on a loaded machine wall time also counts waiting
for a CPU, so both are shown). Targets:
  node-heavy  (nodes.*)    speedup >= 5
  weight-heavy (weights.*) speedup >= 2
  every .glow file          glow-opt peak RSS < 3 x input size
Megabytes are 10^6 bytes. Exit status 0 when every run succeeded (targets
missed are reported, not an error), 1 when a run failed.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

TARGET_SPEEDUP = {"nodes": 5.0, "weights": 2.0}
TARGET_RSS_RATIO = 3.0


def gnu_time():
    """Returns the path of GNU time if it is installed, else None."""
    path = "/usr/bin/time"
    if not os.access(path, os.X_OK):
        return None
    try:
        out = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return path if b"GNU" in out else None


def run_once(argv, timer, scratch):
    """Runs argv; returns (exit status, wall s, cpu s, peak RSS bytes, stderr).

    A child forked from this interpreter starts with the interpreter's pages
    mapped, and Linux keeps that high-water mark in the child's ru_maxrss
    across exec, so the rusage figure is never below this process's own RSS
    (about 15 MB). With GNU time the tool is forked from a small process and
    its %M is the tool's own peak; without it the rusage figure is used (it
    is exact whenever it exceeds that floor, as it does at benchmark sizes).
    """
    if timer:
        argv = [timer, "-f", "%M", "-o", scratch] + argv
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    rss = ru.ru_maxrss * 1024
    if timer and proc.returncode == 0:
        with open(scratch) as f:
            rss = int(f.read().split()[-1]) * 1024
    return (proc.returncode, wall, ru.ru_utime + ru.ru_stime, rss,
            err.decode("utf-8", "replace"))


def read_manifest(d):
    rows = []
    with open(os.path.join(d, "manifest.tsv")) as f:
        for line in f:
            name, fmt, nodes, size = line.rstrip("\n").split("\t")
            rows.append({"file": name, "fmt": fmt, "nodes": int(nodes), "bytes": int(size)})
    return rows


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="directory with manifest.tsv")
    ap.add_argument("--glow-opt", required=True)
    ap.add_argument("--mlir-opt", default="", help="empty: measure glow-opt only")
    ap.add_argument("--glow-arg", action="append", default=[], help="extra glow-opt argument")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    args = ap.parse_args(argv)

    tools = {"glow": [args.glow_opt] + args.glow_arg}
    if args.mlir_opt:
        tools["mlir"] = [args.mlir_opt]
    rows = [r for r in read_manifest(args.dir) if r["fmt"] in tools]
    for r in rows:
        r["wall"], r["cpu"], r["rss"] = [], [], 0
    load_before = os.getloadavg()
    timer = gnu_time()
    scratch = os.path.join(args.dir, "rss.txt")
    failed = False
    for i in range(args.runs):
        for r in rows:
            src = os.path.join(args.dir, r["file"])
            stem, ext = os.path.splitext(r["file"])
            out = os.path.join(args.dir, stem + ".out" + ext)
            argv_ = tools[r["fmt"]] + [src, "-o", out]
            rc, wall, cpu, rss, err = run_once(argv_, timer, scratch)
            sys.stderr.write("run %d: %s: %.3f s, %.1f MB%s\n" % (
                i + 1, " ".join(argv_), wall, rss / 1e6, "" if rc == 0 else ", exit %d" % rc))
            if rc != 0:
                sys.stderr.write(err[:4000])
                failed = True
                continue
            r["wall"].append(wall)
            r["cpu"].append(cpu)
            r["rss"] = max(r["rss"], rss)
            os.remove(out)
    if failed:
        print("some runs failed; no figures")
        return 1

    for r in rows:
        r["t"] = statistics.median(r["wall"])
        r["c"] = statistics.median(r["cpu"])
        r["tool"] = os.path.basename(tools[r["fmt"]][0])
        r["stem"] = os.path.splitext(r["file"])[0]
    by_pair = {}
    for r in rows:
        by_pair.setdefault(r["stem"], {})[r["fmt"]] = r

    head = ["file", "size MB", "tool", "seconds", "cpu s", "MB/s", "nodes/s", "peak RSS MB",
            "RSS/input", "speedup", "cpu speedup"]
    table = []
    for r in rows:
        pair = by_pair[r["stem"]]
        speed = cpu_speed = ""
        if r["fmt"] == "glow" and "mlir" in pair:
            speed = "%.2fx" % (pair["mlir"]["t"] / r["t"])
            cpu_speed = "%.2fx" % (pair["mlir"]["c"] / r["c"])
        table.append([r["file"], "%.1f" % (r["bytes"] / 1e6), r["tool"], "%.3f" % r["t"],
                      "%.3f" % r["c"], "%.1f" % (r["bytes"] / 1e6 / r["t"]),
                      "%.0f" % (r["nodes"] / r["t"]), "%.1f" % (r["rss"] / 1e6),
                      "%.2f" % (r["rss"] / r["bytes"]), speed, cpu_speed])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for t in table:
            print("| " + " | ".join(t) + " |")
    else:
        widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths)))

    print()
    print("load average %.2f before, %.2f after the runs on %d CPUs (wall time counts waiting "
          "for a CPU; cpu s does not)" % (load_before[0], os.getloadavg()[0], os.cpu_count()))
    print("peak RSS from %s" % ("GNU time %M" if timer else
                                "wait4 rusage (never below this script's own RSS)"))
    print("targets (median of %d runs):" % args.runs)
    for stem, pair in sorted(by_pair.items()):
        g = pair.get("glow")
        if g is None:
            continue
        if "mlir" in pair and stem in TARGET_SPEEDUP:
            want = TARGET_SPEEDUP[stem]
            for what, key in (("wall", "t"), ("cpu", "c")):
                sp = pair["mlir"][key] / g[key]
                print("  %-8s %-4s speedup over mlir-opt %.2fx (target >= %gx): %s" % (
                    stem, what, sp, want, "met" if sp >= want else "MISSED"))
        ratio = g["rss"] / g["bytes"]
        print("  %-8s glow-opt peak RSS %.2f x input (target < %gx): %s" % (
            stem, ratio, TARGET_RSS_RATIO, "met" if ratio < TARGET_RSS_RATIO else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
