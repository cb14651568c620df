#!/usr/bin/env python3
"""idx-make.py - writes an IDX file (the MNIST format) for the dataset
tests, with the Python standard library only.

    idx-make.py -o FILE [--gzip] [--code C] [--rank R] [--cut N] [--extra N]
                TYPE DIMS VALUE...

TYPE: ubyte (0x08), byte (0x09), short (0x0B), int (0x0C), float (0x0D),
double (0x0E). DIMS: comma-separated dimensions. VALUEs: one per element
('seq': 0, 1, 2, ... wrapping at 256 for bytes). --code and --rank
override the type byte and the rank byte of the header (bad files);
--cut N drops the last N bytes, --extra N appends N zero bytes,
--header-only writes no data (DIMS may then be huge).
"""
import argparse
import gzip
import struct

TYPES = {"ubyte": (0x08, "B"), "byte": (0x09, "b"), "short": (0x0B, "h"), "int": (0x0C, "i"),
         "float": (0x0D, "f"), "double": (0x0E, "d")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", required=True)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--code", type=lambda s: int(s, 0))
    ap.add_argument("--rank", type=int)
    ap.add_argument("--cut", type=int, default=0)
    ap.add_argument("--extra", type=int, default=0)
    ap.add_argument("--header-only", action="store_true")
    ap.add_argument("type", choices=TYPES)
    ap.add_argument("dims")
    ap.add_argument("values", nargs="*")
    a = ap.parse_args()
    code, fmt = TYPES[a.type]
    dims = [int(d) for d in a.dims.split(",")]
    n = 1
    for d in dims:
        n *= d
    if a.values == ["seq"]:
        vals = [i % 256 if fmt in "Bb" else i for i in range(n)]
        if fmt == "b":
            vals = [v - 256 if v > 127 else v for v in vals]
    else:
        vals = [float(v) if fmt in "fd" else int(v) for v in a.values]
    if a.header_only:
        vals = []
    elif len(vals) != n:
        ap.error("%d values for %d elements" % (len(vals), n))
    head = bytes([0, 0, a.code if a.code is not None else code, a.rank if a.rank is not None else len(dims)])
    head += b"".join(struct.pack(">I", d) for d in dims)
    data = head + struct.pack(">%d%s" % (len(vals), fmt), *vals) + bytes(a.extra)
    if a.cut:
        data = data[:-a.cut]
    with (gzip.open(a.o, "wb") if a.gzip else open(a.o, "wb")) as f:
        f.write(data)


if __name__ == "__main__":
    main()
