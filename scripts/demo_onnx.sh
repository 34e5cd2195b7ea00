#!/usr/bin/env bash
# `make demo-onnx`: compile the fixture transformer block (test/fixtures/) with
# ingot, run it on random inputs, compare with onnxruntime, and print a short
# report. Work files go to .cache/demo. Exits non-zero if anything fails or
# the outputs disagree with onnxruntime.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD="${BUILD:-build}"
PYTHON=.venv/bin/python
INGOT="$BUILD/bin/ingot"

[ -x "$PYTHON" ] || { echo "demo: $PYTHON missing; run 'make deps'" >&2; exit 1; }
[ -x "$INGOT" ] || { echo "demo: $INGOT missing; run 'make build'" >&2; exit 1; }

exec "$PYTHON" scripts/demo_compare.py --ingot "$INGOT" --workdir .cache/demo "$@"
