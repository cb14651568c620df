#!/usr/bin/env python3
"""compare-builds.py - the speed of two builds of the toolchain, side by side.

For changes that must not change speed (a refactoring): the same workloads
run with the tools of build A (before) and build B (after), alternately, so
that load from other processes hits both alike, and the ratio B/A of the
median processor time (user + system of the one child, from os.wait4) is
printed per workload; processor time rather than wall time because the
machines are shared. The C backend's output is compared byte for byte
instead of timed: identical bundles run at identical speed.

Workloads (every model is one of utils/gen-models.py's networks, imported
once by build A's glow-import):
  graph-text   glow-opt FILE -o OUT on a generated 200,000-node graph
  ir-text      glow-llc FILE -o OUT on a generated 200,000-instruction program
  import       glow-import of each model
  opt-O2       glow-opt -O2 on each model
  irgen        glow-irgen on each model after -O2
  llc-O2       glow-llc -O2 on each model after irgen
  interp       glow-run (interpreter) of SqueezeNet on a seeded input
  c-codegen    glow-llc -O2 -backend=c -o DIR on each model (timed too)

usage: bench/compare-builds.py A_BIN_DIR B_BIN_DIR [--models DIR] [--runs N]
  A_BIN_DIR, B_BIN_DIR  the bin/ folders of the two builds
  --models   folder of light_<name>.onnx (default: B's ../models, which
             `cmake --build B --target glow-models` makes)
  --runs     runs per workload and build (default 9; the median is used)
Exit status 1 when a command fails or the C bundles differ.
"""

import argparse
import array
import os
import random
import statistics
import struct
import subprocess
import sys
import tempfile

MODELS = ("resnet50", "inception_v1", "densenet121")
HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_seconds(cmd, stdin_path=None, stdout_path=os.devnull):
    """Runs cmd (a list) and returns the child's user+system seconds."""
    with open(stdin_path or os.devnull, "rb") as si, open(stdout_path, "wb") as so:
        p = subprocess.Popen(cmd, stdin=si, stdout=so, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("compare-builds: failed: %s\n%s" % (" ".join(cmd), err))
    return ru.ru_utime + ru.ru_stime


def write_npy(path, shape, seed=1):
    """Writes a float32 .npy of the shape, uniform in [0, 1) from the seed."""
    n = 1
    for x in shape:
        n *= x
    rng = random.Random(seed)
    data = array.array("f", (rng.random() for _ in range(n)))
    if sys.byteorder != "little":
        data.byteswap()
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d, " % x for x in shape)
    head += " " * (63 - (10 + len(head)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() + data.tobytes())


def compare(name, make_cmd, runs, rows, **kw):
    """Times make_cmd(bin_dir) for both builds, alternately, runs times."""
    times = {"A": [], "B": []}
    for _ in range(runs):
        for build in ("A", "B"):
            times[build].append(cpu_seconds(make_cmd(BINS[build]), **kw))
    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    rows.append((name, a, b, b / a if a > 0 else float("nan")))
    print("%-28s A %8.3f s  B %8.3f s  B/A %.3f" % rows[-1], flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a_bin")
    ap.add_argument("b_bin")
    ap.add_argument("--models")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    global BINS
    BINS = {"A": os.path.abspath(args.a_bin), "B": os.path.abspath(args.b_bin)}
    models = args.models or os.path.join(os.path.dirname(BINS["B"]), "models")
    tool = lambda b, t: os.path.join(b, t)  # noqa: E731
    rows = []
    with tempfile.TemporaryDirectory(prefix="compare-builds.") as d:
        j = lambda *p: os.path.join(d, *p)  # noqa: E731
        subprocess.run([sys.executable, os.path.join(HERE, "gen_graph.py"), "--out-dir", d, "--nodes", "200000",
                        "--weight-mb", "0"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_ir.py"), "--out-dir", d, "--instrs", "200000",
                        "--weight-mb", "0"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        compare("graph-text", lambda b: [tool(b, "glow-opt"), j("nodes.glow"), "-o", j("out.glow")], args.runs,
                rows)
        gir = [f for f in os.listdir(d) if f.endswith(".gir")][0]
        compare("ir-text", lambda b: [tool(b, "glow-llc"), j(gir), "-o", j("out.gir")], args.runs, rows)
        a = BINS["A"]
        for m in MODELS:
            onnx = os.path.join(models, "light_%s.onnx" % m)
            cpu_seconds([tool(a, "glow-import"), onnx], stdout_path=j(m + ".glow"))
            cpu_seconds([tool(a, "glow-opt"), "-O2", j(m + ".glow")], stdout_path=j(m + ".o2.glow"))
            cpu_seconds([tool(a, "glow-irgen"), j(m + ".o2.glow")], stdout_path=j(m + ".gir"))
            cpu_seconds([tool(a, "glow-llc"), "-O2", j(m + ".gir")], stdout_path=j(m + ".o2.gir"))
            compare("import " + m, lambda b: [tool(b, "glow-import"), onnx], args.runs, rows)
            compare("opt-O2 " + m, lambda b: [tool(b, "glow-opt"), "-O2", j(m + ".glow")], args.runs, rows)
            compare("irgen " + m, lambda b: [tool(b, "glow-irgen"), j(m + ".o2.glow")], args.runs, rows)
            compare("llc-O2 " + m, lambda b: [tool(b, "glow-llc"), "-O2", j(m + ".gir")], args.runs, rows)
            for build in ("A", "B"):
                os.makedirs(j("c" + build, m))
            compare("c-codegen " + m,
                    lambda b: [tool(b, "glow-llc"), "-O2", "-backend=c", j(m + ".gir"), "-o",
                               j("c" + ("A" if b == BINS["A"] else "B"), m)], args.runs, rows)
            same = subprocess.run(["diff", "-r", "-q", j("cA", m), j("cB", m)], stdout=subprocess.DEVNULL).returncode == 0
            print("%-28s bundles %s" % ("c-bundle " + m, "identical" if same else "DIFFER"), flush=True)
            if not same:
                sys.exit("compare-builds: the C bundles of %s differ between the builds" % m)
        cpu_seconds([tool(a, "glow-import"), os.path.join(models, "light_squeezenet.onnx")],
                    stdout_path=j("sq.glow"))
        cpu_seconds([tool(a, "glow-opt"), "-O2", j("sq.glow")], stdout_path=j("sq.o2.glow"))
        cpu_seconds([tool(a, "glow-irgen"), j("sq.o2.glow")], stdout_path=j("sq.gir"))
        cpu_seconds([tool(a, "glow-llc"), "-O2", j("sq.gir")], stdout_path=j("sq.o2.gir"))
        write_npy(j("data_0.npy"), (1, 3, 224, 224))
        compare("interp squeezenet",
                lambda b: [tool(b, "glow-run"), j("sq.o2.gir"), "-input", "data_0=" + j("data_0.npy")], args.runs,
                rows)
    geo = statistics.geometric_mean([r[3] for r in rows])
    print("%-28s B/A %.3f (geometric mean of %d workloads; below 1: B is faster)" % ("all", geo, len(rows)))


if __name__ == "__main__":
    main()
