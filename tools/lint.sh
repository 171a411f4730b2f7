#!/bin/sh
# ninja lint: cppcheck and clang-tidy over every C file of the project, zero
# findings allowed. Both see the flags the build uses (C11, baseline ISA,
# OpenMP); the simd/ kernel files are the only ones built with AVX-512 flags
# (simd/simd.ninja), and are analysed with those same flags.
set -eu
cd "$(dirname "$0")/.."
all=$(find abi ref simd bench tests fuzz -name '*.c' -not -path 'tests/abi/*' 2>/dev/null | sort)
simd_kernels="simd/forward.c simd/backward.c simd/forward_bf16.c simd/backward_bf16.c simd/probe.c"
base=""
for f in $all; do
  case " $simd_kernels " in *" $f "*) ;; *) base="$base $f" ;; esac
done
defs="-D_POSIX_C_SOURCE=200809L -DRMSNORM_BUILDING_LIBRARY"
avx="-mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -DRMSNORM_SIMD_FILE=1"

echo "cppcheck: $(echo $all | wc -w) files"
# unusedFunction is meaningless file by file; missingIncludeSystem: cppcheck has
# no libc headers of its own.
cpp() {
  cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 --platform=unix64 \
    --enable=warning,style,performance,portability \
    --suppress=missingIncludeSystem --suppress=unusedFunction --suppress=unmatchedSuppression \
    -j 2 -Iabi -I. $defs -D__x86_64__ -D__GNUC__ -D_OPENMP "$@"
}
# shellcheck disable=SC2086
cpp $base
# shellcheck disable=SC2086
cpp -D__AVX512F__ -D__AVX512BF16__ -DRMSNORM_SIMD_FILE=1 $simd_kernels

echo "clang-tidy: $(echo $all | wc -w) files"
tidy() {
  flags=$1
  shift
  # shellcheck disable=SC2086
  printf '%s\n' "$@" | xargs -P 2 -n 4 sh -c 'clang-tidy --quiet "$@" 2>/dev/null -- \
    -std=c11 -Iabi -I. '"$defs"' -fopenmp -march=x86-64 -Wall -Wextra '"$flags"' || true' tidy
}
out=$( { tidy "" $base; tidy "$avx" $simd_kernels; } | grep -E 'warning:|error:' || true)
if [ -n "$out" ]; then
  printf '%s\n' "$out"
  echo "lint: findings above"
  exit 1
fi
echo "lint: zero findings"
