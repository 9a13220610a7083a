# The FlatBuffers walk of the Python test oracles (ref_conv.py,
# ref_posenet.py): a .tflite file's tables read with Debian's
# python3-flatbuffers by field slot, written apart from npukit's C reader.
import flatbuffers
import numpy as np
from flatbuffers.table import Table

N = flatbuffers.number_types


def root(path):
    """The Model table of a .tflite file."""
    buf = bytearray(open(path, "rb").read())
    return Table(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))


def field(t, slot):
    return t.Offset(4 + 2 * slot)


def sub(t, slot):
    o = field(t, slot)
    return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None


def tables(t, slot):
    o = field(t, slot)
    if not o:
        return []
    n, s = t.VectorLen(o), t.Vector(o)
    return [Table(t.Bytes, t.Indirect(s + 4 * i)) for i in range(n)]


def array(t, slot, dtype):
    o = field(t, slot) if t else 0
    if not o:
        return np.zeros(0, dtype)
    n, s = t.VectorLen(o), t.Vector(o)
    return np.frombuffer(bytes(t.Bytes[s:s + n * np.dtype(dtype).itemsize]), dtype)


def scalar(t, slot, kind, default):
    o = field(t, slot) if t else 0
    return t.Get(kind, o + t.Pos) if o else default


def string(t, slot):
    o = field(t, slot)
    return t.String(o + t.Pos).decode() if o else ""
