#!/bin/sh
# Builds the peers' shims into .peers/ (git-ignored) from wheels downloaded
# here (pip download, never committed), for bench/peers.py on a device:
#   sh bench/peers_shim/build.sh            # FlashInfer's norm.cuh -> .peers/libfi_norm.so
# FlashInfer's headers come from its wheel (flashinfer-python); set
# FLASHINFER_WHL to a downloaded wheel, or it is fetched with pip download.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/.peers
mkdir -p "$out/whl" "$out/flashinfer"
whl=${FLASHINFER_WHL:-}
if [ -z "$whl" ]; then
    pip download --no-deps --quiet -d "$out/whl" "flashinfer-python==${FLASHINFER_VERSION:-0.7.4}"
    whl=$(ls "$out"/whl/flashinfer_python-*.whl | head -n 1)
fi
(cd "$out/flashinfer" && unzip -q -o "$whl" 'flashinfer/data/include/*')
nvcc=${NVCC:-nvcc}
"$nvcc" -O3 -std=c++17 -shared -Xcompiler -fPIC -gencode arch=compute_90a,code=sm_90a \
    -I"$out/flashinfer/flashinfer/data/include" -o "$out/libfi_norm.so" "$root/bench/peers_shim/flashinfer_norm.cu"
echo "built $out/libfi_norm.so ($(basename "$whl"))"
