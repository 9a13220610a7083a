# Thin wrapper around CMake. The two commands of the README:
#   make demo   - install missing Debian packages (as root), build, run the demo
#   make check  - install missing Debian packages (as root), build, run all tests
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build demo check bench install clean asan-check fuzz-smoke valgrind cross-check format release-check release-builds

all: build

deps:
	@scripts/deps.sh check

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	sh scripts/demo.sh $(BUILD)

check: build
	scripts/oracle-deps.sh $(BUILD)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/npukit-bench

# The sanitizer build of CI: same tests under ASan + UBSan, light (every
# property checked on fewer inputs: npk_test_light).
asan-check: deps
	cmake -S . -B build-asan -DNPK_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DNPK_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	scripts/oracle-deps.sh build-asan
	cd build-asan && NPK_TEST_LIGHT=1 ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

# What a packager builds: Release with gcc (and its tests) and with clang
# (build only), -Werror forced on here (a user's Release build has it off).
release-check:
	@scripts/deps.sh release
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DNPK_WERROR=ON
	cmake --build build-release -j $(JOBS)
	cd build-release && ctest --output-on-failure -j $(JOBS) -LE oracle
	CC=clang cmake -S . -B build-release-clang -DCMAKE_BUILD_TYPE=Release -DNPK_WERROR=ON
	cmake --build build-release-clang -j $(JOBS)

# Build for the boards (aarch64, mipsel, big-endian mips) and test under qemu-user.
cross-check:
	@scripts/deps.sh cross
	scripts/cross-check.sh

# Every libFuzzer target for a bounded time (about 60 s in all); see docs/fuzzing.md.
fuzz-smoke:
	@scripts/deps.sh fuzz
	scripts/fuzz-smoke.sh

# Developer's build matrix (library, CLI, tests, benchmark, fuzz targets) with gcc and
# clang, failing on any warning; TYPES="Debug MinSizeRel ..." for more (CI: release-check).
release-builds:
	@scripts/deps.sh check
	@scripts/deps.sh fuzz
	JOBS=$(JOBS) scripts/build-matrix.sh "gcc clang" "$(or $(TYPES),Release)"

# The CLI under valgrind memcheck over every fixture: zero errors, zero leaks.
valgrind: build
	scripts/valgrind-cli.sh $(BUILD)

# PREFIX goes to configure time too: where the Python package goes depends on it.
install: deps $(BUILD)/CMakeCache.txt
	$(if $(PREFIX),cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX))
	cmake --build $(BUILD) -j $(JOBS)
	cmake --install $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-cross-* build-release build-release-clang build-matrix
