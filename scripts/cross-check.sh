#!/bin/sh
# make cross-check: build npukit for the boards with Debian's cross compilers,
# with no optional dependency, and run the test suite under qemu-user.
#   aarch64-linux-gnu  RK3588 boards
#   mipsel-linux-gnu   Ingenic T31/T41
#   mips-linux-gnu     big-endian MIPS: proves nothing assumes the host byte order
# NPK_CROSS_TARGETS selects a subset.
set -eu
cd "$(dirname "$0")/.."
targets=${NPK_CROSS_TARGETS:-"aarch64-linux-gnu mipsel-linux-gnu mips-linux-gnu"}
jobs=$(nproc 2>/dev/null || echo 2)

# Debian has no big-endian MIPS port any more, so no libcmocka-dev:mips: build
# cmocka for it from Debian's own source package (nothing is vendored here).
cmocka_for_mips() {
    prefix=$PWD/build-cross-deps/cmocka-mips
    if [ -f "$prefix/lib/libcmocka-static.a" ]; then return 0; fi
    src=$PWD/build-cross-deps/src
    rm -rf "$src"
    mkdir -p "$src"
    (cd "$src" && apt-get source -qq cmocka >/dev/null)
    dir=$(ls -d "$src"/cmocka-*/ | head -1)
    cmake -S "$dir" -B "$src/build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/mips-linux-gnu.cmake" \
        -DWITH_STATIC_LIB=ON -DUNIT_TESTING=OFF -DWITH_EXAMPLES=OFF \
        -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
    cmake --build "$src/build" -j "$jobs" >/dev/null
    cmake --install "$src/build" >/dev/null
}

for t in $targets; do
    echo "== cross-check $t"
    extra=""
    if [ "$t" = mips-linux-gnu ]; then
        cmocka_for_mips
        extra="-DCMOCKA_INCLUDE=$PWD/build-cross-deps/cmocka-mips/include -DCMOCKA_LIB=$PWD/build-cross-deps/cmocka-mips/lib/libcmocka-static.a"
    fi
    b=build-cross-$t
    # shellcheck disable=SC2086
    cmake -S . -B "$b" -DCMAKE_TOOLCHAIN_FILE="cmake/toolchains/$t.cmake" \
        -DNPK_WITH_CJSON=OFF -DNPK_WITH_SPNG=OFF -DNPK_WITH_LIBUSB=OFF -DNPK_WITH_STB=OFF -DNPK_WITH_PROTOBUF_C=OFF -DNPK_BENCH=OFF $extra >/dev/null
    cmake --build "$b" -j "$jobs"
    (cd "$b" && ctest --output-on-failure -j "$jobs" --timeout 900)
done
echo "cross-check: all passed"
