#!/usr/bin/env python3
"""calib-batch.py OUT.npy N D1,D2,... - a calibration batch of N seeded
uniform [0, 1) float images of shape D1 x D2 x ... (one more leading
dimension: glow-run -profile takes one example per leading index)."""
import random
import struct
import sys

out, n, dims = sys.argv[1], int(sys.argv[2]), [int(d) for d in sys.argv[3].split(",")]
rng = random.Random(14)
count = n
for d in dims:
    count *= d
shape = "(%s)" % ", ".join(str(d) for d in [n] + dims)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    f.write(struct.pack("<%df" % count, *[rng.random() for _ in range(count)]))
