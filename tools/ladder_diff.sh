#!/bin/sh
# Where the CUDA ladder's forward and backward configs differ between a commit and the
# working tree, without a GPU: both ladders (gpu/cuda/ladder.cc with the
# config text and headers of each side) dump the grid of
# gpu/cuda/ladder_dump.cc, and the differing shapes are counted by kind and
# listed (old -> new). Usage: tools/ladder_diff.sh [REV] (default HEAD);
# LIST=N lists N shapes (default 40); HBM_SM=N dumps both at N GB/s of HBM
# an SM (the H100 SXM's rules at 25; default 0, the H200's).
set -eu
rev=${1:-HEAD}
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/rev"
git archive "$rev" gpu abi | tar -x -C "$tmp/rev"
build() { # side root -> $tmp/side.txt
    $cxx -std=c++17 -O1 -I"$2" -I"$2/abi" -o "$tmp/$1" gpu/cuda/ladder_dump.cc "$2/gpu/cuda/ladder.cc" \
        "$2/gpu/common/config_text.cc"
    "$tmp/$1" --hbm-sm="${HBM_SM:-0}" > "$tmp/$1.txt" 2> /dev/null
}
build old "$tmp/rev"
build new .
# a line: kind q res h y RxC config
paste -d ' ' "$tmp/old.txt" "$tmp/new.txt" | awk -v list="${LIST:-40}" '
    $1 != $8 || $6 != $13 { bad = 1; exit }
    { n++ }
    $7 != $14 { d++; k[$1 " " $2 " " $3 " " $4 " " $5]++; if (d <= list) print "  " $1, $2, $3, $4, $5, $6 ": " $7 " -> " $14 }
    END {
        if (bad || n == 0) { print "ladder_diff: the two dumps do not line up"; exit 2 }
        printf "ladder_diff: %d of %d shapes differ\n", d, n
        for (g in k) printf "  %6d  %s\n", k[g], g
    }'
