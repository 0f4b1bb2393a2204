#!/usr/bin/env bash
# Every public header must compile on its own (it includes what it uses).
set -euo pipefail
cd "$(dirname "$0")/../.."
status=0
for h in $(git ls-files 'include/*.h'); do
  if ! echo "#include \"${h#include/}\"" |
      g++ -std=c++20 -fsyntax-only -Iinclude -x c++ - 2>/tmp/tandem-header.log; then
    echo "error: $h does not compile on its own:"
    head -5 /tmp/tandem-header.log
    status=1
  fi
done
((status == 0)) && echo "check_headers_standalone: all public headers compile alone"
exit $status
