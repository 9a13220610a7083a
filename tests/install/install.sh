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
echo "install: ok"
