"""The shared library through ctypes: loading, mirrored structs, prototypes,
errors and tensor ownership. Everything else in the package is built on this.

Which library is loaded (the first that exists):
  1. $NPUKIT_LIBRARY (a path; e.g. build/src/libnpukit.so for the build tree)
  2. the library `make install` installed next to this package (_install.py)
  3. libnpukit.so.<major>.<minor> through the dynamic loader (ld.so.cache,
     LD_LIBRARY_PATH), then in <sys.prefix>/lib and /usr/local/lib
"""
import ctypes
import ctypes.util
import os
import sys
import weakref

import numpy as np

VERSION = "0.1.0"
SONAME = "libnpukit.so." + ".".join(VERSION.split(".")[:2])


def _candidates():
    env = os.environ.get("NPUKIT_LIBRARY")
    if env:
        return [env], True
    out = []
    try:
        from . import _install  # written by `make install`

        out.append(os.path.normpath(os.path.join(os.path.dirname(__file__), _install.LIBRARY)))
    except ImportError:
        pass
    out.append(SONAME)
    found = ctypes.util.find_library("npukit")
    if found:
        out.append(found)
    for d in (os.path.join(sys.prefix, "lib"), "/usr/local/lib"):
        for sub in ("", getattr(sys.implementation, "_multiarch", "")):
            out.append(os.path.join(d, sub, SONAME))
    return out, False


def _load():
    names, from_env = _candidates()
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name), name
        except OSError as e:
            errors.append("%s: %s" % (name, e))
            if from_env:
                break
    raise ImportError(
        "npukit: cannot load the npukit library (%s). Build it (make) and set "
        "NPUKIT_LIBRARY=/path/to/libnpukit.so, or install it (make install)." % "; ".join(errors)
    )


lib, LIBRARY_PATH = _load()

# ---- mirrored structs (checked against the library below) ----

c_size = ctypes.c_size_t


class NpkError(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("has_offset", ctypes.c_bool),
        ("offset", ctypes.c_uint64),
        ("msg", ctypes.c_char * 256),
        ("input", ctypes.c_int),  # which input of several the error is about
    ]


MAX_DIMS = 8


class Tensor(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("data", ctypes.c_void_p),
        ("nbytes", c_size),
        ("src_shape_offset", ctypes.c_uint64),
        ("src_data_offset", ctypes.c_uint64),
        ("src_fortran", ctypes.c_bool),
    ]


class TensorSet(ctypes.Structure):
    _fields_ = [("items", ctypes.POINTER(Tensor)), ("count", c_size), ("cap", c_size)]


class View(ctypes.Structure):
    _fields_ = [
        ("index", ctypes.c_int32),
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_int8),
        ("ndim", ctypes.c_uint32),
        ("dims", ctypes.c_int32 * 8),
        ("data", ctypes.c_void_p),
        ("bytes", c_size),
        ("scale", ctypes.c_float),
        ("zero_point", ctypes.c_int32),
        ("q", ctypes.c_void_p),
        ("is_const", ctypes.c_bool),
    ]


class KvValue(ctypes.Union):
    _fields_ = [
        ("i", ctypes.c_int64),
        ("u", ctypes.c_uint64),
        ("f", ctypes.c_double),
        ("b", ctypes.c_bool),
    ]


class Kv(ctypes.Structure):
    _fields_ = [
        ("key", ctypes.c_char * 40),
        ("type", ctypes.c_int),
        ("v", KvValue),
        ("s", ctypes.c_char * 160),
    ]


class Summary(ctypes.Structure):
    _fields_ = [
        ("title", ctypes.c_char * 160),
        ("kv", Kv * 48),
        ("count", ctypes.c_int),
        ("malformed", ctypes.c_bool),
    ]


PROGRESS_FN = ctypes.CFUNCTYPE(
    ctypes.c_bool, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64
)


class Progress(ctypes.Structure):
    _fields_ = [("fn", PROGRESS_FN), ("user", ctypes.c_void_p)]


