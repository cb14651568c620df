"""protowire.py - the protobuf wire format's varint, shared by onnx-make.py
and tensor-make.py (which write ONNX messages without the protobuf
package)."""


def varint(v):
    """v as a protobuf varint (negative numbers as their 64-bit two's
    complement, ten bytes)."""
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)
