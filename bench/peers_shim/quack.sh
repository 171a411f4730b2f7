#!/bin/sh
# Quack (quack-kernels, the CuTe-DSL RMSNorm) for bench/peers.py on a device
# that cannot reach the package index and takes at most 64 MiB a call.
# Quack needs NVIDIA's CUTLASS DSL, whose CUDA 13 library wheel unpacks to
# 237 MB (one 193 MB MLIR library); xz takes that library to about 50 MB and
# the rest to about 20 MB, so it travels in two calls of one warm machine:
#
#   here:  sh bench/peers_shim/quack.sh pack       # -> .quack-1/ (~50 MB), .quack-2/ (~20 MB)
#   call 1 (carry .quack-1):  sh bench/peers_shim/quack.sh unpack1
#   call 2 (carry .quack-2 and the rest, within the machine's warm window):
#          sh bench/peers_shim/quack.sh unpack2 && . .quack-site/env.sh
#
# Everything lands in git-ignored folders; nothing of Quack's is committed.
# The wheels are for the device image's CPython 3.12.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
big=nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so
site=.quack-site
case "${1:-}" in
pack)
    w=.peers/quack-whl
    mkdir -p "$w"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64 \
        -d "$w" quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1 \
        nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 \
        apache-tvm-ffi==0.1.15.post2 torch-c-dlpack-ext==0.1.5
    s=.peers/quack-stage
    rm -rf "$s" .quack-1 .quack-2
    mkdir -p "$s" .quack-1 .quack-2
    for f in "$w"/*.whl; do unzip -q -o "$f" -d "$s"; done
    xz -T0 -9e -c "$s/$big" > .quack-1/big.xz
    rm "$s/$big"
    tar -C "$s" -cf - . | xz -T0 -9e > .quack-2/rest.tar.xz
    du -sh .quack-1 .quack-2
    ;;
unpack1)
    mkdir -p "$site/$(dirname "$big")"
    xz -dc .quack-1/big.xz > "$site/$big.part"
    mv "$site/$big.part" "$site/$big"
    ;;
unpack2)
    [ -f "$site/$big" ] || { echo "quack.sh: $site/$big missing (not the machine of call 1?)" >&2; exit 3; }
    xz -dc .quack-2/rest.tar.xz | tar -C "$site" -xf -
    # the .pth the wheel installs is not read from a PYTHONPATH folder;
    # ${PYTHONPATH...} is for env.sh to expand, not this script
    # shellcheck disable=SC2016
    printf 'export PYTHONPATH=%s/%s:%s/%s/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}\n' \
        "$root" "$site" "$root" "$site" > "$site/env.sh"
    ;;
*)
    echo "usage: $0 pack | unpack1 | unpack2" >&2
    exit 2
    ;;
esac
