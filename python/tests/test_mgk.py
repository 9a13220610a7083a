"""npukit.mgk.Model against `npukit mgk info --json / extract / replace`."""
import numpy as np
import pytest

import npukit
from conftest import fx, read_safetensors, write_safetensors

MGK = "mgk/AEC_T41_16K_NS_OUT_UC.mgk"


def test_layers_equal_cli(cli):
    path = fx(MGK)
    info = cli.json("mgk", "info", "--json", path)
    layers = npukit.mgk.Model(path).layers
    convs = [l for l in layers if l.kind == "conv"]
    grus = [l for l in layers if l.kind == "gru"]
    assert len(convs) == len(info["layers"]) and len(grus) == len(info["grus"])
    for l, j in zip(convs, info["layers"]):
        assert (l.id, l.name, l.kernel, l.record_offset) == (j["id"], j["name"], j["kernel"], j["record_offset"])
        assert list(l.weight_shape) == j["weight_shape"]
        assert (l.out_channels, l.in_channels, l.kernel_h, l.kernel_w, l.bits) == (
            j["out_channels"], j["in_channels"], j["kernel_h"], j["kernel_w"], j["bits"])
        assert (list(l.pads), list(l.stride), list(l.dilation), l.act) == (
            j["pads"], j["stride"], j["dilation"], j["act"])
        assert (l.usable, l.requant_ok, l.requant_form, l.problem) == (
            j["usable"], j["requant_ok"], j["requant_form"], j.get("problem", ""))
    for l, j in zip(grus, info["grus"]):
        assert (l.id, l.usable, l.problem) == (j["id"], j["usable"], j.get("problem", ""))
        if l.usable:
            assert list(l.weight_shape) == j["weight_shape"]
            assert (l.directions, l.batch, l.seq, l.input_size, l.hidden_size) == (
                j["directions"], j["batch"], j["seq"], j["input_size"], j["hidden_size"])


def test_extract_equals_cli(cli, tmp_path):
    path = fx(MGK)
    cli.run("mgk", "extract", path, "-o", tmp_path / "w.safetensors", ok=(0, 1))
    want = read_safetensors(tmp_path / "w.safetensors")
    got = npukit.mgk.Model(path).extract()
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype.newbyteorder("=")
        np.testing.assert_array_equal(got[k], want[k])
    # The arrays own the library's buffers: they outlive the model.
    w = npukit.mgk.Model(path).extract()["layer_12.weight"]
    assert w.base is not None and w.flags.writeable
    np.testing.assert_array_equal(w, want["layer_12.weight"])


def test_replace_equals_cli(cli, tmp_path):
    path = fx(MGK)
    m = npukit.mgk.Model(path)
    w = m.extract()
    # extract then replace: a byte-identical file.
    same = m.replace(w)
    assert same.to_bytes() == open(path, "rb").read()
    assert same.replaced.bytes_changed == 0 and same.replaced.layers > 0
    # New values for one convolution and one GRU, within their bit widths.
    rng = np.random.default_rng(2)
    conv = next(l for l in m.layers if l.kind == "conv" and l.usable)
    gru = next(l for l in m.layers if l.kind == "gru" and l.usable)
    lim = 2 ** (conv.bits - 1)
    new = {
        "layer_%d.weight" % conv.id: rng.integers(-lim, lim, w["layer_%d.weight" % conv.id].shape).astype(np.int8),
        "layer_%d.W" % gru.id: np.zeros_like(w["layer_%d.W" % gru.id]),
        "unrelated": np.zeros(3, np.float32),
    }
    write_safetensors(tmp_path / "new.safetensors", new)
    p = cli.run("mgk", "replace", path, "--weights", tmp_path / "new.safetensors", "-o", tmp_path / "cli.mgk")
    patched = m.replace(new)
    assert patched.to_bytes() == (tmp_path / "cli.mgk").read_bytes()
    st = patched.replaced
    assert "%d layer(s) re-encoded, %d byte(s) changed, %d tensor(s) ignored" % st in p.stderr
    patched.save(tmp_path / "py.mgk")
    assert (tmp_path / "py.mgk").read_bytes() == (tmp_path / "cli.mgk").read_bytes()
    np.testing.assert_array_equal(patched.extract()["layer_%d.weight" % conv.id], new["layer_%d.weight" % conv.id])


def test_errors_equal_cli(cli, tmp_path):
    path = fx(MGK)
    m = npukit.mgk.Model(path)
    conv = next(l for l in m.layers if l.kind == "conv" and l.usable)
    key = "layer_%d.weight" % conv.id
    bad = {key: np.full(m.extract()[key].shape, 127 if conv.bits < 8 else 0, np.int8)}
    bad[key] = bad[key][..., :1].copy()  # wrong shape
    write_safetensors(tmp_path / "bad.safetensors", bad)
    with pytest.raises(npukit.Error) as e:
        m.replace(bad)
    line = cli.error_line("mgk", "replace", path, "--weights", tmp_path / "bad.safetensors", "-o", tmp_path / "o.mgk")
    assert line.endswith(e.value.message)
    data = open(path, "rb").read()
    (tmp_path / "cut.mgk").write_bytes(data[:1000])
    with pytest.raises(npukit.FormatError) as e:
        npukit.mgk.Model(tmp_path / "cut.mgk")
    assert str(e.value) == cli.error_line("mgk", "info", tmp_path / "cut.mgk")
