#!/bin/sh
# Prints a directory holding cuobjdump and nvdisasm, the tools of the SASS gate
# (gpu/sass_gate.sh: 16-byte loads, no spills), installing NVIDIA's PyPI wheels
# of them when neither the PATH nor /usr/local/cuda has them (nvcc's wheel and
# some toolkit installs ship without them, and without them the gate skips).
# Exits 1, printing nothing, when they cannot be had. --no-install: only
# looks (the PATH, /usr/local/cuda, this script's cache), as the gate does when
# ninja runs it, so that it finds what check.sh installed without installing.
set -eu
install=1
if [ "${1:-}" = --no-install ]; then install=0; fi
for c in "$(command -v cuobjdump 2>/dev/null || true)" /usr/local/cuda/bin/cuobjdump; do
    [ -n "$c" ] || continue
    d=$(dirname "$c")
    if [ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ]; then
        echo "$d"
        exit 0
    fi
done
dest=${CUDATOOLS_DIR:-${HOME:-/tmp}/.cache/librmsnorm/cudatools}
bin() { find "$dest" -name cuobjdump -type f 2>/dev/null | head -1; }
if [ -z "$(bin)" ]; then
    [ "$install" = 1 ] || exit 1
    set -- --target "$dest" --no-deps "nvidia-cuda-cuobjdump>=13,<14" "nvidia-cuda-nvdisasm>=13,<14"
    python3 -m pip install -q "$@" >&2 2>/dev/null ||
        python3 -m pip install -q --break-system-packages "$@" >&2 || exit 1
fi
c=$(bin)
[ -n "$c" ] || exit 1
d=$(dirname "$c")
chmod +x "$d/cuobjdump" "$d/nvdisasm" 2>/dev/null || true
[ -x "$d/cuobjdump" ] && [ -x "$d/nvdisasm" ] || exit 1
echo "$d"
