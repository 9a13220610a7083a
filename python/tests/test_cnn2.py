"""npukit.cnn2.render / load_png against `npukit cnn2 render`."""
import numpy as np
import pytest

import npukit
from conftest import fx

MODELS = [
    "cnn2/synthetic_identity_1x1_v1.bin",
    "cnn2/synthetic_identity_3x3_v2.bin",
    "cnn2/synthetic_mix_1x1_v2_mip2.bin",
    "cnn2/synthetic_random_3layer_v2.bin",
]


@pytest.fixture(scope="module")
def picture(cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("pic")
    cli.run("cnn2", "pattern", "--size", "37x23", "--alpha", "-o", d / "in.png")
    cli.run("cnn2", "pattern", "--size", "37x23", "--seed", "5", "-o", d / "depth.png")
    return d


@pytest.mark.parametrize("rel", MODELS)
def test_render_equals_cli(cli, tmp_path, picture, rel):
    model = fx(rel)
    cli.run("cnn2", "render", model, picture / "in.png", "-o", tmp_path / "out.png", "--raw", tmp_path / "raw.npy")
    rgba = npukit.cnn2.render(model, picture / "in.png")
    assert rgba.dtype == np.uint8 and rgba.shape == (23, 37, 4)
    # The CLI's PNG, decoded by the library: rgba / 255 exactly.
    np.testing.assert_array_equal(npukit.cnn2.load_png(tmp_path / "out.png"), rgba.astype(np.float32) / np.float32(255))
    raw = npukit.cnn2.render(model, picture / "in.png", raw=True)
    np.testing.assert_array_equal(raw, np.load(tmp_path / "raw.npy"))
    # The same picture as pixels or as floats; the reference renderer: the same bits.
    pixels = np.rint(npukit.cnn2.load_png(picture / "in.png") * 255).astype(np.uint8)
    np.testing.assert_array_equal(npukit.cnn2.render(model, pixels), rgba)
    np.testing.assert_array_equal(npukit.cnn2.render(model, npukit.cnn2.load_png(picture / "in.png"), raw=True), raw)
    np.testing.assert_array_equal(npukit.cnn2.render(model, picture / "in.png", raw=True, reference=True), raw)


def test_render_options_equal_cli(cli, tmp_path, picture):
    model = fx("cnn2/synthetic_random_3layer_v2.bin")
    cli.run("cnn2", "render", model, picture / "in.png", "-o", tmp_path / "out.png", "--raw", tmp_path / "raw.npy",
            "--blend", "0.5", "--border", "zero", "--activation", "legacy-clamp", "--precision", "f32",
            "--depth", picture / "depth.png", "--threads", "2")
    kw = dict(depth=picture / "depth.png", border="zero", activation="legacy-clamp", precision="f32", threads=2)
    rgba = npukit.cnn2.render(model, picture / "in.png", blend=0.5, **kw)
    np.testing.assert_array_equal(npukit.cnn2.load_png(tmp_path / "out.png"), rgba.astype(np.float32) / np.float32(255))
    np.testing.assert_array_equal(npukit.cnn2.render(model, picture / "in.png", raw=True, **kw), np.load(tmp_path / "raw.npy"))
    # RGB pixels (no alpha): D = 1, as for a PNG without alpha.
    rgb = np.rint(npukit.cnn2.load_png(picture / "depth.png")[..., :3] * 255).astype(np.uint8)
    np.testing.assert_array_equal(npukit.cnn2.render(model, rgb), npukit.cnn2.render(model, picture / "depth.png"))


@pytest.mark.parametrize("reference", [False, True])
def test_progress_and_cancel(picture, reference):
    model = fx("cnn2/synthetic_random_3layer_v2.bin")
    calls = []
    npukit.cnn2.render(model, picture / "in.png", threads=1, reference=reference,
                       progress=lambda what, done, total: calls.append((what, done, total)))
    assert calls and all(w == "row" for w, _, _ in calls)
    done = [d for _, d, _ in calls]
    assert done == sorted(done) and done[-1] == calls[-1][2]
    with pytest.raises(npukit.Cancelled):
        npukit.cnn2.render(model, picture / "in.png", threads=1, reference=reference,
                           progress=lambda what, done, total: False)


def test_errors_equal_cli(cli, tmp_path, picture):
    bad = fx("cnn2/bad_offset.bin")
    with pytest.raises(npukit.FormatError) as e:
        npukit.cnn2.render(bad, picture / "in.png")
    assert str(e.value) == cli.error_line("cnn2", "render", bad, picture / "in.png", "-o", tmp_path / "o.png")
    model = fx(MODELS[0])
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    with pytest.raises(npukit.Error) as e:
        npukit.cnn2.load_png(tmp_path / "x.png")
    assert str(e.value) == cli.error_line("cnn2", "render", model, tmp_path / "x.png", "-o", tmp_path / "o.png")
    with pytest.raises(npukit.ArgumentError):
        npukit.cnn2.render(model, picture / "in.png", border="wrap")
    with pytest.raises(npukit.ArgumentError):
        npukit.cnn2.render(model, np.zeros((4, 4, 2), np.uint8))
