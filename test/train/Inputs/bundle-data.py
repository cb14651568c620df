#!/usr/bin/env python3
"""bundle-data.py - synthetic Fashion-MNIST-shaped IDX files (uncompressed,
or gzip with --gzip) for the training bundle's tests, with the Python
standard library only: N images of 28 x 28 unsigned bytes whose bright
quadrant tells the class, and their N labels in [0, 10).

    bundle-data.py N IMAGES LABELS [--gzip | --npy-labels]

--npy-labels writes the labels as a .npy file of int64 instead.
"""
import gzip
import struct
import sys


def main():
    n, images, labels = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    opener = gzip.open if "--gzip" in sys.argv[4:] else open
    pix = bytearray()
    lab = bytearray()
    for i in range(n):
        c = (i * 7 + i // 10) % 10
        lab.append(c)
        for y in range(28):
            for x in range(28):
                v = (i * 31 + y * 7 + x * 13) % 64
                if (y // 7) * 4 + x // 7 == c:
                    v += 160
                pix.append(v)
    with opener(images, "wb") as f:
        f.write(bytes([0, 0, 8, 3]) + struct.pack(">3I", n, 28, 28) + bytes(pix))
    with opener(labels, "wb") as f:
        if "--npy-labels" in sys.argv[4:]:
            hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % n
            hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
            f.write(struct.pack("<%dq" % n, *lab))
        else:
            f.write(bytes([0, 0, 8, 1]) + struct.pack(">I", n) + bytes(lab))


if __name__ == "__main__":
    main()
