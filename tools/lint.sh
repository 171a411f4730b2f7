#!/bin/sh
# ninja lint: cppcheck and clang-tidy over every C file of the project, zero
# findings allowed. Both see the flags the build uses (C11, baseline ISA,
# OpenMP); simd/ kernels carry their ISA in target attributes, so no extra flags.
set -eu
cd "$(dirname "$0")/.."
files=$(find abi ref simd bench tests fuzz -name '*.c' -not -path 'tests/abi/*' 2>/dev/null | sort)
defs="-D_POSIX_C_SOURCE=200809L -DRMSNORM_BUILDING_LIBRARY"

echo "cppcheck: $(echo "$files" | wc -l) files"
# unusedFunction is meaningless file by file; missingIncludeSystem: cppcheck has
# no libc headers of its own.
cppcheck --quiet --error-exitcode=1 --inline-suppr --std=c11 --platform=unix64 \
  --enable=warning,style,performance,portability \
  --suppress=missingIncludeSystem --suppress=unusedFunction --suppress=unmatchedSuppression \
  -j 2 -Iabi -I. $defs -D__x86_64__ -D__GNUC__ -D_OPENMP $files

echo "clang-tidy: $(echo "$files" | wc -l) files"
# shellcheck disable=SC2086
echo "$files" | xargs -P 2 -n 4 clang-tidy --quiet 2>/dev/null -- \
  -std=c11 -Iabi -I. $defs -fopenmp -march=x86-64 -Wall -Wextra \
  | { grep -E 'warning:|error:' && exit 1 || exit 0; }
echo "lint: zero findings"
