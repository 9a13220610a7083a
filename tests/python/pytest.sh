#!/bin/sh
# The Python package (python/npukit) over this build's library, compared
# with this build's CLI on the fixtures (python/tests, Debian's python3-pytest).
set -eu
py=${NPK_PYTHON:-python3}
lib=$(ls "$NPK_BUILD_DIR"/src/libnpukit.so.*.*.* | head -1)
export NPUKIT_LIBRARY="$lib" NPK_CLI PYTHONPATH="$NPK_SOURCE_DIR/python" PYTHONDONTWRITEBYTECODE=1
[ -n "${NPUKIT_FIXTURES:-}" ] || export NPUKIT_FIXTURES="$NPK_FIXTURES_DEFAULT"
cd "$NPK_SOURCE_DIR/python"
exec "$py" -m pytest -q -p no:cacheprovider tests
