"""npukit: model files and command streams of edge NPUs, from Python.

A thin layer over the npukit C library (libnpukit, loaded with ctypes): the
library does the work, this package turns its results into NumPy arrays,
dicts and exceptions.

    import npukit
    npukit.info("model.tflite")                    # what `npukit info --json` prints
    npukit.tflite.Model("m.tflite").run(x)          # CPU interpreter
    npukit.rknpu.compile("m.tflite").run(x, device="emu")
    npukit.edgetpu.Model("m_edgetpu.tflite").weights
    npukit.mgk.Model("m.mgk").extract()
    npukit.cnn2.render("weights.bin", "in.png")

Errors from the library are raised as npukit.Error subclasses carrying its
message and the file offset (e.offset). Which library is loaded:
npukit.LIBRARY_PATH (set NPUKIT_LIBRARY to choose one).
"""
from . import _lib
from ._lib import (
    LIBRARY_PATH,
    ArgumentError,
    Cancelled,
    DeviceError,
    Error,
    FormatError,
    IOFailure,
    LimitError,
    NotFoundError,
    Timeout,
    UnsupportedError,
)
from ._info import info
from . import cnn2, edgetpu, mgk, rknpu, tflite

__version__ = _lib.VERSION

__all__ = [
    "info",
    "version",
    "commit",
    "features",
    "LIBRARY_PATH",
    "Error",
    "FormatError",
    "UnsupportedError",
    "LimitError",
    "ArgumentError",
    "IOFailure",
    "DeviceError",
    "NotFoundError",
    "Timeout",
    "Cancelled",
    "tflite",
    "rknpu",
    "edgetpu",
    "mgk",
    "cnn2",
]


def version():
    """The loaded library's version string, e.g. "0.1.0"."""
    return _lib.npk_version().decode()


def commit():
    """The commit the loaded library was built from (as `npukit --version`
    names it): an abbreviated git hash, "-dirty" for uncommitted changes, or
    "unknown"."""
    return _lib.npk_commit().decode()


def features():
    """Optional components compiled into the loaded library, e.g. {"json", "png", "usb"}."""
    return set(_lib.npk_features().decode().split())
