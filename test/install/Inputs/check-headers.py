"""check-headers.py INCLUDE_DIR FLAGS_FILE: compiles every header under
INCLUDE_DIR on its own (a file that includes only it) with the compiler
flags in FLAGS_FILE (pkg-config's output), prints "ok PATH" or "FAIL PATH"
and the compiler's messages per header, and exits 1 if any failed."""
import os
import subprocess
import sys

inc, flags_file = sys.argv[1], sys.argv[2]
with open(flags_file) as f:
    flags = f.read().split()
bad = 0
for root, _, files in sorted(os.walk(inc)):
    for name in sorted(files):
        if not name.endswith(".h"):
            continue
        rel = os.path.relpath(os.path.join(root, name), inc)
        src = '#include "%s"\n' % rel
        r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only",
                            "-x", "c", "-"] + flags, input=src, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode:
            bad += 1
            print("FAIL %s\n%s" % (rel, r.stdout))
        else:
            print("ok %s" % rel)
sys.exit(1 if bad else 0)
