"""CNN v2 weight files: the CPU renderer, as `npukit cnn2 render` runs it.

    rgba = npukit.cnn2.render("model.bin", "in.png")           # uint8 [H, W, 4]
    raw = npukit.cnn2.render("model.bin", pixels, raw=True)    # float32 network output
"""
import ctypes
import os

import numpy as np

from . import _lib

__all__ = ["render", "load_png"]

_BORDERS = {"clamp": 0, "zero": 1}
_ACTIVATIONS = {"default": 0, "legacy-clamp": 1}
_PRECISIONS = {"f16": 0, "f32": 1}


def load_png(path, depth=None):
    """A PNG as the renderer's input, float32 [H, W, 4] R, G, B, D in [0, 1]
    (D = alpha, or 1.0 without alpha; depth: a PNG whose grey values replace D)."""
    p = ctypes.c_void_p()
    w, h = ctypes.c_uint32(), ctypes.c_uint32()
    err = _lib.NpkError()
    st = _lib.npk_bind_cnn2_load_png(
        _lib.path_arg(path),
        _lib.path_arg(depth) if depth is not None else None,
        ctypes.byref(p),
        ctypes.byref(w),
        ctypes.byref(h),
        ctypes.byref(err),
    )
    _lib.check(st, err, path)
    shape = (h.value, w.value, 4)
    return _lib.adopt_buffer(p.value, h.value * w.value * 16, np.float32, shape, _lib.npk_bind_free, p.value)


def _image(image, depth):
    if isinstance(image, (str, bytes, os.PathLike)):
        return load_png(image, depth)
    if depth is not None:
        raise _lib.ArgumentError("depth= goes with a PNG path; put D in channel 3 of an array")
    a = np.asarray(image)
    if a.ndim != 3:
        raise _lib.ArgumentError("image must be [H, W, C], not %d-dimensional" % a.ndim)
    if a.dtype == np.uint8:
        h, w, c = a.shape
        a = np.ascontiguousarray(a)
        out = np.empty((h, w, 4), np.float32)
        err = _lib.NpkError()
        _lib.check(_lib.npk_bind_cnn2_from_rgba8(a.ctypes.data, w, h, c, out.ctypes.data, ctypes.byref(err)), err)
        return out
    if a.dtype.kind == "f" and a.shape[2] == 4:
        return np.ascontiguousarray(a, np.float32)
    raise _lib.ArgumentError(
        "image must be uint8 [H, W, 3 or 4] or float [H, W, 4] (R, G, B, D), not %s %s"
        % (a.dtype, a.shape)
    )


def _choice(name, value, table):
    if value not in table:
        raise _lib.ArgumentError("%s must be one of %s, not %r" % (name, ", ".join(table), value))
    return table[value]


def render(
    model,
    image,
    *,
    depth=None,
    blend=1.0,
    border="clamp",
    activation="default",
    precision="f16",
    threads=0,
    reference=False,
    raw=False,
    progress=None,
):
    """Run a CNN v2 model (a .bin path) on a picture.

    image: a PNG path (read as `cnn2 render` reads it; depth= a PNG for D),
    uint8 pixels [H, W, 3 or 4], or float32 R, G, B, D [H, W, 4].
    Returns the 8-bit RGBA [H, W, 4] that `cnn2 render -o` encodes (the output
    blended with the input by `blend`), or with raw=True the network output
    (float32 [H, W, 4], before blending; `--raw`). border "clamp"/"zero",
    activation "default"/"legacy-clamp", precision "f16"/"f32", threads (0:
    one per CPU) and reference (the scalar reference renderer, same bits) are
    the CLI's options. progress(what, done, total) is called as rows finish;
    returning False stops (npukit.Cancelled)."""
    rgbd = _image(image, depth)
    h, w = rgbd.shape[0], rgbd.shape[1]
    opts = _lib.Cnn2Opts(
        _choice("border", border, _BORDERS),
        _choice("activation", activation, _ACTIVATIONS),
        _choice("precision", precision, _PRECISIONS),
        int(threads),
        bool(reference),
        float(blend),
    )
    out = np.empty((h, w, 4), np.float32 if raw else np.uint8)
    pc = _lib.ProgressCall(progress)
    err = _lib.NpkError()
    st = _lib.npk_bind_cnn2_render(
        _lib.path_arg(model),
        rgbd.ctypes.data,
        w,
        h,
        ctypes.byref(opts),
        pc.pointer(),
        out.ctypes.data if raw else None,
        None if raw else out.ctypes.data,
        ctypes.byref(err),
    )
    pc.reraise()
    _lib.check(st, err, model)
    return out
