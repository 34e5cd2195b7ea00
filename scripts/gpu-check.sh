#!/usr/bin/env bash
# The GPU check: one prepared command for a machine lent a GPU.
#
#   scripts/gpu-check.sh prepare     here (the compiler, no GPU): compiles the
#                                    check's models for cpu,cuda:sm_80,sm_90,
#                                    sm_100 into build/gpu-check/models (ONNX
#                                    elementwise) and .../llm (tiny f32
#                                    Llama/Mistral/Phi3, every step on CUDA),
#                                    .../real (the bundled SmolLM2 Q4_1's
#                                    first 8 blocks: real weights within the
#                                    64 MiB the device tool carries), .../big
#                                    (a Llama-3.2-1B-shaped model compiled
#                                    with --weights=external: no weights
#                                    travel; the GPU side makes them with
#                                    transformers) and copies the header-only
#                                    dependencies the GPU machine lacks into
#                                    build/gpu-check/deps
#   scripts/gpu-check.sh [--out DIR] [--only PARTS]
#                                    there (no MLIR, no network): builds the
#                                    runtime-only ingot, checks every artifact
#                                    on the GPU against the CPU and times both
#                                    beside PyTorch; writes the reports
#                                    (gpu-check*.json, gpu-check*.md) to DIR
#                                    (default $OUT, else build/gpu-check/out);
#                                    --only picks among run, llm, bench, peer
#                                    and big (the 1B model: not in the
#                                    default list, run it as its own call)
#
# Without a GPU the second form says so and exits 0. Carry build/gpu-check
# (a few MB) with the tree: the device tool's `carry: ["build/gpu-check"]`.
set -euo pipefail
cd "$(dirname "$0")/.."
PREPARED=build/gpu-check

prepare() {
  local ingot=build/bin/ingot py=.venv/bin/python
  [ -x "$ingot" ] || { echo "gpu-check: build first (make build)" >&2; exit 1; }
  rm -rf "$PREPARED" && mkdir -p "$PREPARED"/{models,onnx,deps/include,deps/generated}
  "$py" scripts/gpu_check_models.py "$PREPARED/onnx" >/dev/null
  for m in "$PREPARED"/onnx/*.onnx; do
    "$ingot" compile "$m" -o "$PREPARED/models/$(basename "${m%.onnx}").ingot" \
      --target cpu,cuda:sm_80,cuda:sm_90,cuda:sm_100 --max-dim rows=65536 2>/dev/null
  done
  mkdir -p "$PREPARED/llm"
  for m in llama mistral phi3; do
    "$py" -c "import sys; sys.path.insert(0, 'test/fixtures'); import hf_models; \
hf_models.make_model('$m', '$PREPARED/hf')" >/dev/null
    "$ingot" compile "$PREPARED/hf/$m" -o "$PREPARED/llm/$m.ingot" \
      --target cpu,cuda:sm_80,cuda:sm_90,cuda:sm_100
  done
  rm -rf "$PREPARED/hf"
  prepare_real
  prepare_big
  cp -r /usr/include/flatbuffers /usr/include/nlohmann /usr/include/CLI \
    /usr/include/xxhash.h "$PREPARED/deps/include/"
  cp build/format/generated/manifest_generated.h "$PREPARED/deps/generated/"
  du -sh "$PREPARED" | sed 's/^/gpu-check: prepared /'
}

# The bundled model's first REAL_BLOCKS blocks (scripts/gguf_slice.py): the
# whole 94 MiB file does not fit the device tool's 64 MiB.
REAL_BLOCKS=8
prepare_real() {
  local py=.venv/bin/python gguf slice="$PREPARED/real/smollm2-${REAL_BLOCKS}blocks"
  gguf="$("$py" scripts/prepare_smollm2.py --gguf .cache/models | tail -n 1)"
  mkdir -p "$PREPARED/real"
  "$py" scripts/gguf_slice.py "$gguf" "$slice.gguf" "$REAL_BLOCKS" "$slice.config.json"
  build/bin/ingot compile "$slice.gguf" -o "$slice.ingot" --target cpu,cuda:sm_90
  rm "$slice.gguf"
}

# A Llama-3.2-1B-shaped directory whose safetensors data is a hole: the
# compiler reads only the header (scripts/gpu_check_big_model.py).
prepare_big() {
  local hf="$PREPARED/hf-big" big="$PREPARED/big"
  .venv/bin/python scripts/gpu_check_big_model.py "$hf"
  mkdir -p "$big/config"
  build/bin/ingot compile "$hf" -o "$big/llama1b.ingot" --weights=external \
    --target cpu,cuda:sm_80,cuda:sm_90,cuda:sm_100 --max-context 4096
  cp "$hf"/*.json "$big/config/"
  rm -rf "$hf"
}

have_gpu() {
  python3 - <<'EOF' 2>/dev/null
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    sys.exit(1)
n = ctypes.c_int(0)
sys.exit(0 if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0 else 1)
EOF
}

check() {
  local out="${OUT:-$PREPARED/out}" only="run llm bench peer"
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) out="$2"; shift 2 ;;
      --only) only="${2//,/ }"; shift 2 ;;
      *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
    esac
  done
  if ! have_gpu; then
    echo "gpu-check: no GPU here (no libcuda.so.1 or no device): nothing to check"
    exit 0
  fi
  [ -d "$PREPARED/models" ] || {
    echo "gpu-check: $PREPARED/models missing: run 'scripts/gpu-check.sh prepare'" \
         "on a machine with the compiler and carry $PREPARED" >&2; exit 1; }
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DINGOT_ENABLE_COMPILER=OFF -DINGOT_ENABLE_TESTS=OFF \
    -DINGOT_ENABLE_PYTHON=OFF -DINGOT_VENDORED_DEPS="$PWD/$PREPARED/deps" >/dev/null
  cmake --build build-gpu --target ingot -j "$(nproc)" | tail -1
  # Work files (inputs, outputs, logits) stay in $work; only the reports
  # go to $out, whose file count the device tool limits.
  local work=/tmp/gpu-check-work rc=0
  rm -rf "$work" && mkdir -p "$work" "$out"
  for part in $only; do
    case "$part" in
      run|llm|bench|big) python3 "scripts/gpu_check_$part.py" build-gpu/bin/ingot \
                       "$PREPARED" "$work" || rc=1 ;;
      peer) python3 scripts/gpu_check_peer.py "$PREPARED" "$work" || rc=1 ;;
      *) echo "gpu-check: --only takes run, llm, bench, peer, big" >&2; exit 2 ;;
    esac
  done
  cp "$work"/gpu-check*.json "$work"/gpu-check*.md "$out"/ 2>/dev/null || true
  return $rc
}

case "${1:-}" in
  prepare) prepare ;;
  *) check "$@" ;;
esac
