# ingot: `make demo` and `make test` are all a user needs on a fresh Debian 12.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
VENV := .venv

.PHONY: all deps build build-runtime-only test test-fast demo demo-onnx clean

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

demo: build
	@BUILD=$(BUILD) scripts/demo.sh

# The ONNX path: a transformer block compiled, run and compared with onnxruntime.
demo-onnx: build
	@BUILD=$(BUILD) scripts/demo_onnx.sh

clean:
	rm -rf $(BUILD)
