#!/bin/sh
# The ABI baseline and its check, with one set of abidw flags for both.
#   abi_check.sh baseline LIB HEADER ABI   writes ABI (`ninja abi-baseline`, on purpose only)
#   abi_check.sh check LIB HEADER ABI      compares LIB against ABI (`ninja abi-check`)
#
# Only the public header's types count (--hf, --drop-private-types): the backend
# table and internal structs stay free to change. Undefined symbols (libc,
# libgomp) and this checkout's paths stay out of the baseline.
#
# abidiff's exit status is a bit set: 1 error, 2 usage error, 4 an ABI change,
# 8 an incompatible change (a removed or re-versioned symbol, a SONAME change).
# Added functions alone are compatible and pass (--no-added-syms), as do
# enumerators appended before the 0x7FFFFFFF sentinel (libabigail counts them
# harmless). Any other change fails, struct growth included: growing an args
# struct at its end is allowed by the struct_size rule (docs/abi.md), but it is
# looked at and then recorded on purpose with `ninja abi-baseline`.
set -u
mode=$1
lib=$2
header=$3
abi=$4
dump() { # lib out
    abidw --drop-undefined-syms --no-corpus-path --no-comp-dir-path --drop-private-types \
        --hf "$header" "$1" > "$2.tmp" && mv "$2.tmp" "$2"
}

case $mode in
baseline)
    dump "$lib" "$abi" || exit 1
    echo "$abi rewritten from $lib: review the diff (git diff $abi) and commit it"
    exit 0 ;;
check) ;;
*) echo "usage: $0 baseline|check LIB HEADER ABI" >&2; exit 2 ;;
esac

fresh=${lib%.so*}.abi
dump "$lib" "$fresh" || { echo "abi-check: abidw failed on $lib"; exit 1; }
# Without DWARF (-g) abidw sees symbols only and every type change would pass.
if ! grep -q "name='rmsnorm_forward_args'" "$fresh"; then
    echo "abi-check: no type information in $lib (built without -g?)"
    echo "0 passed, 1 failed"
    exit 1
fi
report=$(abidiff --no-added-syms "$abi" "$fresh" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
    added=$(abidiff "$abi" "$fresh" 2>&1 | grep "^  \[A\]")
    if [ -n "$added" ]; then
        echo "$added"
        echo "abi-check: compatible additions above; a release records them with a new version" \
            "node in abi/rmsnorm.map and 'ninja abi-baseline'"
    fi
    echo "abi-check: $lib is ABI-compatible with $abi"
    echo "1 passed, 0 failed"
    exit 0
fi
echo "$report"
if [ "$rc" -ge 16 ]; then
    echo "abi-check: abidiff crashed (exit $rc)"
else
    [ $((rc & 1)) -ne 0 ] && echo "abi-check: abidiff reported an error (exit $rc)"
    [ $((rc & 2)) -ne 0 ] && echo "abi-check: abidiff usage error (exit $rc)"
    [ $((rc & 8)) -ne 0 ] && echo "abi-check: INCOMPATIBLE ABI change (exit $rc): a symbol was" \
        "removed or re-versioned, or the SONAME changed"
    [ $((rc & 12)) -eq 4 ] && echo "abi-check: ABI change (exit $rc): review it against docs/abi.md;" \
        "only a field appended to an args struct is allowed, then recorded with 'ninja abi-baseline'"
fi
echo "0 passed, 1 failed"
exit 1