class MgkLayer(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_int32),
        ("gru", ctypes.c_bool),
        ("usable", ctypes.c_bool),
        ("requant_ok", ctypes.c_bool),
        ("name", ctypes.c_void_p),
        ("kernel", ctypes.c_void_p),
        ("name_len", ctypes.c_uint32),
        ("kernel_len", ctypes.c_uint32),
        ("problem", ctypes.c_char * 160),
        ("requant_form", ctypes.c_char * 32),
        ("bits", ctypes.c_int32),
        ("in_channels", ctypes.c_int32),
        ("out_channels", ctypes.c_int32),
        ("kernel_h", ctypes.c_int32),
        ("kernel_w", ctypes.c_int32),
        ("weight_shape", ctypes.c_int32 * 7),
        ("stride", ctypes.c_int32 * 8),
        ("dilation", ctypes.c_int32 * 8),
        ("pads", ctypes.c_int32 * 8),
        ("nstride", ctypes.c_uint32),
        ("ndilation", ctypes.c_uint32),
        ("npads", ctypes.c_uint32),
        ("act", ctypes.c_int32),
        ("record_offset", ctypes.c_uint64),
        ("directions", ctypes.c_int32),
        ("batch", ctypes.c_int32),
        ("seq", ctypes.c_int32),
        ("input_size", ctypes.c_int32),
        ("hidden_size", ctypes.c_int32),
    ]


