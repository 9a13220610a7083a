#!/bin/sh
# `make install` gives a usable library: headers, static and shared libraries,
# the CLI, npukit.pc for pkg-config and a CMake package for find_package().
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
cmake --install "$NPK_BUILD_DIR" --prefix "$prefix" >/dev/null
for f in include/npukit/npukit.h include/npukit/version.h bin/npukit; do
    [ -e "$prefix/$f" ] || { echo "missing $f" >&2; exit 1; }
done
libdir=$(ls -d "$prefix"/lib* | head -1)
ls "$libdir"/libnpukit.a "$libdir"/libnpukit.so >/dev/null
"$prefix/bin/npukit" --version | grep -q '^npukit '

cat > "$tmp/app.c" <<'C'
#include <npukit/npukit.h>
#include <stdio.h>
int main(void)
{
    npk_error err = {0};
    uint8_t b[4] = {1, 0, 0, 0};
    npk_cursor c = npk_cur_init(b, 4, 0);
    uint32_t v;
    if (npk_cur_u32le(&c, &v, &err) || v != 1) return 1;
    printf("%s %g\n", npk_version(), (double)npk_f16_to_f32(0x3c00));
    return 0;
}
C
# pkg-config (shared library)
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists npukit
cc "$tmp/app.c" -o "$tmp/app_pc" $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs npukit)
LD_LIBRARY_PATH="$libdir" "$tmp/app_pc" | grep -q ' 1$'

# find_package(npukit), shared and static targets
mkdir -p "$tmp/cm"
cp "$tmp/app.c" "$tmp/cm/app.c"
cat > "$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(app C)
find_package(npukit REQUIRED)
add_executable(app_shared app.c)
target_link_libraries(app_shared PRIVATE npukit::npukit)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE npukit::npukit_static)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cm/build/app_shared" | grep -q ' 1$'
"$tmp/cm/build/app_static" | grep -q ' 1$'
# The man page (when help2man made one) and the bash completion.
if [ -e "$NPK_BUILD_DIR/npukit.1" ]; then
    [ -s "$prefix/share/man/man1/npukit.1" ] || { echo "missing the man page" >&2; exit 1; }
fi
[ -s "$prefix/share/bash-completion/completions/npukit" ] || { echo "missing the bash completion" >&2; exit 1; }

# The Python package, imported from the install tree (not the sources) with
# no NPUKIT_LIBRARY: it loads the library installed with it, also when the
# tree was staged elsewhere (DESTDIR) and moved.
py=${NPK_PYTHON:-python3}
if "$py" -c 'import numpy' 2>/dev/null; then
    DESTDIR="$tmp/stage" cmake --install "$NPK_BUILD_DIR" --prefix /opt/npukit >/dev/null
    mv "$tmp/stage/opt/npukit" "$tmp/moved"
    "$py" -c 'import numpy; numpy.save("'"$tmp"'/t.npy", numpy.arange(6, dtype="<i2").reshape(2, 3))'
    for root in "$prefix" "$tmp/moved"; do
        site=$(dirname "$(find "$root" -path '*-packages/npukit/__init__.py')")
        site=$(dirname "$site")
        want=$("$root/bin/npukit" info --json "$tmp/t.npy" 2>/dev/null || true)
        (cd "$tmp" && env -u NPUKIT_LIBRARY PYTHONPATH="$site" PYTHONDONTWRITEBYTECODE=1 "$py" - "$root" "$tmp/t.npy" "$want") <<'PY'
import json, os, sys
import npukit
root, path, want = sys.argv[1:]
lib = os.path.realpath(npukit.LIBRARY_PATH)
assert lib.startswith(os.path.realpath(root) + os.sep), "loaded %s, not the library under %s" % (lib, root)
assert os.path.dirname(npukit.__file__).startswith(os.path.realpath(root)), npukit.__file__
got = npukit.info(path)
assert got["format"] == "npy", got
if want:  # the installed CLI's --json (when built with JSON) says the same
    w = json.loads(want)
    assert (got["format"], got["size"]) == (w["format"], w["size"]), (got, w)
print("python from %s: ok (%s)" % (root, lib))
PY
    done
elif [ "${CI:-}" = true ]; then
    echo "python3-numpy missing (scripts/deps.sh check installs it)" >&2
    exit 1
fi
echo "install: ok"
