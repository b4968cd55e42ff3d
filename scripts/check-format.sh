#!/usr/bin/env bash
# Fails when a tracked C++ file is not laid out as .clang-format says (clang-format 14, Debian
# 12's: another version may lay out the same code differently), listing what would change.
# Installs clang-format-14 when missing. To fix what it lists:
#   git ls-files -z '*.hpp' '*.cpp' | xargs -0 clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format-14 >/dev/null || bash scripts/install-debian-deps.sh clang-format-14
git ls-files -z '*.hpp' '*.cpp' '*.h' '*.cc' | xargs -0 clang-format-14 --style=file --dry-run -Werror
echo "check-format: $(git ls-files '*.hpp' '*.cpp' '*.h' '*.cc' | wc -l) files as .clang-format says"
