"""npyrand.py - writes a float32 .npy file of seeded uniform values.

Usage: npyrand.py [-seed N] D0xD1x... OUT.npy

Values are uniform in [-1, 1) from Python's own generator seeded with N, so
the same command gives the same bytes everywhere; the input of the bundles
under test/cross.
"""
import random
import struct
import sys

from seedargs import seed_args


def main(argv):
    parsed = seed_args(argv, "usage: npyrand.py [-seed N] D0xD1x... OUT.npy\n")
    if parsed is None:
        return 1
    seed, args = parsed
    dims = [int(d) for d in args[0].split("x")]
    n = 1
    for d in dims:
        n *= d
    rng = random.Random(seed)
    shape = "(%s)" % ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "")
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
    # NPY 1.0: magic, version, header length; the header padded with spaces
    # and a newline so that the data starts at a multiple of 64 bytes
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    with open(args[1], "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin-1"))
        f.write(struct.pack("<%df" % n, *(rng.uniform(-1.0, 1.0) for _ in range(n))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