class Cnn2Opts(ctypes.Structure):
    _fields_ = [
        ("border", ctypes.c_int),
        ("activation", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("threads", ctypes.c_uint),
        ("reference", ctypes.c_bool),
        ("blend", ctypes.c_float),
    ]


# ---- prototypes ----

P = ctypes.POINTER
vp = ctypes.c_void_p
cp = ctypes.c_char_p
st = ctypes.c_int  # npk_status
u8p = P(ctypes.c_uint8)
E = P(NpkError)


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


npk_version = _fn("npk_version", cp)
npk_features = _fn("npk_features", cp)
npk_commit = _fn("npk_commit", cp)
npk_status_name = _fn("npk_status_name", cp, ctypes.c_int)
npk_bind_sizeof = _fn("npk_bind_sizeof", c_size, cp)
npk_bind_set_take = _fn("npk_bind_set_take", P(Tensor), P(TensorSet), c_size)
npk_bind_set_release = _fn("npk_bind_set_release", None, P(TensorSet))
npk_bind_tensor_release = _fn("npk_bind_tensor_release", None, P(Tensor))
npk_bind_free = _fn("npk_bind_free", None, vp)
npk_write_file = _fn("npk_write_file", st, cp, vp, c_size, E)
npk_bind_info = _fn(
    "npk_bind_info", st, cp, P(cp), P(cp), P(ctypes.c_uint64), P(Summary), P(ctypes.c_bool), E
)
# TFLite
npk_bind_tfl_open = _fn("npk_bind_tfl_open", st, cp, vp, c_size, ctypes.c_int, P(vp), E)
npk_bind_tfl_free = _fn("npk_bind_tfl_free", None, vp)
npk_bind_tfl_interp = _fn("npk_bind_tfl_interp", vp, vp)
npk_bind_tfl_dtype = _fn("npk_bind_tfl_dtype", ctypes.c_int, ctypes.c_int)
npk_bind_tfl_run = _fn("npk_bind_tfl_run", st, vp, ctypes.c_uint64, P(Progress), E)
npk_tfl_interp_ninputs = _fn("npk_tfl_interp_ninputs", ctypes.c_uint32, vp)
npk_tfl_interp_noutputs = _fn("npk_tfl_interp_noutputs", ctypes.c_uint32, vp)
npk_tfl_interp_input = _fn("npk_tfl_interp_input", st, vp, ctypes.c_uint32, P(View), E)
npk_tfl_interp_output = _fn("npk_tfl_interp_output", st, vp, ctypes.c_uint32, P(View), E)
npk_tfl_type_name = _fn("npk_tfl_type_name", cp, ctypes.c_int)
# Edge TPU
npk_bind_etpu_open = _fn("npk_bind_etpu_open", st, cp, vp, c_size, P(vp), E)
npk_bind_etpu_free = _fn("npk_bind_etpu_free", None, vp)
npk_bind_etpu_bytes = _fn("npk_bind_etpu_bytes", vp, vp, P(c_size))
npk_bind_etpu_dense_size = _fn("npk_bind_etpu_dense_size", st, vp, P(c_size), E)
npk_bind_etpu_weights = _fn("npk_bind_etpu_weights", st, vp, vp, vp, E)
npk_bind_etpu_set_weights = _fn("npk_bind_etpu_set_weights", st, vp, vp, vp, P(c_size), E)
npk_bind_etpu_matmul = _fn("npk_bind_etpu_matmul", st, vp, vp, c_size, vp, E)
npk_bind_etpu_device = _fn("npk_bind_etpu_device", st, vp, cp, vp, c_size, ctypes.c_uint, E)
npk_bind_etpu_ninputs = _fn("npk_bind_etpu_ninputs", ctypes.c_uint32, vp)
npk_bind_etpu_noutputs = _fn("npk_bind_etpu_noutputs", ctypes.c_uint32, vp)
npk_bind_etpu_input_name = _fn("npk_bind_etpu_input_name", cp, vp, ctypes.c_uint32)
npk_bind_etpu_output_name = _fn("npk_bind_etpu_output_name", cp, vp, ctypes.c_uint32)
npk_bind_etpu_run = _fn(
    "npk_bind_etpu_run", st, vp, P(Tensor), ctypes.c_uint32, ctypes.c_bool, P(P(TensorSet)), E
)
npk_bind_etpu_graph_open = _fn(
    "npk_bind_etpu_graph_open", st, vp, cp, vp, c_size, ctypes.c_uint, cp, ctypes.c_int, E
)
npk_bind_etpu_graph_interp = _fn("npk_bind_etpu_graph_interp", vp, vp)
npk_bind_etpu_graph_run = _fn("npk_bind_etpu_graph_run", st, vp, ctypes.c_uint64, P(Progress), E)
# RKNPU whole networks
npk_bind_rk_open = _fn(
    "npk_bind_rk_open", st, cp, vp, c_size, ctypes.c_int, ctypes.c_int, P(vp), E
)
npk_bind_rk_load = _fn("npk_bind_rk_load", st, cp, ctypes.c_int, P(vp), E)
npk_bind_rk_free = _fn("npk_bind_rk_free", None, vp)
npk_bind_rk_device = _fn("npk_bind_rk_device", st, vp, cp, cp, ctypes.c_int, E)
npk_bind_rk_exec = _fn("npk_bind_rk_exec", vp, vp)
npk_bind_rk_stats = _fn("npk_bind_rk_stats", None, vp, P(ctypes.c_uint64))
npk_bind_rk_run = _fn("npk_bind_rk_run", st, vp, ctypes.c_uint64, P(Progress), E)
npk_rk_net_ninputs = _fn("npk_rk_net_ninputs", ctypes.c_uint32, vp)
npk_rk_net_noutputs = _fn("npk_rk_net_noutputs", ctypes.c_uint32, vp)
npk_rk_net_input = _fn("npk_rk_net_input", st, vp, ctypes.c_uint32, P(View), E)
npk_rk_net_output = _fn("npk_rk_net_output", st, vp, ctypes.c_uint32, P(View), E)
# MGK
npk_bind_mgk_open = _fn("npk_bind_mgk_open", st, cp, vp, c_size, P(vp), E)
npk_bind_mgk_free = _fn("npk_bind_mgk_free", None, vp)
npk_bind_mgk_bytes = _fn("npk_bind_mgk_bytes", vp, vp, P(c_size))
npk_bind_mgk_nlayers = _fn("npk_bind_mgk_nlayers", c_size, vp)
npk_bind_mgk_layer_get = _fn("npk_bind_mgk_layer_get", st, vp, c_size, P(MgkLayer), E)
npk_bind_mgk_extract = _fn("npk_bind_mgk_extract", st, vp, P(P(TensorSet)), E)
npk_bind_mgk_replace = _fn(
    "npk_bind_mgk_replace", st, vp, P(Tensor), c_size, P(vp), P(ctypes.c_uint64), E
)
# CNN v2
npk_bind_cnn2_load_png = _fn(
    "npk_bind_cnn2_load_png",
    st,
    cp,
    cp,
    P(vp),
    P(ctypes.c_uint32),
    P(ctypes.c_uint32),
    E,
)
npk_bind_cnn2_from_rgba8 = _fn(
    "npk_bind_cnn2_from_rgba8", st, vp, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_int, vp, E
)
npk_bind_cnn2_render = _fn(
    "npk_bind_cnn2_render",
    st,
    cp,
    vp,
    ctypes.c_uint32,
    ctypes.c_uint32,
    P(Cnn2Opts),
    P(Progress),
    vp,
    vp,
    E,
)

for _name, _cls in [
    ("npk_error", NpkError),
    ("npk_tensor", Tensor),
    ("npk_tensor_set", TensorSet),
    ("npk_tfl_view", View),
    ("npk_summary", Summary),
    ("npk_kv", Kv),
    ("npk_progress", Progress),
    ("npk_bind_mgk_layer", MgkLayer),
    ("npk_bind_cnn2_opts", Cnn2Opts),
]:
    if npk_bind_sizeof(_name.encode()) != ctypes.sizeof(_cls):
        raise ImportError(
            "npukit: %s: struct %s is %d bytes in the library, %d here: the package and the "
            "library are from different versions"
            % (LIBRARY_PATH, _name, npk_bind_sizeof(_name.encode()), ctypes.sizeof(_cls))
        )

# ---- errors ----


class Error(Exception):
    """An error reported by the npukit library: .message, .offset (a file offset
    or None), .status (e.g. "malformed input") and .path (the file, or None).
    str() is the CLI's error line without the "npukit: " prefix."""

    def __init__(self, message, offset=None, status="error", path=None):
        self.message = message
        self.offset = offset
        self.status = status
        self.path = path
        text = ""
        if path is not None:
            text += "%s: " % os.fspath(path)
        if offset is not None:
            text += "offset 0x%x: " % offset
        super().__init__(text + message)


class FormatError(Error, ValueError):
    """Malformed, truncated or unrecognised input."""


class UnsupportedError(Error):
    """Well-formed but outside what npukit (or this build) handles."""


class LimitError(Error, ValueError):
    """A count or size exceeds one of npukit's limits."""


class ArgumentError(Error, ValueError):
    """An invalid argument (shape, type, option)."""


class IOFailure(Error, OSError):
    """An operating-system I/O failure (missing file, permission, ...)."""


class DeviceError(Error):
    """An accelerator or its driver reported a failure."""


class NotFoundError(Error, LookupError):
    """A named item (tensor, layer, device) does not exist."""


class Timeout(Error, TimeoutError):
    """An operation did not finish in time."""


class Cancelled(Error):
    """A progress callback asked to stop."""


_CLASSES = {
    1: FormatError,
    2: UnsupportedError,
    3: LimitError,
    4: ArgumentError,
    5: IOFailure,
    6: MemoryError,
    7: DeviceError,
    8: NotFoundError,
    9: Timeout,
    10: Cancelled,
}


def error_from(status, err, path=None):
    msg = err.msg.decode("utf-8", "replace") or npk_status_name(status).decode()
    cls = _CLASSES.get(status, Error)
    if cls is MemoryError:
        return MemoryError(msg)
    return cls(
        msg,
        err.offset if err.has_offset else None,
        npk_status_name(status).decode(),
        path,
    )


def check(status, err, path=None):
    """Raise the library's error when status is not NPK_OK."""
    if status:
        raise error_from(status, err, path)


def path_arg(path):
    return os.fsencode(path)


# ---- progress ----


class ProgressCall:
    """A Python callable as an npk_progress: progress(what, done, total);
    returning False stops the operation (Cancelled). An exception raised by the
    callable (KeyboardInterrupt included) stops it too and is re-raised by
    reraise() once the library call has returned."""

    def __init__(self, fn):
        self.fn = fn
        self.exc = None
        self.c_fn = PROGRESS_FN(self._call)
        self.struct = Progress(self.c_fn, None) if fn is not None else None

    def _call(self, user, what, done, total):
        try:
            return self.fn(what.decode(), int(done), int(total)) is not False
        except BaseException as e:  # noqa: B902 - handed back to the caller
            self.exc = e
            return False

    def pointer(self):
        return ctypes.byref(self.struct) if self.struct is not None else None

    def reraise(self):
        if self.exc is not None:
            e, self.exc = self.exc, None
            raise e


# ---- tensors ----

_DTYPES = {
    1: np.float32,
    2: np.float16,
    4: np.float64,
    5: np.int8,
    6: np.uint8,
    7: np.int16,
    8: np.uint16,
    9: np.int32,
    10: np.uint32,
    11: np.int64,
    12: np.uint64,
    13: np.bool_,
}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}
BF16 = 3


