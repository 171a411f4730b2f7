#!/bin/sh
# The main job: build and run rmsnorm-bench on the default ("auto") backend.
# Extra arguments go to the benchmark (try --help).
set -eu
cd "$(dirname "$0")/.."
tools/deps.sh bench
ninja build/rmsnorm-bench
exec build/rmsnorm-bench "$@"
