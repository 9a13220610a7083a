"""TFLite models on npukit's CPU interpreter (TFLite's integer reference
semantics), as `npukit tflite run` runs them.

    m = npukit.tflite.Model("mobilenet_v2_1.0_224_quant.tflite")
    m.inputs[0]            # TensorSpec(name='input', dtype=uint8, shape=(1, 224, 224, 3), ...)
    y = m.run(x)           # one output: an array; several: a dict name -> array
"""
import ctypes

from . import _lib
from ._run import (TensorSpec, exact_inputs, read_view, results, run_repeat, view, view_spec,
                   write_view)

__all__ = ["Model", "TensorSpec"]


class Model(_lib.Handle):
    """A TFLite model and its interpreter.

    source: a path, or the model's bytes. threads: worker threads for
    convolution, depthwise and fully-connected work (the results do not
    depend on it). Every operator is checked when the model is opened: an
    operator the interpreter lacks raises npukit.UnsupportedError here."""

    _free = staticmethod(_lib.npk_bind_tfl_free)

    def __init__(self, source, *, threads=1):
        src = _lib.Source(source)
        self._path = src.label
        h = ctypes.c_void_p()
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_tfl_open(
                src.path, src.buf, src.len, int(threads), ctypes.byref(h), ctypes.byref(err)
            ),
            err,
            self._path,
        )
        self._h = h
        self._it = _lib.npk_bind_tfl_interp(h)
        self.inputs = [self._spec(_lib.npk_tfl_interp_input, i) for i in range(self._nin())]
        self.outputs = [self._spec(_lib.npk_tfl_interp_output, i) for i in range(self._nout())]

    def _nin(self):
        return _lib.npk_tfl_interp_ninputs(self._it)

    def _nout(self):
        return _lib.npk_tfl_interp_noutputs(self._it)

    def _view(self, fn, i):
        return view(fn, self._it, i, self._path)

    def _spec(self, fn, i):
        return view_spec(self._view(fn, i))

    def run(self, x=None, *, repeat=1, progress=None, **named):
        """Run the model once (or `repeat` times, e.g. to time it).

        x: the input array (one input), a sequence of arrays in input order, or
        a dict name -> array; inputs may also be given as keyword arguments by
        name. Each array must have the input's exact dtype and shape (as
        `npukit tflite run` requires of its .npy files). progress(what, done,
        total) is called after each run; returning False stops (Cancelled).
        Returns the output array (one output) or a dict name -> array."""
        if not self._h:
            raise _lib.ArgumentError("the model is closed")
        for i, a in enumerate(exact_inputs(self.inputs, x, named)):
            write_view(self._view(_lib.npk_tfl_interp_input, i), a)
        run_repeat(_lib.npk_bind_tfl_run, self._h, repeat, progress, self._path)
        # The arena is reused by the next run: the outputs are copied.
        return results(
            [(s.name, read_view(self._view(_lib.npk_tfl_interp_output, i), s))
             for i, s in enumerate(self.outputs)]
        )
