#!/bin/sh
# Stages what a device run needs into build/devrun (git-ignored; name it in the
# run tool's carry list): the core library, the CUDA plugin, the test binaries
# (with gpu/cuda/test_math.cu's),
# rmsnorm-bench, and the two shared libraries the device image may lack
# (libcmocka for the tests, libgomp for the core's OpenMP).
set -eu
d=build/devrun
rm -rf "$d"
mkdir -p "$d/lib" "$d/tests"
cp -L build/librmsnorm.so.1 "$d/lib/"
ln -s librmsnorm.so.1 "$d/lib/librmsnorm.so"
cp build/librmsnorm_cuda.so "$d/lib/"
for l in libcmocka.so.0 libgomp.so.1; do
    p=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
    [ -n "$p" ] && cp -L "$p" "$d/lib/$l"
done
for t in build/tests/*; do
    [ -f "$t" ] && [ -x "$t" ] && cp "$t" "$d/tests/" && strip --strip-debug "$d/tests/$(basename "$t")"
done
# the quantiser's division against __fdiv_rn (ninja cuda-check), run with the suites
[ -x build/gpu/test_math ] && cp build/gpu/test_math "$d/tests/"
[ -x build/rmsnorm-bench ] && cp build/rmsnorm-bench "$d/" && strip --strip-debug "$d/rmsnorm-bench"
strip --strip-debug "$d/lib/librmsnorm.so.1"
# OLD_PLUGIN=path: a previous build of the plugin for old/new runs
# (gpu/device_session.sh stage ab), as build/devrun/old/librmsnorm_cuda.so
if [ -n "${OLD_PLUGIN:-}" ]; then
    mkdir -p "$d/old"
    cp "$OLD_PLUGIN" "$d/old/librmsnorm_cuda.so"
fi
du -sh "$d"
