#!/bin/sh
# bench/trace_long_log.sh - the whole `llmco2 trace` process on a long log: requests per second and peak memory.
# Builds the log with bench/make_long_log.py (both Azure traces repeated, an hour apart) unless it exists, then runs
# trace under /usr/bin/time -v for each thread count, without and with the per-request CSV.
# usage: bench/trace_long_log.sh [ROWS=10000000] [THREADS="1 2"] [LOG=/tmp/llmco2-azure-ROWS.csv]
set -eu
ROWS=${1:-10000000}
THREADS=${2:-"1 2"}
LOG=${3:-/tmp/llmco2-azure-$ROWS.csv}
BIN=${BIN:-build/release/src/cli/llmco2}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
[ -f "$LOG" ] || python3 bench/make_long_log.py "$ROWS" "$LOG"
echo "log: $LOG ($ROWS rows, $(du -m "$LOG" | cut -f1) MB); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for threads in $THREADS; do
  for csv in no yes; do
    extra=""
    [ "$csv" = yes ] && extra="--by-request $OUT/requests.csv"
    /usr/bin/time -v "$BIN" trace "$LOG" --model llama-3.1-8b --gpu h100-sxm --region USA --quiet \
      --threads "$threads" --out "$OUT/report" $extra >"$OUT/stdout" 2>"$OUT/time"
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$OUT/time")
    user=$(sed -n 's/.*User time (seconds): //p' "$OUT/time")
    sys=$(sed -n 's/.*System time (seconds): //p' "$OUT/time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$OUT/time")
    secs=$(echo "$wall" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    echo "threads $threads, per-request CSV $csv: wall $wall s, user $user s, sys $sys s, peak RSS $((rss / 1024)) MB," \
         "$(awk -v n="$ROWS" -v s="$secs" 'BEGIN { printf "%.2f M requests/s (wall)", n / s / 1e6 }')"
  done
done
head -3 "$OUT/stdout"
