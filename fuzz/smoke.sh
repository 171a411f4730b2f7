#!/bin/sh
# fuzz/smoke.sh BINARY NAME SECONDS LOG: one bounded libFuzzer run of a harness
# over its checked-in corpus (FUZZ_SECONDS overrides SECONDS). New inputs go to
# build/fuzz/work/NAME, never into the checked-in corpus; a crash lands in
# build/fuzz/artifacts/. The last status line (runs, cov, ft) is kept in LOG.
set -u
bin=$1 name=$2 secs=${FUZZ_SECONDS:-$3} log=$4
dir=$(dirname "$bin")
mkdir -p "$dir/work/$name" "$dir/artifacts" "$(dirname "$log")"
# Two threads at most: the smoke run must not starve a small build machine.
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} \
"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=60 -rss_limit_mb=4096 \
    -artifact_prefix="$dir/artifacts/$name-" "$dir/work/$name" "fuzz/corpus/$name" \
    > "$log.tmp" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    tail -n 60 "$log.tmp"
    echo "fuzz-smoke: $name FAILED (exit $rc), full log $log.tmp" >&2
    exit 1
fi
grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)|stat::' "$log.tmp" | tail -n 12 > "$log"
grep -E "DONE" "$log" | tail -n 1
exit 0
