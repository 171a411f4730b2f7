#!/bin/sh
# SASS gate for the CUDA plugin (ninja cuda-check): on the sm_90a machine code,
#  - every register-cached kernel (rmsi_fwd_reg, rmsi_bwd_reg) and every
#    16-byte multi-pass kernel must load with LDG.E.128 (16-byte vectors);
#  - no register-cached kernel may touch local memory (LDL/STL: spills or an
#    array indexed at run time).
# Prints one line per kernel. Needs cuobjdump ($CUOBJDUMP, or where
# `tools/cudatools.sh --no-install` finds it: the toolkit or that script's
# cache); without one it says so and passes, since the compile itself
# succeeded.
set -eu
so=$1
dump=${CUOBJDUMP:-}
if [ -z "$dump" ]; then
    # the cache too, where check.sh installed the tools, so that a plain
    # `ninja cuda-check` does not skip the gate where the toolkit lacks them
    if d=$("$(dirname "$0")/../tools/cudatools.sh" --no-install); then
        dump=$d/cuobjdump
    fi
fi
if [ -z "$dump" ]; then
    echo "sass_gate: SKIP, no cuobjdump (set CUOBJDUMP)"
    exit 0
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$dump" --dump-sass --gpu-architecture sm_90a "$so" > "$tmp"
awk '
/Function : / { fn = $3; next }
fn != "" && /LDG\.E\.128/ { ldg[fn] = 1 }
fn != "" && /(LDL|STL)/ { loc[fn]++ }
fn != "" { seen[fn] = 1 }
END {
    bad = 0
    for (f in seen) {
        reg = (f ~ /rmsi_fwd_reg|rmsi_bwd_reg/)
        vec = reg || (f ~ /rmsi_(fwd|bwd)_multi.*Li(4|8)E/)
        status = "ok"
        if (vec && !ldg[f]) { status = "NO LDG.E.128"; bad = 1 }
        if (reg && loc[f]) { status = status " LOCAL-MEMORY(" loc[f] ")"; bad = 1 }
        printf "%-6s ldg128=%d local=%d %s\n", (status == "ok" ? "ok" : "FAIL"), ldg[f] + 0, loc[f] + 0, f
    }
    exit bad
}' "$tmp"
