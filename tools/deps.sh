#!/bin/sh
# Installs what a step needs on Debian 12, once: packages already present are
# skipped, so later runs cost nothing. Usage: tools/deps.sh bench|check
set -eu
need="ninja-build gcc libc6-dev"
case "${1:-check}" in
bench) ;;
check)
  # cmocka tests, lint, sanitizers, fuzzers (clang + libFuzzer runtime + libomp),
  # ABI check, install test, Python binding tests; clang-22 for `ninja hip-check`
  # (clang-tools-22: its clang-offload-bundler, which -save-temps runs).
  need="$need libcmocka-dev cppcheck clang-tidy clang libclang-rt-14-dev libomp-dev \
        abigail-tools pkg-config python3 python3-pip clang-22 clang-tools-22 lld-22 llvm-22 libamdhip64-dev"
  ;;
*) echo "usage: $0 bench|check" >&2; exit 2 ;;
esac
pip_install() {
  # Debian's own python3 is "externally managed"; a pyenv/venv python is not.
  python3 -m pip install -q "$@" 2>/dev/null || python3 -m pip install -q --break-system-packages "$@"
}
pip_need() {
  # Python packages for the binding's tests, from PyPI. torch is best effort:
  # without it the autograd tests skip (pytest.importorskip), they do not fail.
  python3 -c 'import numpy, pytest, ml_dtypes' 2>/dev/null ||
    pip_install numpy pytest ml_dtypes
  python3 -c 'import torch' 2>/dev/null ||
    pip_install torch || echo "torch not installed: its tests will skip"
}
missing=""
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
  [ "${1:-check}" = check ] && pip_need
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "installing:$missing"
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
[ "${1:-check}" = check ] && pip_need
exit 0
