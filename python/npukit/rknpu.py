"""Whole TFLite networks on a Rockchip RKNPU, as `npukit rknpu run` runs
them: NPU segments on the device (or its emulator), the other operators on
the interpreter.

    net = npukit.rknpu.compile("mobilenet_v1_0.5_160_quant.tflite", cores=1)
    net.inputs[0]                  # TensorSpec(name='input', dtype=uint8, shape=(1, 160, 160, 3), ...)
    y = net.run(x, device="emu")   # one output: an array; several: a dict name -> array
    net = npukit.rknpu.load("mv1/")  # what `npukit rknpu compile -o mv1/` wrote
"""
import ctypes

from . import _lib
from ._run import (TensorSpec, exact_inputs, read_view, results, run_repeat, view, view_spec,
                   write_view)

__all__ = ["compile", "load", "Network", "TensorSpec"]

DEVICES = ("emu", "rknpu", "rocket")


def compile(source, *, cores=1, threads=1):
    """Compile a quantised TFLite model (a path or its bytes) for the RKNPU
    (`npukit rknpu compile`): cores 1..3; threads: interpreter threads of the
    CPU segments. An operator neither side runs raises npukit.UnsupportedError."""
    return Network(source, cores=cores, threads=threads)


def load(directory, *, threads=1):
    """Load what `npukit rknpu compile -o DIR` wrote, without compiling the
    model path again: DIR's model copy is checked against its manifest and
    the NPU-side files against a compile of it (an edited or stale file
    raises npukit.FormatError naming it). Cores and stream form are DIR's."""
    return Network(None, threads=threads, directory=directory)


class Network(_lib.Handle):
    """A compiled network; bound to a device on its first run."""

    _free = staticmethod(_lib.npk_bind_rk_free)

    def __init__(self, source, *, cores=1, threads=1, directory=None):
        h = ctypes.c_void_p()
        err = _lib.NpkError()
        if directory is not None:
            self._path = str(directory)
            rc = _lib.npk_bind_rk_load(
                _lib.path_arg(directory), int(threads), ctypes.byref(h), ctypes.byref(err)
            )
        else:
            src = _lib.Source(source)
            self._path = src.label
            rc = _lib.npk_bind_rk_open(
                src.path, src.buf, src.len, int(cores), int(threads), ctypes.byref(h),
                ctypes.byref(err),
            )
        _lib.check(rc, err, self._path)
        self._h = h
        self._device = None
        self._specs = None

    @property
    def stats(self):
        """Operators on the NPU, free reshapes, operators on the CPU, NPU tasks,
        submits per run."""
        s = (ctypes.c_uint64 * 5)()
        _lib.npk_bind_rk_stats(self._h, s)
        return dict(zip(("npu_ops", "free_ops", "cpu_ops", "tasks", "submits"), map(int, s)))

    def _bind(self, device, device_path, emu_cores):
        if not self._h:
            raise _lib.ArgumentError("the network is closed")
        if device not in DEVICES:
            raise _lib.ArgumentError("device must be one of %s, not %r" % (DEVICES, device))
        key = (device, device_path, emu_cores)
        if self._device == key:
            return _lib.npk_bind_rk_exec(self._h)
        self._device = None
        err = _lib.NpkError()
        _lib.check(
            _lib.npk_bind_rk_device(
                self._h,
                device.encode(),
                _lib.path_arg(device_path) if device_path else None,
                int(emu_cores),
                ctypes.byref(err),
            ),
            err,
            self._path,
        )
        self._device = key
        x = _lib.npk_bind_rk_exec(self._h)
        self._specs = (
            [view_spec(view(_lib.npk_rk_net_input, x, i, self._path))
             for i in range(_lib.npk_rk_net_ninputs(x))],
            [view_spec(view(_lib.npk_rk_net_output, x, i, self._path))
             for i in range(_lib.npk_rk_net_noutputs(x))],
        )
        return x

    def _io(self):
        if self._specs is None:
            self._bind("emu", None, 3)
        return self._specs

    @property
    def inputs(self):
        """The network's inputs (TensorSpec: name, dtype, shape, quantisation)."""
        return self._io()[0]

    @property
    def outputs(self):
        return self._io()[1]

    def run(self, x=None, device="emu", *, device_path=None, emu_cores=3, repeat=1,
            progress=None, **named):
        """Run the network on a device: "emu" (the emulated NPU, emu_cores 1
        or 3), "rknpu" (the vendor driver) or "rocket" (Mesa's driver;
        device_path: its node, default the first one). The device stays bound
        for later runs.

        x: the input array (one input), a sequence in input order or a dict
        name -> array; each of the input's exact dtype and shape (as `npukit
        rknpu run` requires of its .npy files). Returns the output array (one
        output) or a dict name -> array, as the model's types."""
        ex = self._bind(device, device_path, emu_cores)
        ins, outs = self._specs
        for i, a in enumerate(exact_inputs(ins, x, named)):
            write_view(view(_lib.npk_rk_net_input, ex, i, self._path), a)
        run_repeat(_lib.npk_bind_rk_run, self._h, repeat, progress, self._path)
        return results(
            [(s.name, read_view(view(_lib.npk_rk_net_output, ex, i, self._path), s))
             for i, s in enumerate(outs)]
        )
