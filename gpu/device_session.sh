#!/bin/bash
# The device calls of session 2 (docs/perf/h200.md): one command line per call,
#   STAGES=env,bench,qsearch,peers,tests,san RACE_TESTS="test_hand test_regress" bash gpu/device_session.sh
# stages: env, search (bench/gpu_search.py, SEARCH_ARGS), bench (rmsnorm-bench
# --graph, BENCH_ARGS), qsearch (rmsnorm-bench --config-search of the fused
# ops at 4096x8192), peers (bench/peers.py, PEERS_ARGS, .whl carried; Quack
# from .quack-site, bench/peers_shim/quack.sh), tests
# (every cmocka binary on cuda + bench/gpu_check.py), ab (rmsnorm-bench
# AB_ARGS alternated between the old and the new plugin, AB_ORDER,
# bench/ab_table.py), san (memcheck on
# SAN_TESTS, racecheck on RACE_TESTS), pin (PIN_TESTS on cuda under each
# ';'-separated RMSNORM_CUDA_CONFIG of PIN_CONFIGS, RMST_PIN_SWEEP=1, plus
# memcheck of test_hand under each), ncu (bench/ncu_probe.py under Nsight
# Compute, NCU_ARGS; torch.compile's generated code in ncu_err.txt). Needs build/devrun (gpu/stage_device.sh)
# carried; everything is logged under $OUT. NEED_GPU=H200 (a substring of
# nvidia-smi's name) runs nothing on another card: the device tool may lend
# an H100 for an H200 call (session 45), and numbers meant for the H200's
# targets would then only cost device time.
set -u
if [ -n "${NEED_GPU:-}" ]; then
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  case "$name" in
    *"$NEED_GPU"*) ;;
    *) echo "device_session: '$name' is not a $NEED_GPU: nothing run"; exit 0 ;;
  esac
