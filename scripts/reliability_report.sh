#!/usr/bin/env bash
# scripts/reliability_report.sh - reruns the fuzzing campaign and rewrites its table in docs/reliability.md.
#   scripts/reliability_report.sh [SECONDS]   each harness for SECONDS (default 60), one at a time (make fuzz-build
#                                              first); the table between the fuzz-table markers is replaced
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
doc=docs/reliability.md
table=$(mktemp)
trap 'rm -f "$table"' EXIT
status=0
bash scripts/fuzz.sh run "$seconds" >"$table" || status=$?
{
  echo "<!-- fuzz-table:begin (scripts/reliability_report.sh $seconds, $(date -u +%Y-%m-%d), $(nproc) cores, $(clang++ --version | head -1)) -->"
  cat "$table"
  echo "<!-- fuzz-table:end -->"
} >"$table.block"
awk -v block="$table.block" '
  /<!-- fuzz-table:begin/ { while ((getline line < block) > 0) print line; skip = 1; next }
  /<!-- fuzz-table:end -->/ { skip = 0; next }
  !skip { print }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
rm -f "$table.block"
cat "$table"
[ "$status" -eq 0 ] || echo "reliability_report: a harness reported a finding (see build/fuzz/findings/)" >&2
exit "$status"
