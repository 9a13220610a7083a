"""npukit.edgetpu.Model against `npukit edgetpu weights / set-weights /
matmul / run` (and `tflite run` of the uncompiled model) on the fixtures."""
import os

import numpy as np
import pytest

import npukit
from conftest import fx, read_safetensors

DENSE = "edgetpu/dense_256_edgetpu.tflite"


def test_weights_equal_cli(cli, tmp_path):
    path = fx(DENSE)
    m = npukit.edgetpu.Model(path)
    cli.run("edgetpu", "weights", path, "-o", tmp_path / "w.npy")
    cli.run("edgetpu", "weights", path, "--float", "-o", tmp_path / "wf.npy")
    w = m.weights
    assert m.size == 256 and w.dtype == np.int8 and w.shape == (256, 256)
    np.testing.assert_array_equal(w, np.load(tmp_path / "w.npy"))
    wf = w.astype(np.float32) * m.scales[:, None]
    np.testing.assert_array_equal(wf, np.load(tmp_path / "wf.npy"))


@pytest.mark.parametrize("kind", ["int8", "float"])
def test_set_weights_equals_cli(cli, tmp_path, kind):
    path = fx(DENSE)
    m = npukit.edgetpu.Model(path)
    rng = np.random.default_rng(3)
    if kind == "int8":
        w = rng.integers(-128, 127, (256, 256), dtype=np.int8, endpoint=True)
    else:  # some values past the channel's range: clipped
        w = (rng.standard_normal((256, 256)) * m.scales[:, None] * 60).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    p = cli.run("edgetpu", "set-weights", path, "--weights", tmp_path / "w.npy", "-o", tmp_path / "cli.tflite")
    clipped = m.set_weights(w)
    if kind == "int8":
        assert clipped == 0
        np.testing.assert_array_equal(m.weights, w)
    else:
        assert clipped > 0 and ("%d of 65536 weights" % clipped) in p.stderr
    m.save(tmp_path / "py.tflite")
    assert (tmp_path / "py.tflite").read_bytes() == (tmp_path / "cli.tflite").read_bytes()
    assert bytes(m) == (tmp_path / "cli.tflite").read_bytes()
    # The same weights again: a byte-identical file.
    same = npukit.edgetpu.Model(path)
    same.set_weights(same.weights)
    assert same.to_bytes() == open(path, "rb").read()


