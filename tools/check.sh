#!/bin/sh
# Everything a change must pass: build, every test, lint, sanitizers, the ABI
# check, a bounded fuzz run, the CUDA plugin compile and SASS gate (where nvcc
# exists), the HIP compile + ISA gate, and the Python binding tests. .ci/run
# calls this.
# FUZZ_SECONDS (default 60) bounds each fuzzer in fuzz-smoke.
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh check
PATH="$PATH:/usr/local/cuda/bin"
export PATH

steps=0
step() {
  echo "== $*"
  "$@"
  steps=$((steps + 1))
}

step ninja
step ninja test
# cmocka's own counts, summed over the suites the run above executed
cat build/tests/*.log build/bench/*.log 2>/dev/null | awk '
  /\[  PASSED  \] [0-9]+ test/ { p += $4 }
  /\[  FAILED  \] [0-9]+ test/ { f += $4 }
  /\[  SKIPPED \] [0-9]+ test/ { s += $4 }
  END { printf "cmocka: %d passed, %d failed, %d skipped\n", p, f, s }'
# the main job itself, on the default grid: every cell must validate against
# the reference (exit 1 otherwise); its timings on a CI machine mean nothing
step build/rmsnorm-bench --csv build/bench-smoke.csv
# and its hot-cache mode (issue 4's small-row latency), validated the same way
step build/rmsnorm-bench --hot --op forward,backward,fused-add --dtype bf16,f32 --shape 1x4096,32x4096 \
  --probe-mib 64 --tries 1
step ninja lint
step ninja asan
step ninja abi-check
step ninja fuzz-smoke
if command -v nvcc >/dev/null 2>&1; then
  # cuda-check = the plugin plus the SASS gate; its tools come from PyPI where
  # the toolkit lacks them (without them the gate would only say SKIP)
  if d=$(tools/cudatools.sh); then
    PATH="$PATH:$d"
    export PATH
  else
    echo "== cuobjdump/nvdisasm unavailable: the SASS gate will skip"
  fi
  step ninja cuda-check
else
  echo "== SKIP ninja cuda: no nvcc on this machine"
fi
step ninja hip-check
step ninja pytest
echo "check: $steps passed, 0 failed"
