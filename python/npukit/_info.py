"""npukit.info(path): format detection and summary, as `npukit info --json`."""
import ctypes
import os

from . import _lib

_STR, _INT, _UINT, _HEX, _FLOAT, _BOOL = range(6)


def _details(s):
    out = {}
    for i in range(s.count):
        kv = s.kv[i]
        key = kv.key.decode("utf-8", "replace")
        if kv.type == _STR:
            out[key] = kv.s.decode("utf-8", "replace")
        elif kv.type == _INT:
            out[key] = kv.v.i
        elif kv.type == _UINT:
            out[key] = kv.v.u
        elif kv.type == _HEX:
            out[key] = "0x%x" % kv.v.u
        elif kv.type == _FLOAT:
            out[key] = kv.v.f
        elif kv.type == _BOOL:
            out[key] = bool(kv.v.b)
    return out


def info(path):
    """Detect a file's format from its bytes and summarise it.

    Returns the dict `npukit info --json PATH` prints: "path", "format",
    "size", "description", "summary" (a one-line title, when there is one) and
    "details" (the format's facts). A file that is unrecognised or malformed
    raises npukit.FormatError (or another npukit.Error); when the file could
    still be described, the exception's .info holds that dict."""
    fmt, desc = ctypes.c_char_p(), ctypes.c_char_p()
    size = ctypes.c_uint64()
    s = _lib.Summary()
    described = ctypes.c_bool()
    err = _lib.NpkError()
    st = _lib.npk_bind_info(
        _lib.path_arg(path),
        ctypes.byref(fmt),
        ctypes.byref(desc),
        ctypes.byref(size),
        ctypes.byref(s),
        ctypes.byref(described),
        ctypes.byref(err),
    )
    d = {"path": os.fsdecode(path), "format": fmt.value.decode(), "size": size.value}
    if fmt.value != b"unknown":
        d["description"] = desc.value.decode()
    if described.value:
        if s.title:
            d["summary"] = s.title.decode("utf-8", "replace")
        d["details"] = _details(s)
    if st:
        e = _lib.error_from(st, err, path)
        e.info = d if described.value else None
        raise e
    return d
