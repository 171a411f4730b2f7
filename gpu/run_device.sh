#!/bin/bash
# One device call (docs/gpu.md): tests, compute-sanitizer, rmsnorm-bench and
# bench/peers.py on the H200, everything logged under $OUT. Stages are
# selected by the first argument (comma list; default all):
#   env, pycheck, tests, sanitize, bench, search, pysearch, peers
# Needs build/devrun (gpu/stage_device.sh) carried; .whl (Liger) and .peers/libfi_norm.so
# (FlashInfer, bench/peers_shim/build.sh) optional, picked up by the peers stage.
set -u
OUT=${OUT:-/tmp/rmsnorm-out}
mkdir -p "$OUT"
D=$PWD/build/devrun
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
export RMSNORM_PLUGIN_PATH=$D/lib
export RMSNORM_DEBUG=1
STAGES=${1:-env,pycheck,tests,sanitize,bench,search,pysearch,peers}
has() { case ",$STAGES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
t0=$(date +%s)
stamp() { echo "== $1 at +$(( $(date +%s) - t0 ))s"; }

if has env; then
    stamp env
    { date -u; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
      uname -a; python3 -c 'import torch; print("torch", torch.__version__)'; } > "$OUT/env.txt" 2>&1
    head -20 "$OUT/env.txt"
fi
if has pycheck; then
    stamp pycheck
    PYTHONUNBUFFERED=1 timeout ${CHECK_TIMEOUT:-120} python3 bench/gpu_check.py --lib "$D/lib/librmsnorm.so" \
        > "$OUT/pycheck.txt" 2>&1
    echo "pycheck rc=$?"; grep -E "FAIL|ALL OK|Error|error" "$OUT/pycheck.txt" | head -30
fi
if has tests; then
    stamp tests
    for t in "$D"/tests/*; do
        n=$(basename "$t")
        RMST_BACKENDS=cuda timeout ${TEST_TIMEOUT:-240} "$t" > "$OUT/test_$n.log" 2>&1
        echo "test $n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/test_$n.log" | tr '\n' ' ')"
        grep -E '^\[  FAILED|\[  ERROR|FAIL' "$OUT/test_$n.log" | head -5
    done
    cat "$OUT"/test_*.log > "$OUT/tests.log"
fi
if has sanitize; then
    stamp sanitize
    for tool in memcheck racecheck; do
        for n in ${SAN_TESTS:-test_forward test_backward}; do
            [ -x "$D/tests/$n" ] || continue
            RMST_BACKENDS=cuda timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool --error-exitcode 7 \
                "$D/tests/$n" > "$OUT/san_${tool}_$n.log" 2>&1
            echo "sanitizer $tool $n rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_${tool}_$n.log" | tail -1)"
        done
    done
fi
if has bench && [ -x "$D/rmsnorm-bench" ]; then
    stamp bench
    timeout ${BENCH_TIMEOUT:-300} "$D/rmsnorm-bench" --backend cuda ${BENCH_ARGS:---op forward,backward,fused-add,add-quant-block --dtype bf16 --grid full} \
        --graph --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
    echo "bench rc=$?"; tail -60 "$OUT/bench.txt"
fi
if has search && [ -x "$D/rmsnorm-bench" ]; then
    stamp search
    timeout 240 "$D/rmsnorm-bench" --backend cuda --op forward,backward --dtype bf16 --config-search --graph \
        --shape 32x4096,4096x4096,32768x8192,65536x2048,16384x5120 --json "$OUT/search.json" > "$OUT/search.txt" 2>&1
    echo "search rc=$?"; tail -40 "$OUT/search.txt"
fi
if has pysearch; then
    stamp pysearch
    PYTHONUNBUFFERED=1 timeout ${SEARCH_TIMEOUT:-200} python3 bench/gpu_search.py --lib "$D/lib/librmsnorm.so" \
        --plugin "$D/lib/librmsnorm_cuda.so" ${SEARCH_ARGS:-} --json "$OUT/pysearch.json" > "$OUT/pysearch.txt" 2>&1
    echo "pysearch rc=$?"; cat "$OUT/pysearch.txt" | tail -30
fi
if has peers; then
    stamp peers
    if ls .whl/*.whl > /dev/null 2>&1; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
            && export PYTHONPATH=/tmp/site
    fi
    PYTHONUNBUFFERED=1 RMSNORM_LIB=$D/lib/librmsnorm.so timeout ${PEERS_TIMEOUT:-400} python3 bench/peers.py \
        --lib "$D/lib/librmsnorm.so" --json "$OUT/peers.json" ${PEERS_ARGS:-} > "$OUT/peers.txt" 2>&1
    echo "peers rc=$?"; cat "$OUT/peers.txt" | tail -80
fi
stamp done
# at most 8 files come back: keep the summaries, pack the logs
( cd "$OUT" && tar czf logs.tgz --exclude=logs.tgz *.log *.txt *.json 2>/dev/null && \
  find . -maxdepth 1 -type f ! -name logs.tgz ! -name 'call*.log' ! -name '*.json' -delete )