def numpy_dtype(code):
    if code == BF16:
        raise UnsupportedError("bfloat16 tensors have no NumPy type")
    if code not in _DTYPES:
        raise UnsupportedError("tensor type %d has no NumPy type" % code)
    return np.dtype(_DTYPES[code])


def dtype_code(dtype):
    dt = np.dtype(dtype)
    if dt not in _CODES:
        raise TypeError("npukit has no tensor type for NumPy dtype %s" % dt)
    return _CODES[dt]


def adopt_buffer(ptr, nbytes, dtype, shape, release, handle):
    """A NumPy array over nbytes at ptr without copying; release(handle) runs
    when the last array that uses the buffer is gone."""
    if nbytes == 0:
        release(handle)
        return np.empty(shape, dtype)
    buf = (ctypes.c_uint8 * nbytes).from_address(ptr)
    weakref.finalize(buf, release, handle)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def adopt_tensor(tp):
    """An owned npk_tensor* as (name, array); the array owns the tensor."""
    t = tp.contents
    name = t.name.decode("utf-8", "replace") if t.name else None
    try:
        dtype = numpy_dtype(t.dtype)
    except Error:
        npk_bind_tensor_release(tp)
        raise
    shape = tuple(t.shape[i] for i in range(t.ndim))
    return name, adopt_buffer(t.data, t.nbytes, dtype, shape, npk_bind_tensor_release, tp)


