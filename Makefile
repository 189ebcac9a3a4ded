# Convenience front end over CMake/CTest.  `make demo` and `make test` are the
# two commands of the README; everything else is optional.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 20
# The original golden vectors, when they sit next to the project (in
# ../shared/vectors/rifl): the test vectors_match_shared compares
# tests/vectors/ with them (it skips without).
RIFL_SHARED_DIR ?= $(patsubst %/vectors/rifl,%,$(realpath $(CURDIR)/../shared/vectors/rifl))
export RIFL_SHARED_DIR
# Default suite: every CTest test whose name contains neither "long" nor
# "fuzz"; the full-length runs are the *_long tests.
DEFAULT_TESTS = -E 'long|fuzz'

.PHONY: all deps configure build demo test test-unit test-sanitize fuzz-smoke \
        test-long bench install clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Main job: two lanes back to back over a 10 m cable, random packets both
# ways with bit errors, lossless check.
demo: build
	@./$(BUILD)/rifl demo

# Every test: the normal build, then AddressSanitizer + UBSan, then a short
# libFuzzer run of every harness.
test: test-unit test-sanitize fuzz-smoke

test-unit: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(DEFAULT_TESTS)

test-sanitize: deps
	@CC=clang cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DRIFL_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS) $(DEFAULT_TESTS)

fuzz-smoke: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	    -DRIFL_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@./scripts/fuzz-smoke.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Full-length randomised runs (10M+ frames per direction, etc.): every test
# program with a --long mode, as the CTest tests *_long.
test-long: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -R long

bench: build
	@./bench/run.sh ./$(BUILD)/rifl

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
