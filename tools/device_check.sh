#!/bin/bash
# One device call that closes the loop on a GPU machine (docs/gpu.md,
# docs/fuzzing.md): a short benchmark of the fused ops first (alone on the GPU,
# so its numbers mean something), then, in parallel, the cmocka suites on the
# cuda backend, the Python binding's CUDA tests and the differential fuzzers
# (fuzz_forward and fuzz_backward once per seed: four by default) for FUZZ_SECONDS each.
# FUZZ_SEEDS="3 4" picks the seeds (default "1 2"; one process per harness and seed: the
# drivers' -gen mode is deterministic per seed, so a new seed is new inputs); a seed
# written SEED:SMS[:HBM] runs under RMSNORM_CUDA_SMS=SMS (and RMSNORM_CUDA_HBM_SM=HBM):
# "5:1" takes the ladder's rules for many rows an SM at the fuzzers' 64 rows at most,
# "6::37" an H200's rules on an H100 (docs/gpu.md, "Ladder overrides for tests");
# TESTS_AS="1 2:37" runs test_forward, test_backward and test_wide again under each
# SMS[:HBM] after the suites (their 257-row matrices are then up to 257 rows an SM);
# REPLAY="corpus files" replays those first; SKIP_BENCH=1 skips the benchmark; TESTS="test_a test_b" limits the suites.
# Needs build/devrun staged by gpu/stage_device.sh plus build/fuzz/*-replay.
# avx512 is hidden from the fuzzers here: this run is about cuda against ref
# (avx512 against ref is fuzzed by `ninja fuzz-smoke` on every CI run).
# Everything is logged under $OUT, the logs packed into $OUT/logs.tgz at the end;
# the exit status is 1 when any fuzzer, suite, binding test or replay failed.
set -u
OUT=${OUT:-/tmp/rmsnorm-out}
mkdir -p "$OUT"
D=$PWD/build/devrun
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
export RMSNORM_PLUGIN_PATH=$D/lib
secs=${FUZZ_SECONDS:-240}
t0=$(date +%s)
stamp() { echo "== $1 at +$(( $(date +%s) - t0 ))s"; }

stamp env
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

if [ "${SKIP_BENCH:-0}" = 1 ]; then
    echo "bench skipped (SKIP_BENCH=1)"
else
stamp bench
timeout 150 "$D/rmsnorm-bench" --backend cuda --op forward,fused-add,add-quant-block,backward --dtype bf16 \
    --shape 4096x8192,32768x8192 --graph --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
echo "bench rc=$?"; tail -25 "$OUT/bench.txt"
fi

stamp parallel
replay_rc=0
if [ -n "${REPLAY:-}" ]; then
    # earlier findings first, each alone, avx512 hidden as for the fuzzers
    for f in $REPLAY; do
        h=$(basename "$(dirname "$f")")
        RMSNORM_DISABLE_AVX512=1 "$D/fuzz/$h-replay" "$f" > "$OUT/replay-$(basename "$f").log" 2>&1
        r=$?; [ $r = 0 ] || replay_rc=1
        echo "replay $f rc=$r $(grep -E 'MISMATCH|replayed' "$OUT/replay-$(basename "$f").log" | tr '\n' ' ')"
    done
fi
pids=""
for h in fuzz_forward fuzz_backward; do
    for spec in ${FUZZ_SEEDS:-1 2}; do
        IFS=: read -r seed sms hbm <<< "$spec"
        tag=$seed${sms:+-sms$sms}${hbm:+-hbm$hbm}
        env ${sms:+RMSNORM_CUDA_SMS=$sms} ${hbm:+RMSNORM_CUDA_HBM_SM=$hbm} \
            RMSNORM_DISABLE_AVX512=1 RMSNORM_DEBUG=1 FUZZ_CRASH_FILE="$OUT/$h-$tag-crash" timeout $((secs + 60)) \
            "$D/fuzz/$h-replay" -gen="$secs" -seed="$seed" -max_len=8192 "fuzz/corpus/$h" \
            > "$OUT/$h-$tag.log" 2>&1 &
        pids="$pids $!"
    done
done
( for n in ${TESTS:-$(ls "$D"/tests)}; do
      t=$D/tests/$n
      RMST_BACKENDS=cuda timeout 200 "$t" > "$OUT/test_$n.log" 2>&1
      echo "test $n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/test_$n.log" | tr '\n' ' ')"
  done
  for spec in ${TESTS_AS:-}; do
      IFS=: read -r sms hbm <<< "$spec"
      for n in test_forward test_backward test_wide; do
          l=$OUT/test_$n-sms$sms${hbm:+-hbm$hbm}.log
          env ${sms:+RMSNORM_CUDA_SMS=$sms} ${hbm:+RMSNORM_CUDA_HBM_SM=$hbm} RMST_BACKENDS=cuda timeout 200 "$D/tests/$n" > "$l" 2>&1
          echo "test $n as $spec rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$l" | tr '\n' ' ')"
      done
  done > "$OUT/tests_summary.txt" ) &
tests_pid=$!
( RMSNORM_LIBRARY=$D/lib/librmsnorm.so.1 RMSNORM_CUDA_REPORT=$OUT/cuda_report.json \
      PYTHONPATH=bindings/python PYTHONUNBUFFERED=1 timeout 240 \
      python3 -m pytest -q -p no:cacheprovider bindings/python/tests/test_cuda.py > "$OUT/pytest_cuda.txt" 2>&1
  echo "pytest rc=$?" >> "$OUT/pytest_cuda.txt" ) &
py_pid=$!
wait $tests_pid; stamp tests; cat "$OUT/tests_summary.txt"
wait $py_pid; stamp pytest; tail -5 "$OUT/pytest_cuda.txt"
rc=0
for p in $pids; do wait "$p" || rc=1; done
stamp fuzz
for f in "$OUT"/fuzz_*.log; do
    echo "$(basename "$f"): $(grep -E 'backend .* present' "$f" | sed 's/.*backend \([a-z0-9]*\) present.*/\1/' | sort -u | tr '\n' ' ')| $(grep -oE 'ladder as .*' "$f" | head -1 | sed 's/$/ /')$(grep -E 'generated inputs|MISMATCH' "$f" | tail -2 | tr '\n' ' ')"
done
echo "fuzz rc=$rc"
# The script's status: 1 when a fuzzer, a suite, the binding's tests or a replay failed.
grep -qE ' rc=[1-9]' "$OUT/tests_summary.txt" && rc=1
grep -q '^pytest rc=0' "$OUT/pytest_cuda.txt" || rc=1
[ "$replay_rc" = 0 ] || rc=1
# The device tool brings back 8 files at most: every log also goes into one
# tarball (written beside $OUT, then moved in, so tar never reads a file it is
# writing), and the per-process logs then leave $OUT; crash inputs and the
# summaries stay as plain files.
if tar -czf "$OUT.logs.tgz" -C "$OUT" . 2>/dev/null && mv "$OUT.logs.tgz" "$OUT/logs.tgz"; then
    find "$OUT" -maxdepth 1 -type f \( -name 'fuzz_*.log' -o -name 'test_*.log' -o -name 'replay-*.log' \) -delete
fi
echo "device_check rc=$rc (logs in $OUT/logs.tgz)"
exit $rc
