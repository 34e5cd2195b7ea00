#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) on the .cpp files changed since
# BASE (default HEAD~1), with the compile commands of BUILD (default build/).
# A whole-tree run takes long on 2 cores; a commit's files take a minute.
#   scripts/check-tidy.sh [BASE] [BUILD]     scripts/check-tidy.sh --all
set -euo pipefail
cd "$(dirname "$0")/.."
BASE="${1:-HEAD~1}"
BUILD="${2:-build}"
TIDY="$(command -v clang-tidy-22 || true)"
if [ -z "$TIDY" ]; then
  echo "check-tidy: clang-tidy-22 not found (scripts/deps.sh installs it)" >&2
  exit 1
fi
if [ ! -f "$BUILD/compile_commands.json" ]; then
  echo "check-tidy: $BUILD/compile_commands.json missing: build first" >&2
  exit 1
fi
if [ "$BASE" = "--all" ]; then
  mapfile -t files < <(git ls-files '*.cpp')
elif git rev-parse -q --verify "$BASE^{commit}" >/dev/null; then
  mapfile -t files < <(git diff --name-only --diff-filter=AMR "$BASE" -- '*.cpp')
else
  echo "check-tidy: no commit '$BASE' to compare with; nothing checked"
  exit 0
fi
# Only files the build compiles (not fuzz targets of another build, etc.).
checked=()
for f in "${files[@]}"; do
  grep -q "\"file\": \"$PWD/$f\"" "$BUILD/compile_commands.json" && checked+=("$f")
done
if ((${#checked[@]} == 0)); then
  echo "check-tidy: no compiled .cpp changed since $BASE"
  exit 0
fi
echo "check-tidy: ${#checked[@]} file(s)"
"$TIDY" -p "$BUILD" --quiet "${checked[@]}"