fi
D=$PWD/build/devrun
export LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
export RMSNORM_PLUGIN_PATH=$D/lib
t0=$(date +%s)
stamp() { echo "== $1 at +$(( $(date +%s) - t0 ))s"; }
STAGES=${STAGES:-env,search,bench,tests,san}
has() { case ",$STAGES," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
if has env; then { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > $OUT/env.txt 2>&1; cat $OUT/env.txt; fi
if has search; then
  stamp search
  PYTHONUNBUFFERED=1 timeout ${SEARCH_TIMEOUT:-200} python3 bench/gpu_search.py --lib $D/lib/librmsnorm.so \
    --plugin $D/lib/librmsnorm_cuda.so ${SEARCH_ARGS:-} --json $OUT/search.json > $OUT/search.txt 2>&1
  echo "search rc=$?"; cat $OUT/search.txt
fi
if has bench; then
  stamp bench
  timeout ${BENCH_TIMEOUT:-200} $D/rmsnorm-bench --backend cuda ${BENCH_ARGS:---op forward,fused-add,add-quant-block,backward --dtype bf16 --shape 1x8192,32x4096,4096x4096,16384x5120,32768x8192,65536x2048} \
    --graph --json $OUT/bench.json > $OUT/bench.txt 2>&1
  echo "bench rc=$?"; grep -vE "^#" $OUT/bench.txt | tail -40
fi
if has qsearch; then
  stamp qsearch
  timeout 150 $D/rmsnorm-bench --backend cuda --op add-quant-block,fused-add --dtype bf16 --shape 4096x8192 --config-search --graph --json $OUT/qsearch.json > $OUT/qsearch.txt 2>&1
  echo "qsearch rc=$?"; grep -vE "^#" $OUT/qsearch.txt | tail -8
  python3 -c "
import json
for c in json.load(open('$OUT/qsearch.json')).get('cells',[]):
    print(c.get('op'), c.get('rows'), c.get('cols'), c.get('median_us'), 'heur', c.get('cfg_heur'), 'best', c.get('cfg_best'), c.get('cfg_ratio'))
" 2>&1 | tail -4
fi
if has peers; then
  stamp peers
  if ls .whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  fi
  # Quack, when bench/peers_shim/quack.sh unpack2 has run
  [ -f .quack-site/env.sh ] && . ./.quack-site/env.sh
  PYTHONUNBUFFERED=1 timeout ${PEERS_TIMEOUT:-300} python3 bench/peers.py --lib $D/lib/librmsnorm.so --json $OUT/peers.json ${PEERS_ARGS:---quick} > $OUT/peers.txt 2>&1
  echo "peers rc=$?"; tail -60 $OUT/peers.txt
fi
if has tests; then
  stamp tests
  ( RMSNORM_DEBUG=0 PYTHONUNBUFFERED=1 timeout 150 python3 bench/gpu_check.py --lib $D/lib/librmsnorm.so > $OUT/pycheck.txt 2>&1; echo "pycheck rc=$?" >> $OUT/pycheck.txt ) &
  ls $D/tests | xargs -P 4 -I{} sh -c "RMST_BACKENDS=cuda timeout ${TEST_TIMEOUT:-240} $D/tests/{} > $OUT/test_{}.log 2>&1; echo \"test {} rc=\$? \$(grep -E '^\[  (PASSED|FAILED)' $OUT/test_{}.log | tr '\n' ' ')\""
  grep -hE '^\[  FAILED|\[  ERROR|FAILED CASE' $OUT/test_*.log | head -20
  wait; stamp pycheck; grep -E "FAIL|ALL OK|rc=" $OUT/pycheck.txt | head -20
fi
if has pin; then
  stamp pin
  IFS=';'; for cfg in ${PIN_CONFIGS:-path=tma}; do
    unset IFS
    tag=$(echo "$cfg" | tr -c 'a-z0-9\n' '_')
    for n in ${PIN_TESTS:-test_forward test_hand test_regress}; do
      RMSNORM_CUDA_CONFIG=$cfg RMST_PIN_SWEEP=1 RMST_BACKENDS=cuda timeout ${TEST_TIMEOUT:-240} $D/tests/$n > $OUT/pin_${tag}_$n.log 2>&1
      echo "pin [$cfg] $n rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $OUT/pin_${tag}_$n.log | tr '\n' ' ')"
    done
    RMSNORM_CUDA_CONFIG=$cfg RMST_PIN_SWEEP=1 RMST_BACKENDS=cuda timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool memcheck --error-exitcode 7 $D/tests/test_hand > $OUT/pin_${tag}_memcheck.log 2>&1
    echo "pin [$cfg] memcheck test_hand rc=$? $(grep -E 'ERROR SUMMARY' $OUT/pin_${tag}_memcheck.log | tail -1)"
    IFS=';'
  done
  unset IFS
  grep -hE '^\[  FAILED|\[  ERROR|FAILED CASE' $OUT/pin_*.log | head -20
fi
if has ncu; then
  stamp ncu
  TORCH_LOGS=output_code timeout ${NCU_TIMEOUT:-200} ncu --clock-control none -k regex:${NCU_KERNELS:-'rmsi_|triton'} \
    ${NCU_SECTIONS:---section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis} python3 bench/ncu_probe.py --lib $D/lib/librmsnorm.so ${NCU_ARGS:-} \
    > $OUT/ncu.txt 2> $OUT/ncu_err.txt
  echo "ncu rc=$?"; grep -E "rmsi_|triton_|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Block Limit" $OUT/ncu.txt | head -120
fi
if has ab; then
  # old against new: rmsnorm-bench AB_ARGS under each plugin in AB_ORDER
  # (build/devrun/old from OLD_PLUGIN=... gpu/stage_device.sh, build/devrun/lib),
  # one timeout a run; each finished cell is on stderr, so a run cut short
  # keeps its cells in ab_K_TAG.txt; bench/ab_table.py sets them side by side
  stamp ab
  i=0; abl=""
  for tag in ${AB_ORDER:-old new new old}; do
    i=$((i + 1)); P=$D/lib; [ "$tag" = old ] && P=$D/old
    RMSNORM_PLUGIN_PATH=$P timeout ${AB_TIMEOUT:-150} $D/rmsnorm-bench --backend cuda \
      ${AB_ARGS:---op forward,fused-add --dtype bf16 --shape 4096x4096,32768x8192} --graph --force --tries 1 \
      --json $OUT/ab_${i}_$tag.json > $OUT/ab_${i}_$tag.txt 2>&1
    echo "ab $i $tag rc=$?"; abl="$abl $tag=$OUT/ab_${i}_$tag.json"
  done
  python3 bench/ab_table.py $abl | tee $OUT/ab_table.txt
fi
if has san; then
  stamp san
  for n in ${SAN_TESTS:-test_hand test_regress}; do
    RMST_BACKENDS=cuda timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool memcheck --error-exitcode 7 $D/tests/$n > $OUT/san_memcheck_$n.log 2>&1
    echo "memcheck $n rc=$? $(grep -E 'ERROR SUMMARY' $OUT/san_memcheck_$n.log | tail -1)"
  done
  for n in ${RACE_TESTS:-}; do
    RMST_BACKENDS=cuda timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool racecheck --error-exitcode 7 $D/tests/$n > $OUT/san_racecheck_$n.log 2>&1
    echo "racecheck $n rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/san_racecheck_$n.log | tail -1)"
  done
fi
stamp done
cd $OUT && tar czf logs.tgz --exclude=logs.tgz *.log *.txt 2>/dev/null; find . -maxdepth 1 -type f \( -name 'test_*.log' -o -name 'san_*' -o -name 'pin_*' \) -delete; ls
