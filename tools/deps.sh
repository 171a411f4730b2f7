#!/bin/sh
# Installs what a step needs on Debian 12, once: packages already present are
# skipped, so later runs cost nothing. Usage: tools/deps.sh bench|check
set -eu
need="ninja-build gcc libc6-dev"
case "${1:-check}" in
bench) ;;
check)
  # cmocka tests, lint, sanitizers, fuzzers (clang + libFuzzer runtime + libomp),
  # ABI check, install test, Python binding tests; clang-22 for `ninja hip-check`.
  need="$need libcmocka-dev cppcheck clang-tidy clang libclang-rt-14-dev libomp-dev \
        abigail-tools pkg-config python3 python3-pip clang-22 lld-22 llvm-22 libamdhip64-dev"
  ;;
*) echo "usage: $0 bench|check" >&2; exit 2 ;;
esac
missing=""
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing:$missing"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
