"""Checks a rendered image: check_image.py KIND FILE [MIN MAX].

png: the 8-byte signature, an IHDR chunk first, and width and height each
     within [MIN, MAX] pixels; prints "png WxH ok".
pdf: starts with %PDF- and ends with %%EOF; prints "pdf ok".
Exits 1 with a message otherwise."""
import struct
import sys

kind, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
if kind == "png":
    lo, hi = int(sys.argv[3]), int(sys.argv[4])
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("not a PNG signature")
    if data[12:16] != b"IHDR":
        sys.exit("no IHDR chunk first")
    w, h = struct.unpack(">II", data[16:24])
    if not (lo <= w <= hi and lo <= h <= hi):
        sys.exit("size %dx%d outside [%d, %d]" % (w, h, lo, hi))
    print("png size ok")
elif kind == "pdf":
    if not data.startswith(b"%PDF-"):
        sys.exit("no %PDF- header")
    if b"%%EOF" not in data[-32:]:
        sys.exit("no %%EOF trailer")
    print("pdf ok")
else:
    sys.exit("unknown kind " + kind)
