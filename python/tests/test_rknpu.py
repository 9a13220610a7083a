"""npukit.rknpu.compile(...).run against `npukit rknpu run` (and `tflite run`
for the CPU side) on the fixtures."""
import numpy as np
import pytest

import npukit
from conftest import fx

MODEL = "models/mobilenet_v1_0.5_160_quant.tflite"


@pytest.mark.parametrize("cores", [1, 3])
def test_run_equals_cli(cli, tmp_path, cores):
    path = fx(MODEL)
    net = npukit.rknpu.compile(path, cores=cores)
    (spec,) = net.inputs
    (out,) = net.outputs
    assert spec.dtype == np.uint8 and spec.shape == (1, 160, 160, 3)
    st = net.stats
    assert st["npu_ops"] > 0 and st["tasks"] >= st["npu_ops"]
    x = np.random.default_rng(cores).integers(0, 256, spec.shape, dtype=np.uint8)
    np.save(tmp_path / "x.npy", x)
    p = cli.run("rknpu", "run", path, "--cores", cores, "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    assert ("%d ops on the NPU" % st["npu_ops"]) in p.stdout
    want = np.load(tmp_path / "y.npy")
    y = net.run(x, device="emu")
    assert y.dtype == want.dtype and y.shape == want.shape == out.shape
    assert y.tobytes() == want.tobytes()
    # The device stays bound; inputs by name; repeat with progress.
    seen = []
    y2 = net.run({spec.name: x}, repeat=2, progress=lambda *a: seen.append(a))
    assert y2.tobytes() == want.tobytes() and seen == [("run", 1, 2), ("run", 2, 2)]
    # The model's bytes instead of its path (and a one-core emulator for one core): the same.
    net1 = npukit.rknpu.compile(open(path, "rb").read(), cores=cores)
    assert net1.run(x, device="emu", emu_cores=1 if cores == 1 else 3).tobytes() == want.tobytes()


def test_errors(cli, tmp_path):
    path = fx(MODEL)
    net = npukit.rknpu.compile(path)
    with pytest.raises(npukit.ArgumentError, match="must be uint8"):
        net.run(np.zeros((1, 160, 160, 3), np.int8))
    with pytest.raises(npukit.ArgumentError, match="device must be one of"):
        net.run(np.zeros((1, 160, 160, 3), np.uint8), device="npu")
    with pytest.raises(npukit.ArgumentError, match="cores is 1, 2 or 3"):
        npukit.rknpu.compile(path, cores=4)
    with pytest.raises(npukit.Cancelled):
        net.run(np.zeros((1, 160, 160, 3), np.uint8), progress=lambda *a: False)
    data = open(path, "rb").read()
    bad = tmp_path / "half.tflite"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(npukit.FormatError) as e:
        npukit.rknpu.compile(bad)
    assert e.value.offset is not None
    assert str(e.value) == cli.error_line("rknpu", "compile", bad, "-o", tmp_path / "out")
    # Three cores' streams on a one-core emulator: the library's error, as the CLI reports it.
    np.save(tmp_path / "x.npy", np.zeros((1, 160, 160, 3), np.uint8))
    with pytest.raises(npukit.ArgumentError) as e:
        npukit.rknpu.compile(path, cores=3).run(np.zeros((1, 160, 160, 3), np.uint8), emu_cores=1)
    assert e.value.offset is not None
    assert str(e.value) == cli.error_line("rknpu", "run", path, "--cores", 3, "--emu-cores", 1,
                                          "--input", tmp_path / "x.npy", "-o", tmp_path / "y.npy")


def test_load_compiled_dir(cli, tmp_path):
    path = fx(MODEL)
    d = tmp_path / "c"
    cli.run("rknpu", "compile", path, "--cores", 3, "-o", d)
    x = np.random.default_rng(7).integers(0, 256, (1, 160, 160, 3), dtype=np.uint8)
    want = npukit.rknpu.compile(path, cores=3).run(x, device="emu")
    net = npukit.rknpu.load(d)
    # Three cores: a submit per layer spread over cores or per run of layers on one core.
    assert 1 < net.stats["submits"] < net.stats["npu_ops"]
    assert net.run(x, device="emu").tobytes() == want.tobytes()
    with pytest.raises(npukit.ArgumentError, match="needs `rknpu compile --form rocket`"):
        net.run(x, device="rocket")
    # An edited stream: refused naming the file, as the CLI reports it.
    reg = bytearray((d / "regcmd.bin").read_bytes())
    reg[64] ^= 1
    (d / "regcmd.bin").write_bytes(bytes(reg))
    with pytest.raises(npukit.FormatError, match="regcmd.bin differs") as e:
        npukit.rknpu.load(d)
    assert e.value.offset == 64


def test_close():
    net = npukit.rknpu.compile(fx(MODEL))
    with net as n:
        assert n is net
    with pytest.raises(npukit.ArgumentError, match="the network is closed"):
        net.run(np.zeros((1, 160, 160, 3), np.uint8))
    net.close()
