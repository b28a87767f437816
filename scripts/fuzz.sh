#!/usr/bin/env bash
# scripts/fuzz.sh - runs the libFuzzer harnesses of build/fuzz (make fuzz-build) one at a time.
#   scripts/fuzz.sh ci             each harness over its seed corpus fuzz/corpus/<name> once (-runs=0): fails on any
#                                  crash, leak, UB report or uncaught exception; then the unit tests built with the
#                                  same sanitizers (tests/unit_tests.cmake), but the slow one (make test runs this)
#   scripts/fuzz.sh run SECONDS    each harness for SECONDS (one process, in turn), new inputs kept in
#                                  build/fuzz/corpus/<name>, crashes in build/fuzz/findings/<name>; prints a table
#   scripts/fuzz.sh run SECONDS NAME...   only these harnesses
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/fuzz.sh ci | run SECONDS [NAME...]}
shift
seconds=0
if [ "$mode" = run ]; then seconds=${1:?run needs SECONDS}; shift; fi
bin=build/fuzz/fuzz
names=("$@")
[ ${#names[@]} -gt 0 ] || names=($(ls fuzz/corpus))
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Limits that make a slow input or a large allocation a finding: 10 s per input, 2 GB of memory.
limits=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048)

status=0
if [ "$mode" = ci ]; then
  for name in "${names[@]}"; do
    log=build/fuzz/logs/$name.ci.log
    mkdir -p build/fuzz/logs
    if "$bin/fuzz_$name" "${limits[@]}" -runs=0 "fuzz/corpus/$name" >"$log" 2>&1; then
      echo "fuzz-ci: $name: $(ls "fuzz/corpus/$name" | wc -l) corpus inputs, no finding"
    else
      echo "fuzz-ci: $name FAILED (log: $log)"; tail -30 "$log"; status=1
    fi
  done
  if [ $# -eq 0 ]; then
    slow=$(sed -n 's/^set(LLMCO2_SLOW_UNIT_TESTS "\(.*\)")$/\1/p' tests/unit_tests.cmake)
    mkdir -p build/fuzz/tmp
    start=$(date +%s)
    # Two shards side by side, one per core (ctest runs these tests as parallel processes too: they share nothing
    # but TEST_TMPDIR, where each names its own files).
    pids=()
    for shard in 0 1; do
      TEST_TMPDIR=$PWD/build/fuzz/tmp GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard \
        "$bin/llmco2_unit_tests_sanitized" --gtest_filter="-$slow" >"build/fuzz/logs/unit_tests.ci.$shard.log" 2>&1 &
      pids+=($!)
    done
    failed=()
    for shard in 0 1; do wait "${pids[$shard]}" || failed+=("$shard"); done
    if [ ${#failed[@]} -eq 0 ]; then
      ran=$(grep -ho '^\[==========\] [0-9]* tests\? from' build/fuzz/logs/unit_tests.ci.[01].log |
        awk '{s += $2} END {print s}')
      echo "fuzz-ci: unit tests under ASan and UBSan: $ran tests in 2 shards, passed in $(( $(date +%s) - start )) s"
    else
      for shard in "${failed[@]}"; do
        log=build/fuzz/logs/unit_tests.ci.$shard.log
        echo "fuzz-ci: unit tests under ASan and UBSan FAILED (log: $log)"
        grep -B2 -A20 'FAILED\|ERROR: \|runtime error' "$log" | head -60
      done
      status=1
    fi
  fi
  exit $status
fi

printf '| harness | seconds | executions | exec/s | corpus (seed + new) | findings |\n|---|---|---|---|---|---|\n'
for name in "${names[@]}"; do
  corpus=build/fuzz/corpus/$name findings=build/fuzz/findings/$name log=build/fuzz/logs/$name.log
  mkdir -p "$corpus" "$findings" build/fuzz/logs
  start=$(date +%s)
  touch "$findings/.start"
  "$bin/fuzz_$name" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "fuzz/corpus/$name" >"$log" 2>&1 || status=1
  elapsed=$(( $(date +%s) - start ))
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  found=$(find "$findings" -type f -newer "$findings/.start" ! -name .start | wc -l)  # this run's findings only
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$elapsed" "$runs" "$rate" \
    "$(ls "fuzz/corpus/$name" | wc -l) + $(ls "$corpus" | wc -l)" "$found"
done
exit $status
