"""Compiled Coral Edge TPU models (*_edgetpu.tflite).

    m = npukit.edgetpu.Model("dense_256_edgetpu.tflite")
    w = m.weights                   # int8 [out, in] of a Dense template
    m.set_weights(w * 0.5 * m.scales[:, None])   # float: quantised per output channel
    y = m.run(x)                    # CPU reference of the template (device="cpu")
    y = m.run(x, device="emu")      # the whole model: Edge TPU op emulated, CPU ops interpreted
    y = npukit.edgetpu.Model("m_edgetpu.tflite").run(x, device="emu", cpu_model="m.tflite")
    m.save("new_edgetpu.tflite")    # only the parameter bytes differ
"""
import ctypes
import os

import numpy as np

from . import _lib
from ._run import TensorSpec, assign, read_view, results, run_repeat, view, view_spec, write_view

__all__ = ["Model"]

DEVICES = ("cpu", "emu", "usb")


class Model(_lib.Handle):
    """A compiled Edge TPU model. source: a path, or the model's bytes.

    Dense templates (one Edge TPU op computing y = W.x, as libredgetpu's
    dense_N templates) have .weights, .scales, .set_weights() and a CPU
    reference run; any model runs whole on a device ("emu", "usb"), its
    Edge TPU op alone with run_op()."""

    _free = staticmethod(_lib.npk_bind_etpu_free)

    def __init__(self, source):
        src = _lib.Source(source)
        self._path = src.label
        h = ctypes.c_void_p()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_open(src.path, src.buf, src.len, ctypes.byref(h), ctypes.byref(err)),
            err,
            self._path,
        )
        self._h = h
        self._device = None

    # ---- Dense templates ----

    @property
    def size(self):
        """N of a Dense N x N template (npukit.UnsupportedError otherwise)."""
        n = ctypes.c_size_t()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_dense_size(self._h, ctypes.byref(n), ctypes.byref(err)),
            err,
            self._path,
        )
        return n.value

    @property
    def weights(self):
        """The template's int8 weights [out, in] from its parameter blob (a new array)."""
        n = self.size
        w = np.empty((n, n), np.int8)
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_weights(self._h, w.ctypes.data, None, ctypes.byref(err)),
            err,
            self._path,
        )
        return w

    @property
    def scales(self):
        """float32 [out]: each output channel's weight scale (float = int8 * scale)."""
        n = self.size
        s = np.empty(n, np.float32)
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_weights(self._h, None, s.ctypes.data, ctypes.byref(err)),
            err,
            self._path,
        )
        return s

    def set_weights(self, w):
        """Replace the weights: int8 [out, in] used as is, float [out, in]
        quantised per output channel (round half to even, clipped to int8).
        Only the parameter blob's bytes change. Returns how many values were
        clipped (0 for int8)."""
        n = self.size
        w = np.asarray(w)
        if w.shape != (n, n):
            raise _lib.ArgumentError(
                "weights have shape %s; this template needs (%d, %d) ([out, in])"
                % (tuple(w.shape), n, n)
            )
        clipped = ctypes.c_size_t()
        err = _lib.NpkError()
        if w.dtype == np.int8:
            w = np.ascontiguousarray(w)
            rc = _lib.npk_bind_etpu_set_weights(
                self._h, w.ctypes.data, None, ctypes.byref(clipped), ctypes.byref(err)
            )
        elif w.dtype.kind == "f":
            wf = np.ascontiguousarray(w, np.float32)
            rc = _lib.npk_bind_etpu_set_weights(
                self._h, None, wf.ctypes.data, ctypes.byref(clipped), ctypes.byref(err)
            )
        else:
            raise _lib.ArgumentError("weights must be int8 or float, not %s" % w.dtype)
        self._device = None  # the model changed: a device is opened again
        _lib.check(rc, err, self._path)
        return clipped.value

    # ---- bytes ----

    def to_bytes(self):
        """The model file's bytes (with the current weights)."""
        return _lib.file_bytes(_lib.npk_bind_etpu_bytes, self._h)

    __bytes__ = to_bytes

    def save(self, path):
        """Write the model file atomically (never over an input of this process)."""
        _lib.save_file_bytes(_lib.npk_bind_etpu_bytes, self._h, path)

    # ---- running ----

    def _open_device(self, device, firmware, timeout_ms):
        key = (device, firmware, timeout_ms)
        if self._device == key:
            return
        fw = b""
        if firmware is not None:
            with open(firmware, "rb") as f:
                fw = f.read()
        err = _lib.NpkError()
        self._device = None
        _lib.check(
            _lib.npk_bind_etpu_device(
                self._h,
                device.encode(),
                fw if firmware is not None else None,
                len(fw),
                int(timeout_ms),
                ctypes.byref(err),
            ),
            err,
            self._path,
        )
        self._device = key

    def device_inputs(self, device="emu", *, firmware=None, timeout_ms=0):
        """Names of the Edge TPU op's input layers (opens the device)."""
        self._open_device(device, firmware, timeout_ms)
        return [
            _lib.npk_bind_etpu_input_name(self._h, i).decode("utf-8", "replace")
            for i in range(_lib.npk_bind_etpu_ninputs(self._h))
        ]

    def run(self, x=None, device="cpu", *, cpu_model=None, raw=False, threads=1, firmware=None,
            timeout_ms=0, repeat=1, progress=None, **named):
        """Run the model.

        device="cpu": the CPU reference of a Dense template as the Edge TPU
        computes it (`npukit edgetpu matmul`): x float [N] or [B, N] is
        quantised with the model's input parameters; returns float32 of the
        same shape.

        device="emu" or "usb": the whole model as `npukit edgetpu run` runs
        it: its Edge TPU ops on the emulated accelerator or a Coral USB
        accelerator, the other operators on the interpreter. The device stays
        open and the parameters are uploaded once. x: one array, a sequence in
        input order or a dict name -> array: the input's own type, or float
        (quantised with its numerics, round half to even, saturating); the
        element count must match. Returns the outputs, quantised integers
        dequantised to float32 unless raw: one array, or a dict name -> array.
        cpu_model (emu only): the uncompiled model (a path), so the emulator
        answers with the interpreter's values (`--cpu-model`); without it the
        emulator's answers are deterministic filler. threads: interpreter
        threads. firmware: a DFU image for a device in bootloader mode (a
        path). repeat/progress as in npukit.tflite.Model.run."""
        if device not in DEVICES:
            raise _lib.ArgumentError("device must be one of %s, not %r" % (DEVICES, device))
        if device == "cpu":
            if named or cpu_model is not None:
                raise _lib.ArgumentError("device=\"cpu\" takes one input array")
            return self._matmul(x)
        it = self._open_graph(device, firmware, timeout_ms, cpu_model, threads)
        ins, outs = self._graph_specs
        for i, (spec, a) in enumerate(zip(ins, assign(ins, x, named))):
            write_view(view(_lib.npk_tfl_interp_input, it, i, self._path), _quantise(spec, a))
        run_repeat(_lib.npk_bind_etpu_graph_run, self._h, repeat, progress, self._path)
        out = []
        for i, spec in enumerate(outs):
            a = read_view(view(_lib.npk_tfl_interp_output, it, i, self._path), spec)
            out.append((spec.name, a if raw else _dequantise(spec, a)))
        return results(out)

    def _open_graph(self, device, firmware, timeout_ms, cpu_model, threads):
        key = ("graph", device, firmware and os.fspath(firmware), timeout_ms,
               cpu_model and os.fspath(cpu_model), threads)
        if self._device == key:
            return _lib.npk_bind_etpu_graph_interp(self._h)
        fw = b""
        if firmware is not None:
            with open(firmware, "rb") as f:
                fw = f.read()
        err = _lib.NpkError()
        self._device = None
        _lib.check(
            _lib.npk_bind_etpu_graph_open(
                self._h,
                device.encode(),
                fw if firmware is not None else None,
                len(fw),
                int(timeout_ms),
                _lib.path_arg(cpu_model) if cpu_model is not None else None,
                int(threads),
                ctypes.byref(err),
            ),
            err,
            self._path,
        )
        self._device = key
        it = _lib.npk_bind_etpu_graph_interp(self._h)
        self._graph_specs = (
            [view_spec(view(_lib.npk_tfl_interp_input, it, i, self._path))
             for i in range(_lib.npk_tfl_interp_ninputs(it))],
            [view_spec(view(_lib.npk_tfl_interp_output, it, i, self._path))
             for i in range(_lib.npk_tfl_interp_noutputs(it))],
        )
        return it

    @property
    def inputs(self):
        """The whole model's inputs (TensorSpec), as run(device="emu"/"usb")
        takes them (opens the emulator when no device is open)."""
        if not (self._device and self._device[0] == "graph"):
            self._open_graph("emu", None, 0, None, 1)
        return self._graph_specs[0]

    @property
    def outputs(self):
        if not (self._device and self._device[0] == "graph"):
            self._open_graph("emu", None, 0, None, 1)
        return self._graph_specs[1]

    def run_op(self, x=None, device="emu", *, raw=False, firmware=None, timeout_ms=0, **named):
        """Only the model's Edge TPU op (its first executable's layers, by
        layer name), without the CPU operators around it.

        device="emu" or "usb": the model's Edge TPU op on the emulated
        accelerator or a Coral USB accelerator (`npukit edgetpu run`),
        following its DMA hints; the device stays open and the parameters are
        uploaded once. x: one array, a sequence in input-layer order or a dict
        layer name -> array (float32, quantised with the layer's numerics, or
        the layer's integer type). Returns float32 dequantised outputs (raw:
        the layer's integer type): one array, or a dict layer name -> array.
        firmware: a DFU image for a device in bootloader mode (a path)."""
        if device not in DEVICES[1:]:
            raise _lib.ArgumentError("device must be one of %s, not %r" % (DEVICES[1:], device))
        self._open_device(device, os.fspath(firmware) if firmware else None, timeout_ms)
        names = [
            _lib.npk_bind_etpu_input_name(self._h, i).decode("utf-8", "replace")
            for i in range(_lib.npk_bind_etpu_ninputs(self._h))
        ]
        specs = [TensorSpec(n, None, ()) for n in names]
        arrays = [np.ascontiguousarray(a) for a in assign(specs, x, named, "input layer")]
        tensors = (_lib.Tensor * max(1, len(arrays)))()
        for i, a in enumerate(arrays):
            tensors[i] = _lib.borrow_tensor(a)
        out = ctypes.POINTER(_lib.TensorSet)()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_run(
                self._h, tensors, len(arrays), bool(raw), ctypes.byref(out), ctypes.byref(err)
            ),
            err,
            self._path,
        )
        return results(_lib.adopt_set(out))

    def _matmul(self, x):
        n = self.size
        x = np.asarray(x)
        if x.ndim not in (1, 2) or x.shape[-1] != n:
            raise _lib.ArgumentError(
                "input has shape %s; this template needs (%d,) or (B, %d)" % (tuple(x.shape), n, n)
            )
        xf = np.ascontiguousarray(x, np.float32)
        y = np.empty(x.shape, np.float32)
        batch = x.shape[0] if x.ndim == 2 else 1
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_etpu_matmul(self._h, xf.ctypes.data, batch, y.ctypes.data, ctypes.byref(err)),
            err,
            self._path,
        )
        return y


