#!/usr/bin/env bash
# Fails if a C++ source is not formatted as .clang-format says.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
bad=()
for f in $files; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "check_format: not formatted (run clang-format -i): ${bad[*]}"
  exit 1
fi
echo "check_format: $(echo "$files" | wc -w) files formatted"