def adopt_set(sp):
    """An owned npk_tensor_set* as a list of (name, array)."""
    out = []
    try:
        for i in range(sp.contents.count):
            tp = npk_bind_set_take(sp, i)
            if not tp:
                raise MemoryError("out of memory")
            out.append(adopt_tensor(tp))
    finally:
        npk_bind_set_release(sp)
    return out


def borrow_tensor(arr, name=None):
    """An npk_tensor that points at a C-contiguous array's data (no copy);
    the array (and name) must stay alive while the tensor is used."""
    if arr.ndim > MAX_DIMS:
        raise ArgumentError("%d dimensions: npukit tensors have at most %d" % (arr.ndim, MAX_DIMS))
    t = Tensor()
    t.name = name
    t.dtype = dtype_code(arr.dtype)
    t.ndim = arr.ndim
    for i, d in enumerate(arr.shape):
        t.shape[i] = d
    t.data = arr.ctypes.data
    t.nbytes = arr.nbytes
    return t


def bytes_at(ptr, n):
    return ctypes.string_at(ptr, n) if n else b""


class Handle:
    """Base of the objects that own a library object (self._h): close() frees
    it now, a with block at its end, the garbage collector otherwise. A
    subclass names the library's free function: _free = staticmethod(fn)."""

    def close(self):
        """Free the library object (and the device it opened, if any) now."""
        if getattr(self, "_h", None):
            self._free(self._h)
            self._h = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def file_bytes(fn, h):
    """The file bytes a model handle holds (fn: npk_bind_*_bytes)."""
    n = ctypes.c_size_t()
    p = fn(h, ctypes.byref(n))
    return bytes_at(p, n.value)


def save_file_bytes(fn, h, path):
    """Write them atomically (never over an input of this process)."""
    n = ctypes.c_size_t()
    p = fn(h, ctypes.byref(n))
    err = NpkError()
    check(npk_write_file(path_arg(path), p, n.value, ctypes.byref(err)), err, path)


class Source:
    """A path or bytes-like object as the (path, buf, len) triple the open
    functions take; keeps the bytes alive for the call."""

    def __init__(self, source):
        if isinstance(source, (bytes, bytearray, memoryview)):
            self.path = None
            self.data = bytes(source)
            self.buf = self.data
            self.len = len(self.data)
            self.label = None
        else:
            self.path = path_arg(source)
            self.buf = None
            self.len = 0
            self.label = os.fspath(source)
