"""xavier.py - gives a graph module (.glow text) seeded random weights.

Usage: xavier.py [-seed N] IN.glow OUT.glow

The model-zoo files carry their weights as splats (ONNX files of a few KiB),
under which every channel computes the same value and a kernel that mixes
up channels or taps still passes. This rewrites each float constant of rank
2 or more given as `splat X` or `zero` into the graph IR's own seeded
initializer, `xavier FAN_IN seed S`, uniform in +-sqrt(3 / FAN_IN). FAN_IN
is half the true fan-in (the elements per output channel), i.e. He's
scaling, so that activations keep their magnitude through deep ReLU
networks instead of fading below the comparisons' absolute tolerance. S
depends on -seed and the constant's name only. Biases, batch-norm
statistics and other rank-1 constants stay as they are. The text stays
small (the initializer is materialized by whoever reads the module), so
every tool that reads the module sees the same weights.
"""
import re
import sys

from seedargs import seed_args
import zlib

CONST = re.compile(r'^(constant\s+(@(?:"(?:[^"\\]|\\.)*"|[\w.$-]+))\s*:\s*'
                   r'(float|float16|bfloat16)<([^>]*)>\s*=\s*)(splat\s+\S+|zero)\s*$')


def main(argv):
    parsed = seed_args(argv, "usage: xavier.py [-seed N] IN.glow OUT.glow\n")
    if parsed is None:
        return 1
    seed, args = parsed
    with open(args[0], encoding="utf-8") as f:
        lines = f.read().split("\n")
    changed = 0
    for i, line in enumerate(lines):
        m = CONST.match(line)
        if not m:
            continue
        dims = [int(d) for d in m.group(4).split("x")] if m.group(4).strip() else []
        if len(dims) < 2 or dims[0] == 0:
            continue
        numel = 1
        for d in dims:
            numel *= d
        fan = numel // dims[0] / 2.0
        s = (zlib.crc32(m.group(2).encode("utf-8")) ^ (seed * 0x9E3779B1)) & 0xFFFFFFFF
        lines[i] = "%sxavier %r seed %d" % (m.group(1), fan if fan > 0 else 1.0, s + 1)
        changed += 1
    if changed == 0:
        sys.stderr.write("xavier.py: error: no splat or zero float constant of rank 2 or more in %s\n" % args[0])
        return 1
    with open(args[1], "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
