"""Shared by the models that run: tensor specs, and inputs given as one
array, a sequence (in order) or a mapping (by name)."""
import ctypes
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _lib


class TensorSpec(NamedTuple):
    """An input or output of a model: name, NumPy dtype, shape, and the
    quantisation (scale 0.0 when there is none)."""

    name: str
    dtype: np.dtype
    shape: Tuple[int, ...]
    scale: float = 0.0
    zero_point: int = 0
    index: Optional[int] = None

    def describe(self):
        return "%s [%s]" % (self.dtype, ", ".join(str(d) for d in self.shape))


def assign(specs, x, named, what="input"):
    """Arrays in spec order from x (array, sequence or mapping) and named=."""
    n = len(specs)
    got = [None] * n
    by_name = {s.name: i for i, s in enumerate(specs)}
    if x is not None:
        if isinstance(x, dict):
            named = dict(x, **named)
        elif isinstance(x, (list, tuple)):
            if len(x) > n:
                raise _lib.ArgumentError("%d %ss given, the model has %d" % (len(x), what, n))
            for i, a in enumerate(x):
                got[i] = a
        elif n == 0:
            raise _lib.ArgumentError("the model has no %ss" % what)
        else:
            got[0] = x
    for k, a in named.items():
        if k not in by_name:
            raise _lib.NotFoundError(
                "no %s named %r (the model's: %s)" % (what, k, ", ".join(map(repr, by_name)))
            )
        i = by_name[k]
        if got[i] is not None:
            raise _lib.ArgumentError("%s %r is given twice" % (what, k))
        got[i] = a
    for i, s in enumerate(specs):
        if got[i] is None:
            raise _lib.ArgumentError("no value for %s %r (%s)" % (what, s.name, s.describe()))
    return got


def exact_inputs(specs, x, named):
    """assign(), each array required to have its input's exact dtype and
    shape (as `npukit tflite run` and `rknpu run` require of their .npy files)."""
    arrays = []
    for spec, a in zip(specs, assign(specs, x, named)):
        a = np.asarray(a)
        if a.dtype != spec.dtype or a.shape != spec.shape:
            raise _lib.ArgumentError(
                "input %r must be %s, got %s [%s]"
                % (spec.name, spec.describe(), a.dtype, ", ".join(map(str, a.shape)))
            )
        arrays.append(a)
    return arrays


def run_repeat(fn, handle, repeat, progress, path):
    """fn(handle, repeat, progress, err) (npk_bind_*_run): progress(what, done,
    total) after each run, False from it stops the runs (Cancelled)."""
    pc = _lib.ProgressCall(progress)
    err = _lib.NpkError()
    rc = fn(handle, int(repeat), pc.pointer(), ctypes.byref(err))
    pc.reraise()
    _lib.check(rc, err, path)


def results(pairs):
    """One output: the array; several: a dict name -> array in output order."""
    if len(pairs) == 1:
        return pairs[0][1]
    return {name: arr for name, arr in pairs}


def view(fn, handle, i, path):
    """Input or output view i of an interpreter-like handle (fn: e.g. npk_tfl_interp_input)."""
    v = _lib.View()
    err = _lib.NpkError()
    _lib.check(fn(handle, i, ctypes.byref(v), ctypes.byref(err)), err, path)
    return v


def view_spec(v):
    """The TensorSpec of a view (npk_tfl_view)."""
    code = _lib.npk_bind_tfl_dtype(v.type)
    if code == 0:
        raise _lib.UnsupportedError(
            "tensor %r has type %s, which has no NumPy type"
            % (v.name.decode(), _lib.npk_tfl_type_name(v.type).decode())
        )
    return TensorSpec(
        v.name.decode("utf-8", "replace"),
        _lib.numpy_dtype(code),
        tuple(v.dims[d] for d in range(v.ndim)),
        float(v.scale),
        int(v.zero_point),
        int(v.index),
    )


def write_view(v, a):
    """Copy a C-contiguous array of the view's size into the view."""
    a = np.ascontiguousarray(a)
    if a.nbytes != v.bytes:
        raise _lib.ArgumentError("%d bytes given for %r of %d bytes" % (a.nbytes, v.name.decode(), v.bytes))
    ctypes.memmove(v.data, a.ctypes.data, a.nbytes)


def read_view(v, spec):
    """A copy of an output view (the buffers are reused by the next run)."""
    a = np.empty(spec.shape, spec.dtype)
    ctypes.memmove(a.ctypes.data, v.data, a.nbytes)
    return a
