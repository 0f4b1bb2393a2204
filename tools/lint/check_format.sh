#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format makes of it.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format not installed; skipped"
  exit 0
fi
if ! git ls-files '*.h' '*.cpp' | xargs clang-format --dry-run -Werror 2>/tmp/tandem-format.log; then
  grep -m 20 'error:' /tmp/tandem-format.log || true
  echo "check_format: run 'make format' to fix the files above"
  exit 1
fi
echo "check_format: all files formatted"
