#!/usr/bin/env python3
"""npy_uniform.py OUT DIMS - writes seeded uniform [0, 1) float32 values
(random.Random(0)) of shape DIMS ("1,3,224,224") to the .npy file OUT,
without NumPy: the inputs of gpu-check.sh and opencl.sh."""
import random, struct, sys

dims = [int(d) for d in sys.argv[2].split(",")]
n = 1
for d in dims:
    n *= d
rng = random.Random(0)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (", ".join(map(str, dims)) + ("," if len(dims) == 1 else ""))
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(struct.pack("<%df" % n, *(rng.random() for _ in range(n))))
