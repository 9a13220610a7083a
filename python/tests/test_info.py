"""npukit.info against `npukit info --json`, on every fixture file."""
import json

import pytest

import npukit
from conftest import fixtures_in, fx

FILES = fixtures_in("")


@pytest.mark.parametrize("rel", FILES or ["edgetpu/dense_256_edgetpu.tflite"])
def test_info_equals_cli(cli, rel):
    path = fx(rel)
    p = cli.run("info", "--json", path, ok=(0, 2))
    want = json.loads(p.stdout)
    if p.returncode == 0:
        assert npukit.info(path) == want
        return
    # Unrecognised or malformed: the same error, and the same partial description.
    with pytest.raises(npukit.Error) as e:
        npukit.info(path)
    assert e.value.message == want.pop("error")
    assert e.value.offset == want.pop("error_offset", None)
    assert str(e.value) == cli.error_line("info", path)
    if "details" in want:
        assert e.value.info == want
    else:
        assert e.value.info is None


def test_info_missing_file(cli, tmp_path):
    missing = tmp_path / "none.bin"
    with pytest.raises(npukit.IOFailure) as e:
        npukit.info(missing)
    assert isinstance(e.value, OSError)
    assert str(e.value) == cli.error_line("info", missing)


def test_version_and_features(cli):
    line = cli.run("--version").stdout
    assert line.startswith("npukit %s " % npukit.version())
    assert npukit.version() == npukit.__version__
    assert "(commit %s; " % npukit.commit() in line
    want = line.split("features: ")[1].split(";")[0]
    assert npukit.features() == (set() if want == "none" else set(want.split()))
