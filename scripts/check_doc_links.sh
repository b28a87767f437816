#!/usr/bin/env bash
# scripts/check_doc_links.sh - fails if README.md or docs/*.md name a repo path (docs/, data/, src/, tests/, scripts/)
# that does not exist. Run by ctest as `docs_links`.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
for doc in README.md docs/*.md data/*/README.md; do
  dir=$(dirname "$doc")
  # markdown links (relative to the doc) and backquoted repo paths (relative to the root)
  while read -r target; do
    target=${target%%#*}
    [ -z "$target" ] && continue
    case "$target" in http*|../shared*) continue ;; esac
    [ -e "$dir/$target" ] || { echo "$doc: link to missing file $target"; missing=1; }
  done < <(grep -oE '\]\([^)]+\)' "$doc" | sed -E 's/^\]\((.*)\)$/\1/')
  while read -r path; do
    [ -e "$path" ] || { echo "$doc: names missing path $path"; missing=1; }
  done < <(grep -oE '`(docs|data|src|tests|scripts|bench)/[A-Za-z0-9_./-]+`' "$doc" | tr -d '`' | grep -v '\*' || true)
done
[ "$missing" -eq 0 ] && echo "docs_links: every path named in the docs exists"
exit "$missing"