def test_cpu_run_equals_cli_matmul(cli, tmp_path):
    path = fx(DENSE)
    m = npukit.edgetpu.Model(path)
    x = np.random.default_rng(5).standard_normal((3, 256)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cli.run("edgetpu", "matmul", path, "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    np.testing.assert_array_equal(m.run(x), np.load(tmp_path / "y.npy"))
    np.testing.assert_array_equal(m.run(x[1]), np.load(tmp_path / "y.npy")[1])
    # With other weights, after set_weights.
    w = np.flipud(m.weights).copy()
    np.save(tmp_path / "w.npy", w)
    cli.run("edgetpu", "matmul", path, "--input", tmp_path / "x.npy", "--weights", tmp_path / "w.npy",
            "-o", tmp_path / "y2.npy")
    m.set_weights(w)
    np.testing.assert_array_equal(m.run(x, device="cpu"), np.load(tmp_path / "y2.npy"))


def test_emu_run_equals_cli(cli, tmp_path):
    path = fx(DENSE)
    m = npukit.edgetpu.Model(path)
    x = np.random.default_rng(9).standard_normal(256).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cli.run("edgetpu", "run", path, "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy", "--device", "emu")
    want = np.load(tmp_path / "y.npy")
    y = m.run(x, device="emu")
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(m.run(x, device="emu"), want)  # the device stays open
    cli.run("edgetpu", "run", path, "--input", tmp_path / "x.npy", "-o", tmp_path / "r.npy", "--device", "emu", "--raw")
    np.testing.assert_array_equal(m.run(x, device="emu", raw=True), np.load(tmp_path / "r.npy"))


def test_emu_run_several_inputs_equals_cli(cli, tmp_path):
    path = fx("edgetpu/split_concat_edgetpu.tflite")
    m = npukit.edgetpu.Model(path)
    names = m.device_inputs("emu")
    rng = np.random.default_rng(11)
    xs = {}
    args = []
    # Input layer sizes from the CLI's own error when an input is missing.
    for i, n in enumerate(names):
        line = cli.error_line("edgetpu", "run", path, *args, "-o", tmp_path / "o", "--device", "emu")
        # ... (UINT8 [1, 8, 8, 3]): the layer is the last three dimensions.
        dims = line.split("[")[-1].split("]")[0].split(", ")
        shape = tuple(int(d) for d in dims[-3:])
        xs[n] = rng.standard_normal(shape).astype(np.float32)
        np.save(tmp_path / ("x%d.npy" % i), xs[n])
        args += ["--input", "%s=%s" % (n, tmp_path / ("x%d.npy" % i))]
    cli.run("edgetpu", "run", path, *args, "-o", tmp_path / "outs.safetensors", "--device", "emu")
    want = read_safetensors(tmp_path / "outs.safetensors")
    got = m.run(xs, device="emu")
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    # In layer order, as a list, on a fresh emulator (its answers for a model
    # without a CPU reference depend on the execution count): the same.
    got2 = npukit.edgetpu.Model(path).run([xs[n] for n in names], device="emu")
    for k in want:
        np.testing.assert_array_equal(got2[k], want[k])


def test_errors_equal_cli(cli, tmp_path):
    path = fx("edgetpu/split_concat_edgetpu.tflite")
    m = npukit.edgetpu.Model(path)
    with pytest.raises(npukit.Error) as e:
        m.weights
    assert str(e.value) == cli.error_line("edgetpu", "weights", path, "-o", tmp_path / "w.npy")
    with pytest.raises(npukit.ArgumentError):
        m.run(np.zeros(4), device="tpu")
    with pytest.raises(npukit.ArgumentError, match="no value for input 'inputs/rnn1'"):
        m.run(np.zeros(4, np.float32), device="emu")
    data = open(path, "rb").read()
    with pytest.raises(npukit.FormatError) as e:
        npukit.edgetpu.Model(data[: len(data) // 2])
    bad = tmp_path / "half.tflite"
    bad.write_bytes(data[: len(data) // 2])
    assert str(e.value) == cli.error_line("edgetpu", "info", bad).replace(str(bad) + ": ", "", 1)
    with pytest.raises(npukit.ArgumentError, match=r"needs \(256, 256\)"):
        npukit.edgetpu.Model(fx(DENSE)).set_weights(np.zeros((2, 2), np.int8))


# A compiled model and the model it was compiled from: the emulator answers
# the Edge TPU op with the interpreter's values of the uncompiled model.
PAIRS = [
    ("models/mobilenet_v1_0.5_160_quant_edgetpu.tflite", "models/mobilenet_v1_0.5_160_quant.tflite"),
]


@pytest.mark.parametrize("compiled,cpu", PAIRS)
def test_whole_model_equals_cli_and_tflite(cli, tmp_path, compiled, cpu):
    path, cpu_path = fx(compiled), fx(cpu)
    m = npukit.edgetpu.Model(path)
    (spec,) = m.inputs
    assert spec.dtype == np.uint8 and spec.scale > 0
    x = np.random.default_rng(21).integers(0, 256, spec.shape, dtype=np.uint8)
    np.save(tmp_path / "x.npy", x)
    run = ["edgetpu", "run", path, "--device", "emu", "--cpu-model", cpu_path, "--input", tmp_path / "x.npy"]
    cli.run(*run, "-o", tmp_path / "y.npy")
    cli.run(*run, "--raw", "-o", tmp_path / "r.npy")
    cli.run("tflite", "run", cpu_path, "--input", tmp_path / "x.npy", "-o", tmp_path / "t.npy")
    y = m.run(x, device="emu", cpu_model=cpu_path)
    want = np.load(tmp_path / "y.npy")
    assert y.dtype == np.float32 and y.shape == want.shape
    assert y.tobytes() == want.tobytes()
    r = m.run({spec.name: x}, device="emu", cpu_model=cpu_path, raw=True, repeat=2)
    assert r.dtype == np.uint8 and r.tobytes() == np.load(tmp_path / "r.npy").tobytes()
    # The whole model equals the uncompiled model on the interpreter.
    assert r.tobytes() == np.load(tmp_path / "t.npy").tobytes()
    np.testing.assert_array_equal(r, npukit.tflite.Model(cpu_path).run(x))
    # Float input, quantised with the input's numerics as the CLI does it.
    xf = ((x.astype(np.float32) - spec.zero_point) * spec.scale).astype(np.float32)
    xf[0, 0, 0, :] = [-5.0, 5.0, 0.00390625]  # saturating, and a tie (round half to even)
    np.save(tmp_path / "xf.npy", xf)
    cli.run("edgetpu", "run", path, "--device", "emu", "--cpu-model", cpu_path, "--input",
            tmp_path / "xf.npy", "-o", tmp_path / "yf.npy")
    yf = m.run(xf, device="emu", cpu_model=cpu_path)
    assert yf.tobytes() == np.load(tmp_path / "yf.npy").tobytes()


def test_whole_model_errors(cli, tmp_path):
    path, cpu_path = (fx(p) for p in PAIRS[0])
    m = npukit.edgetpu.Model(path)
    with pytest.raises(npukit.ArgumentError, match="needs device"):
        m.run(np.zeros((1, 160, 160, 3), np.uint8), device="usb", cpu_model=cpu_path)
    with pytest.raises(npukit.ArgumentError, match="give uint8 values or float32"):
        m.run(np.zeros((1, 160, 160, 3), np.int32), device="emu")
    with pytest.raises(npukit.ArgumentError, match="values given"):
        m.run(np.zeros((1, 160, 160), np.uint8), device="emu")
    # A CPU model that is not the one compiled: the library's error, as the CLI reports it.
    other = fx("models/mobilenet_v2_1.0_224_quant.tflite")
    with pytest.raises(npukit.Error) as e:
        m.run(np.zeros((1, 160, 160, 3), np.uint8), device="emu", cpu_model=other)
    np.save(tmp_path / "x.npy", np.zeros((1, 160, 160, 3), np.uint8))
    line = cli.error_line("edgetpu", "run", path, "--device", "emu", "--cpu-model", other,
                          "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    assert line.endswith(e.value.message)


def test_run_op_is_the_edgetpu_op(cli, tmp_path):
    # Dense: the whole model is its Edge TPU op.
    m = npukit.edgetpu.Model(fx(DENSE))
    x = np.random.default_rng(4).standard_normal(256).astype(np.float32)
    np.testing.assert_array_equal(m.run_op(x, device="emu"), npukit.edgetpu.Model(fx(DENSE)).run(x, device="emu"))
