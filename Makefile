# ingot: `make demo` and `make test` are all a user needs on a fresh Debian 12.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
VENV := .venv

.PHONY: all deps build build-runtime-only test test-fast demo demo-onnx clean \
  fuzz fuzz-smoke test-asan test-asan-runtime lint

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DINGOT_PYTHON=$(CURDIR)/$(VENV)/bin/python $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The runtime and CLI alone, without LLVM/MLIR: what a deployment machine builds.
build-runtime-only: deps
	@cmake -S . -B $(BUILD)/runtime-only -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DINGOT_ENABLE_COMPILER=OFF -DINGOT_ENABLE_TESTS=OFF -DINGOT_ENABLE_PYTHON=OFF >/dev/null
	@cmake --build $(BUILD)/runtime-only -j $(JOBS)

test: build build-runtime-only
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Skips tests labelled `slow` while iterating; CI runs everything.
test-fast: build build-runtime-only
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE slow

# clang-format and clang-tidy on what the last commit changed (LINT_BASE).
LINT_BASE ?= HEAD~1
lint: build
	@scripts/check-format.sh $(LINT_BASE)
	@scripts/check-tidy.sh $(LINT_BASE) $(BUILD)

demo: build
	@BUILD=$(BUILD) scripts/demo.sh

# The ONNX path: a transformer block compiled, run and compared with onnxruntime.
demo-onnx: build
	@BUILD=$(BUILD) scripts/demo_onnx.sh

# libFuzzer targets with ASan + UBSan (clang-22) in build-fuzz/; `make test`
# already replays their checked-in corpora. FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/fuzz.sh build

fuzz-smoke: fuzz
	@scripts/fuzz.sh smoke $(FUZZ_SECONDS)

# The unit and end-to-end suites on that ASan + UBSan build (not the slow
# SmolLM2 tests). A cold build takes long on 2 cores, so CI runs the
# runtime-only half below instead.
test-asan: build
	@scripts/fuzz.sh test

# The runtime alone (no LLVM/MLIR) with ASan + UBSan, any compiler: its unit
# tests and the runtime's fuzz targets replaying their corpora, started
# from the seed artifacts the normal build compiled.
ASAN_RUNTIME_BUILD := $(BUILD)/asan-runtime
test-asan-runtime: build
	@cmake -S . -B $(ASAN_RUNTIME_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DINGOT_SANITIZE=ON -DINGOT_ENABLE_COMPILER=OFF -DINGOT_ENABLE_PYTHON=OFF \
	  -DINGOT_FUZZ_ARTIFACT_DIR=$(CURDIR)/$(BUILD)/fuzz-data >/dev/null
	@cmake --build $(ASAN_RUNTIME_BUILD) -j $(JOBS)
	@cd $(ASAN_RUNTIME_BUILD) && ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS) -L 'unit|fuzz'

clean:
	rm -rf $(BUILD)
