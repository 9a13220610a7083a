#!/bin/sh
# Installs the Debian packages npukit needs for a goal, or, when not root,
# prints the exact apt-get line and fails.  usage: scripts/deps.sh GOAL
#   build  - compile the library, CLI and benchmark program
#   check  - build + run the test suite
#   cross  - cross-compile for the boards and run tests under qemu-user
#   fuzz   - libFuzzer targets
#   release - Release builds with gcc and clang (what packagers build)
set -eu
goal=${1:-build}

build="cmake make gcc pkg-config libcjson-dev libspng-dev libusb-1.0-0-dev"
check="$build libcmocka-dev python3 python3-numpy python3-flatbuffers flatbuffers-compiler valgrind"
bench="libopenblas-dev"
cross="$build qemu-user gcc-aarch64-linux-gnu gcc-mips-linux-gnu gcc-mipsel-linux-gnu libc6-dev-arm64-cross libc6-dev-mips-cross libc6-dev-mipsel-cross libcmocka-dev libcmocka-dev:arm64 libcmocka-dev:mipsel dpkg-dev"
fuzz="$build clang lld libclang-rt-14-dev python3"
release="$check clang"

case $goal in
build) pkgs="$build $bench" ;;
check) pkgs="$check $bench" ;;
cross) pkgs="$cross" ;;
fuzz) pkgs="$fuzz" ;;
release) pkgs="$release" ;;
*) echo "usage: $0 build|check|cross|fuzz|release" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

# Cross goal: multiarch for the boards' libraries, and Debian source packages
# (cmocka for big-endian MIPS, which has no Debian port).
cross_setup() {
    dpkg --add-architecture arm64
    dpkg --add-architecture mipsel
    if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
        cat > /etc/apt/sources.list.d/npukit-debian-src.sources <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
}

if [ "$(id -u)" = 0 ]; then
    echo "npukit: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    [ "$goal" = cross ] && cross_setup
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "npukit: missing Debian packages. Run as root:" >&2
    [ "$goal" = cross ] && echo "  dpkg --add-architecture arm64; dpkg --add-architecture mipsel; (enable deb-src); apt-get update" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi
