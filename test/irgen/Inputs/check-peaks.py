"""check-peaks.py FILE: reads glow-irgen -print-schedule-stats lines and
fails unless every function's memory-order peak is at most its topological
order's. Prints one line per function checked."""
import re
import sys

pat = re.compile(r"schedule @(\S+): (\d+) nodes, peak live bytes: topo (\d+), memory (\d+) ")
seen = 0
for line in open(sys.argv[1]):
    m = pat.match(line)
    if not m:
        continue
    seen += 1
    topo, mem = int(m.group(3)), int(m.group(4))
    ok = mem <= topo
    print("%s @%s: memory %d %s topo %d" % ("ok" if ok else "WORSE", m.group(1), mem, "<=" if ok else ">", topo))
    if not ok:
        sys.exit(1)
if not seen:
    print("no schedule statistics found")
    sys.exit(1)