_RANGES = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),
           np.dtype(np.int16): (-32768, 32767)}


def _quantised(spec):
    return spec.scale > 0 and spec.dtype in _RANGES


def _quantise(spec, a):
    """An input in its own type, or float quantised as `edgetpu run` does."""
    a = np.asarray(a)
    n = int(np.prod(spec.shape, dtype=np.int64))
    if a.size != n:
        raise _lib.ArgumentError(
            "input %r is %s; %d %s values given" % (spec.name, spec.describe(), a.size, a.dtype)
        )
    if a.dtype == spec.dtype:
        return a
    if a.dtype.kind != "f":
        raise _lib.ArgumentError(
            "input %r is %s: give %s values or float32" % (spec.name, spec.describe(), spec.dtype)
        )
    f = a.astype(np.float32)
    if spec.dtype == np.float32:
        return f
    if not _quantised(spec):
        raise _lib.ArgumentError(
            "input %r (%s) has no quantisation: give %s values" % (spec.name, spec.describe(), spec.dtype)
        )
    if not np.all(np.isfinite(f)):
        raise _lib.ArgumentError("input %r: a value is not a finite number" % spec.name)
    lo, hi = _RANGES[spec.dtype]
    q = np.rint(f.astype(np.float64) / np.float64(np.float32(spec.scale))) + spec.zero_point
    return np.clip(q, lo, hi).astype(spec.dtype)


def _dequantise(spec, a):
    if not _quantised(spec):
        return a
    return ((a.astype(np.float64) - spec.zero_point) * np.float64(np.float32(spec.scale))).astype(np.float32)
