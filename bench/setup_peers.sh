#!/usr/bin/env bash
# Creates .venv-bench with what bench/compare.py needs: numpy, onnx,
# onnxruntime, gguf, safetensors and llama-cpp-python. Idempotent.
#
# llama-cpp-python compiles llama.cpp from source (CPU only, -march=native,
# minutes on two cores). The wheel it builds is kept under
# .cache/wheels/<cpu-key>/ (the key hashes the CPU model and flags, since a
# native build only runs on the CPU that built it), and pip's own cache keeps
# it too, so later runs install it in seconds.
#
# AMX is compiled out (-mno-amx-*; LLAMA_CFLAGS overrides): with it, the
# Q4_0/Q4_1/Q8_0 matmuls of llama.cpp 0.3.36's AMX path died with SIGILL on
# their first tile instruction on this workplace's AMX Xeons, so no
# quantised GGUF could be timed. An installed build that reports
# AMX_INT8 = 1 is replaced.
#
#   bench/setup_peers.sh            # or: JOBS=4 bench/setup_peers.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-bench
LLAMA_CPP_PYTHON_VERSION=${LLAMA_CPP_PYTHON_VERSION:-0.3.36}
JOBS=${JOBS:-2}
PY=${PYTHON:-python3}
LLAMA_CFLAGS=${LLAMA_CFLAGS--mno-amx-tile -mno-amx-int8 -mno-amx-bf16}

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)

# diskcache, jinja2 and typing-extensions are llama-cpp-python's own
# dependencies: its wheel is installed with --no-deps below. onnx_ir is
# what onnxruntime's MatMulNBits quantiser imports (the int4 ORT stack).
"$VENV/bin/python" -c "import numpy, onnx, onnx_ir, onnxruntime, gguf, safetensors, diskcache, jinja2, typing_extensions" 2>/dev/null ||
  "${PIP[@]}" numpy onnx onnx_ir onnxruntime gguf safetensors diskcache jinja2 typing-extensions

want_amx=1
case "$LLAMA_CFLAGS" in *-mno-amx-int8*) want_amx=0 ;; esac
if "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  has_amx=$("$VENV/bin/python" -c "import llama_cpp
print(int('AMX_INT8 = 1' in llama_cpp.llama_print_system_info().decode()))" 2>/dev/null || echo 1)
  if [ "$want_amx" = 1 ] || [ "$has_amx" = 0 ]; then
    echo "llama-cpp-python already installed in $VENV" >&2
    exit 0
  fi
  echo "the installed llama-cpp-python has AMX_INT8 = 1; rebuilding without AMX" >&2
fi

cpu_key=$( (grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; echo "$LLAMA_CFLAGS") |
           sha1sum | cut -c1-12)
WHEELS=.cache/wheels/$cpu_key
mkdir -p "$WHEELS"
wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  echo "building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION (CPU only, $JOBS jobs; minutes)" >&2
  CFLAGS="${CFLAGS:-} $LLAMA_CFLAGS" CXXFLAGS="${CXXFLAGS:-} $LLAMA_CFLAGS" \
  CMAKE_BUILD_PARALLEL_LEVEL=$JOBS \
  CMAKE_ARGS="-DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF -DGGML_OPENMP=ON \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF \
-DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF" \
    nice -n 19 "$VENV/bin/pip" wheel --disable-pip-version-check --no-deps --no-cache-dir -w "$WHEELS" \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
  wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl | head -1)
fi
echo "installing $wheel" >&2
"${PIP[@]}" --force-reinstall --no-deps "$wheel"
"$VENV/bin/python" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)
print(llama_cpp.llama_print_system_info().decode().strip())"
