#!/usr/bin/env bash
# Fails when a source file passes 800 lines without a reason recorded in
# tools/lint/file_size_allowlist.txt; prints the largest files either way.
set -euo pipefail
cd "$(dirname "$0")/../.."
limit=800
allow=tools/lint/file_size_allowlist.txt
status=0
echo "largest source files:"
# sed reads all of sort's output; head would stop early and leave sort to
# die of SIGPIPE, which pipefail turns into a lint failure now and then.
git ls-files '*.h' '*.cpp' '*.cu' | xargs wc -l | grep -v ' total$' | sort -rn | sed -n '1,10p'
while read -r n f; do
  if ((n > limit)) && ! grep -q "^$f " "$allow" 2>/dev/null; then
    echo "error: $f has $n lines (limit $limit); split it by purpose or add it to $allow with a reason"
    status=1
  fi
done < <(git ls-files '*.h' '*.cpp' '*.cu' | xargs wc -l | grep -v ' total$')
exit $status
