#!/usr/bin/env bash
# Checks that the C++ lines changed since BASE follow .clang-format (LLVM
# style). Only changed lines: the older code is reformatted when it is next
# edited, not in one commit that would bury `git blame`.
#   scripts/check-format.sh [BASE]   BASE defaults to HEAD~1 (CI checks the
#                                    commit it was handed); --fix rewrites.
set -euo pipefail
cd "$(dirname "$0")/.."
FIX=0
if [ "${1:-}" = "--fix" ]; then FIX=1; shift; fi
BASE="${1:-HEAD~1}"
TOOL="$(command -v git-clang-format-22 || true)"
FORMAT="$(command -v clang-format-22 || true)"
if [ -z "$TOOL" ] || [ -z "$FORMAT" ]; then
  echo "check-format: clang-format-22 not found (scripts/deps.sh installs it)" >&2
  exit 1
fi
if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null; then
  echo "check-format: no commit '$BASE' to compare with; nothing checked"
  exit 0
fi
EXT=c,cc,cpp,h,hpp,inc
if [ "$FIX" = 1 ]; then
  "$TOOL" --binary "$FORMAT" --extensions "$EXT" "$BASE"
  exit 0
fi
out="$("$TOOL" --binary "$FORMAT" --extensions "$EXT" --diff "$BASE" || true)"
case "$out" in
  ""|*"no modified files to format"*|*"did not modify any files"*)
    echo "check-format: lines changed since $BASE are formatted"; exit 0 ;;
esac
printf '%s\n' "$out"
echo "check-format: the lines above, changed since $BASE, are not formatted;" \
  "run scripts/check-format.sh --fix $BASE" >&2
exit 1
