"""Ingenic MGK models (T41 NNA): layers, weights out and back in.

    m = npukit.mgk.Model("model.mgk")
    [l.id for l in m.layers if l.usable]
    w = m.extract()                       # {"layer_55.weight": int8 [Cout, Cin, KH, KW], ...}
    w["layer_55.weight"][:] = 0
    m.replace({"layer_55.weight": w["layer_55.weight"]}).save("patched.mgk")
"""
import ctypes
from dataclasses import dataclass
from typing import NamedTuple, Tuple

import numpy as np

from . import _lib

__all__ = ["Model", "Layer", "ReplaceStats"]


@dataclass(frozen=True)
class Layer:
    """A convolution (kind "conv") or GRU (kind "gru") layer, as `npukit mgk
    info` lists it. id is the one extract() and replace() use (layer_<id>.*)."""

    id: int
    kind: str
    name: str
    kernel: str
    usable: bool
    problem: str
    bits: int
    weight_shape: Tuple[int, ...]
    record_offset: int
    # convolutions
    in_channels: int = 0
    out_channels: int = 0
    kernel_h: int = 0
    kernel_w: int = 0
    stride: Tuple[int, ...] = ()
    dilation: Tuple[int, ...] = ()
    pads: Tuple[int, ...] = ()
    act: int = 0
    requant_ok: bool = False
    requant_form: str = ""
    # GRUs
    directions: int = 0
    batch: int = 0
    seq: int = 0
    input_size: int = 0
    hidden_size: int = 0


class ReplaceStats(NamedTuple):
    layers: int  # layers re-encoded
    bytes_changed: int  # bytes that differ from the original
    ignored: int  # tensors that were not layer weights


def _str(p, n):
    return ctypes.string_at(p, n).decode("utf-8", "replace") if n else ""


def _layer(l):
    common = dict(
        id=l.id,
        name=_str(l.name, l.name_len),
        kernel=_str(l.kernel, l.kernel_len),
        usable=bool(l.usable),
        problem=l.problem.decode("utf-8", "replace"),
        bits=l.bits,
        record_offset=l.record_offset,
    )
    if l.gru:
        return Layer(
            kind="gru",
            weight_shape=tuple(l.weight_shape) if l.usable else (),
            directions=l.directions,
            batch=l.batch,
            seq=l.seq,
            input_size=l.input_size,
            hidden_size=l.hidden_size,
            **common,
        )
    return Layer(
        kind="conv",
        weight_shape=tuple(l.weight_shape),
        in_channels=l.in_channels,
        out_channels=l.out_channels,
        kernel_h=l.kernel_h,
        kernel_w=l.kernel_w,
        stride=tuple(l.stride[: l.nstride]),
        dilation=tuple(l.dilation[: l.ndilation]),
        pads=tuple(l.pads[: l.npads]),
        act=l.act,
        requant_ok=bool(l.requant_ok),
        requant_form=l.requant_form.decode(),
        **common,
    )


class Model(_lib.Handle):
    """An MGK model. source: a path, or the file's bytes."""

    _free = staticmethod(_lib.npk_bind_mgk_free)

    def __init__(self, source=None, *, _handle=None, _label=None):
        self.replaced = None
        if _handle is not None:
            self._h, self._path = _handle, _label
        else:
            src = _lib.Source(source)
            self._path = src.label
            h = ctypes.c_void_p()
            err = _lib.NpkError()
            _lib.check(
                _lib.npk_bind_mgk_open(src.path, src.buf, src.len, ctypes.byref(h), ctypes.byref(err)),
                err,
                self._path,
            )
            self._h = h
        self.layers = self._layers()

    def _layers(self):
        out = []
        for i in range(_lib.npk_bind_mgk_nlayers(self._h)):
            l = _lib.MgkLayer()
            err = _lib.NpkError()
            _lib.check(
                _lib.npk_bind_mgk_layer_get(self._h, i, ctypes.byref(l), ctypes.byref(err)),
                err,
                self._path,
            )
            out.append(_layer(l))
        return out

    def extract(self):
        """The weights of every usable layer, as `npukit mgk extract` writes
        them: a dict name -> array (layer_<id>.weight int8 [Cout, Cin, KH, KW],
        .bias, .scale or .mult, .requant; GRUs .W, .R, .Wb, .Rb, .Ws, .Rs,
        .h_scale, .h_zp). The arrays own the library's buffers (no copy)."""
        out = ctypes.POINTER(_lib.TensorSet)()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_mgk_extract(self._h, ctypes.byref(out), ctypes.byref(err)), err, self._path
        )
        return dict(_lib.adopt_set(out))

    def replace(self, weights):
        """A new Model whose layers are re-encoded from weights (a dict name ->
        integer array: layer_<id>.weight, or a GRU's layer_<id>.W / .R, with
        the exact shape extract() gives and values within the layer's bit
        width). Every other byte is unchanged; .replaced of the new model says
        what changed (ReplaceStats)."""
        arrays, names = [], []
        for k, a in weights.items():
            arrays.append(np.ascontiguousarray(a))
            names.append(k.encode())
        tensors = (_lib.Tensor * max(1, len(arrays)))()
        for i, (a, n) in enumerate(zip(arrays, names)):
            tensors[i] = _lib.borrow_tensor(a, n)
        h = ctypes.c_void_p()
        stats = (ctypes.c_uint64 * 3)()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_mgk_replace(
                self._h, tensors, len(arrays), ctypes.byref(h), stats, ctypes.byref(err)
            ),
            err,
            self._path,
        )
        m = Model(_handle=h, _label=self._path)
        m.replaced = ReplaceStats(*stats)
        return m

    def to_bytes(self):
        return _lib.file_bytes(_lib.npk_bind_mgk_bytes, self._h)

    __bytes__ = to_bytes

    def save(self, path):
        """Write the model file atomically (never over an input of this process)."""
        _lib.save_file_bytes(_lib.npk_bind_mgk_bytes, self._h, path)
