#!/bin/sh
# fuzz/run_gpu.sh [SECONDS_PER_HARNESS]: the differential fuzzers on a GPU
# machine, against every backend present there (cuda included once its plugin
# is built). Writes logs and a summary to $OUT (default build/fuzz/gpu-out).
#
#   - builds the library and the CUDA plugin (ninja lib cuda), then
#   - with clang available: the libFuzzer harnesses (ninja fuzz) run for
#     SECONDS each over the checked-in corpus (coverage-guided);
#   - without clang: the gcc replay drivers replay the corpus, then generate
#     and mutate inputs for SECONDS each (-gen=SECONDS).
# The plugin is found through RMSNORM_PLUGIN_PATH. ASan needs
# protect_shadow_gap=0 to coexist with the CUDA driver's mappings.
# Default: 300 s each for fuzz_forward and fuzz_backward (10 minutes in all,
# issue 7), plus 30 s each for fuzz_abi and fuzz_fp8. FUZZ_HARNESSES picks a
# subset, so the run fits a per-command time limit in several calls, e.g.
#   FUZZ_HARNESSES=fuzz_forward fuzz/run_gpu.sh 420     (builds, then 7 min)
#   FUZZ_HARNESSES="fuzz_backward fuzz_abi" fuzz/run_gpu.sh 420
# The clang build of the instrumented simd kernels alone takes minutes.
set -u
cd "$(dirname "$0")/.." || exit 1
secs=${1:-300}
out=${OUT:-build/fuzz/gpu-out}
mkdir -p "$out"
summary="$out/summary.txt"
{
    echo "harnesses: ${FUZZ_HARNESSES:-all}, $secs s each (fuzz_abi, fuzz_fp8: 30 s)"
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -n)"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
} > "$summary"

ninja lib > "$out/build.log" 2>&1 || { echo "ninja lib failed" >> "$summary"; tail -40 "$out/build.log"; exit 1; }
ninja cuda >> "$out/build.log" 2>&1 || echo "ninja cuda failed: no cuda backend (see build.log)" >> "$summary"
plugin=build/librmsnorm_cuda.so # not build/tests/abi/*: those are the ABI tests' fake plugins
if [ -f "$plugin" ]; then
    RMSNORM_PLUGIN_PATH="$(cd "$(dirname "$plugin")" && pwd)"
    export RMSNORM_PLUGIN_PATH
    echo "plugin: $plugin" >> "$summary"
fi
export ASAN_OPTIONS="protect_shadow_gap=0:detect_leaks=0:${ASAN_OPTIONS:-}"
export RMSNORM_DEBUG=1

mode=replay
if command -v clang > /dev/null 2>&1 && ninja fuzz >> "$out/build.log" 2>&1; then
    mode=libfuzzer
else
    ninja build/fuzz/fuzz_forward-replay build/fuzz/fuzz_backward-replay \
        build/fuzz/fuzz_abi-replay build/fuzz/fuzz_fp8-replay >> "$out/build.log" 2>&1 ||
        { echo "replay build failed" >> "$summary"; tail -40 "$out/build.log"; exit 1; }
fi
echo "mode: $mode" >> "$summary"

rc=0
for h in ${FUZZ_HARNESSES:-fuzz_forward fuzz_backward fuzz_abi fuzz_fp8}; do
    t=$secs
    case $h in fuzz_abi|fuzz_fp8) t=30 ;; esac
    log="$out/$h.log"
    if [ $mode = libfuzzer ]; then
        mkdir -p "$out/work-$h"
        "build/fuzz/$h" -max_total_time="$t" -print_final_stats=1 -timeout=120 -rss_limit_mb=8192 \
            -artifact_prefix="$out/$h-" "$out/work-$h" "fuzz/corpus/$h" > "$log" 2>&1
        st=$?
        line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    else
        FUZZ_CRASH_FILE="$out/$h-crash-input" "build/fuzz/$h-replay" -gen="$t" -max_len=8192 \
            "fuzz/corpus/$h" > "$log" 2>&1
        st=$?
        line=$(grep -E 'generated inputs' "$log" | tail -n 1)
    fi
    backends=$(grep -E 'backend .* present' "$log" | sort -u | sed 's/.*backend \([a-z0-9]*\) present.*/\1/' | tr '\n' ' ')
    echo "$h: exit $st, backends [$backends] $line" >> "$summary"
    [ $st -eq 0 ] || { rc=1; grep -A3 'FUZZ MISMATCH\|ERROR: AddressSanitizer\|runtime error' "$log" | head -20 >> "$summary"; }
done
cat "$summary"
exit $rc
