#!/usr/bin/env bash
# Installs what building and testing ingot needs, idempotently and quietly:
# Debian packages (only those missing) and a Python venv for test tooling.
set -euo pipefail
cd "$(dirname "$0")/.."

LLVM_VERSION="$(sed -n 's/^set(INGOT_LLVM_VERSION \([0-9]*\).*/\1/p' CMakeLists.txt)"
APT_PACKAGES=(
  build-essential cmake ninja-build ccache git pkg-config
  "llvm-${LLVM_VERSION}-dev" "libmlir-${LLVM_VERSION}-dev"
  "mlir-${LLVM_VERSION}-tools" "llvm-${LLVM_VERSION}-tools"
  libonnx-dev libprotobuf-dev protobuf-compiler libgtest-dev
  libcpp-httplib-dev nlohmann-json3-dev libcli11-dev libxxhash-dev
  flatbuffers-compiler libflatbuffers-dev clang-format-22 clang-tidy-22
  python3 python3-venv
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

VENV=.venv
REQ=scripts/requirements-test.txt
STAMP="$VENV/.requirements.stamp"
if [ ! -x "$VENV/bin/python" ]; then
  echo "deps: creating Python venv in $VENV"
  python3 -m venv "$VENV"
fi
if ! cmp -s "$REQ" "$STAMP"; then
  echo "deps: installing Python test tooling ($REQ)"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQ"
  cp "$REQ" "$STAMP"
fi
