"""npukit.tflite.Model against `npukit tflite run` on the real models."""
import os

import numpy as np
import pytest

import npukit
from conftest import fx

MODELS = [
    "models/mobilenet_v2_1.0_224_quant.tflite",
    "models/tf2_mobilenet_v2_1.0_224_ptq.tflite",
    "models/mobilenet_v1_0.5_160_quant.tflite",
    "models/movenet_single_pose_lightning_ptq.tflite",
    "edgetpu/split_concat.tflite",
    "edgetpu/dense_256.tflite",
]


def random_input(spec, seed):
    rng = np.random.default_rng(seed)
    if spec.dtype.kind == "f":
        return rng.standard_normal(spec.shape).astype(spec.dtype)
    info = np.iinfo(spec.dtype)
    return rng.integers(info.min, info.max, spec.shape, dtype=spec.dtype, endpoint=True)


def cli_outputs(cli, tmp, model, m, xs):
    args = ["tflite", "run", model]
    for i, (spec, x) in enumerate(zip(m.inputs, xs)):
        p = os.path.join(tmp, "in%d.npy" % i)
        np.save(p, x)
        args += ["--input", "%s=%s" % (spec.name, p)]
    if len(m.outputs) == 1:
        out = os.path.join(tmp, "out.npy")
        cli.run(*args, "-o", out)
        return {m.outputs[0].name: np.load(out)}
    out = os.path.join(tmp, "outs.safetensors")
    cli.run(*args, "-o", out)
    from conftest import read_safetensors

    return read_safetensors(out)


@pytest.mark.parametrize("rel", MODELS)
def test_run_equals_cli(cli, tmp_path, rel):
    path = fx(rel)
    m = npukit.tflite.Model(path)
    xs = [random_input(s, 7 + i) for i, s in enumerate(m.inputs)]
    want = cli_outputs(cli, tmp_path, path, m, xs)
    got = m.run(xs)
    if len(m.outputs) == 1:
        got = {m.outputs[0].name: got}
    assert list(got) == [s.name for s in m.outputs]
    for spec in m.outputs:
        assert got[spec.name].dtype == spec.dtype and got[spec.name].shape == spec.shape
        np.testing.assert_array_equal(got[spec.name], want[spec.name])
    # By name, as a dict and as keywords, and from the model's bytes: the same.
    named = {s.name: x for s, x in zip(m.inputs, xs)}
    again = npukit.tflite.Model(open(path, "rb").read(), threads=2).run(named)
    if len(m.outputs) == 1:
        np.testing.assert_array_equal(again, got[m.outputs[0].name])
    else:
        for k in got:
            np.testing.assert_array_equal(again[k], got[k])


def test_specs_equal_cli(cli):
    path = fx("edgetpu/split_concat.tflite")
    m = npukit.tflite.Model(path)
    info = cli.json("tflite", "info", "--json", path)
    sg = info["subgraphs"][0]
    for specs, idx in ((m.inputs, sg["inputs"]), (m.outputs, sg["outputs"])):
        assert [s.index for s in specs] == idx
        for s, i in zip(specs, idx):
            t = sg["tensors"][i]
            assert s.name == t["name"] and list(s.shape) == t["shape"]
            assert s.dtype == np.dtype(t["type"].lower())
            assert s.scale == pytest.approx(t["quantization"]["scale"][0], rel=1e-7)
            assert s.zero_point == t["quantization"]["zero_point"][0]


def test_wrong_input(tmp_path):
    m = npukit.tflite.Model(fx("models/mobilenet_v1_0.5_160_quant.tflite"))
    with pytest.raises(npukit.ArgumentError, match=r"input 'input' must be uint8 \[1, 160, 160, 3\], got float64"):
        m.run(np.zeros((1, 160, 160, 3)))
    with pytest.raises(npukit.NotFoundError):
        m.run(nope=np.zeros((1, 160, 160, 3), np.uint8))
    with pytest.raises(npukit.ArgumentError, match="no value for input 'input'"):
        m.run()


def test_errors_equal_cli(cli, tmp_path):
    # A model cut short: the same message and offset as the CLI's error line.
    data = open(fx("models/mobilenet_v1_0.5_160_quant.tflite"), "rb").read()
    bad = tmp_path / "cut.tflite"
    bad.write_bytes(data[: len(data) // 3])
    with pytest.raises(npukit.FormatError) as e:
        npukit.tflite.Model(bad)
    assert str(e.value) == cli.error_line("tflite", "run", bad, "--input", "x.npy", "-o", tmp_path / "y.npy")
    assert e.value.offset is not None
    # From bytes: the same error, without a path.
    with pytest.raises(npukit.FormatError) as e2:
        npukit.tflite.Model(data[: len(data) // 3])
    assert (e2.value.message, e2.value.offset, e2.value.path) == (e.value.message, e.value.offset, None)


def test_unsupported_model_equals_cli(cli, tmp_path):
    path = fx("edgetpu/keras_lstm_mnist_ptq_edgetpu.tflite")
    with pytest.raises(npukit.Error) as e:
        npukit.tflite.Model(path)
    assert str(e.value) == cli.error_line("tflite", "run", path, "--input", "x.npy", "-o", tmp_path / "y.npy")


def test_repeat_progress_and_cancel():
    m = npukit.tflite.Model(fx("edgetpu/dense_256.tflite"))
    x = random_input(m.inputs[0], 1)
    calls = []
    y = m.run(x, repeat=5, progress=lambda what, done, total: calls.append((what, done, total)))
    assert calls == [("run", k, 5) for k in range(1, 6)]
    np.testing.assert_array_equal(y, m.run(x))
    with pytest.raises(npukit.Cancelled, match="cancelled after 2 of 5 runs"):
        m.run(x, repeat=5, progress=lambda what, done, total: done < 2)

    class Stop(Exception):
        pass

    def boom(what, done, total):
        raise Stop()

    with pytest.raises(Stop):  # an exception in the callback comes back to the caller
        m.run(x, repeat=3, progress=boom)
    m.close()
    with pytest.raises(npukit.ArgumentError):
        m.run(x)


def test_close():
    # A with block frees the interpreter at its end; closing again is fine.
    with npukit.tflite.Model(fx("models/mobilenet_v1_0.5_160_quant.tflite")) as m:
        x = np.zeros(m.inputs[0].shape, m.inputs[0].dtype)
        assert m.run(x).shape == m.outputs[0].shape
    with pytest.raises(npukit.ArgumentError, match="the model is closed"):
        m.run(x)
    m.close()
