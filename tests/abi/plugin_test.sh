#!/bin/sh
# Plugin ABI negotiation: the core loads a plugin whose table speaks its
# backend ABI major and refuses one that reports another major.
# usage: plugin_test.sh probe fake-current.so fake-next.so
set -u
probe=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/current" "$tmp/next" "$tmp/empty"
cp "$2" "$tmp/current/librmsnorm_cuda.so"
cp "$3" "$tmp/next/librmsnorm_cuda.so"
pass=0
fail=0
# RMSNORM_DEBUG=1 also logs each present backend's describe; the stand-in has
# none (a NULL slot, skipped), the reference does.
run() { # dir expectation
    if out=$(RMSNORM_DEBUG=1 RMSNORM_PLUGIN_PATH="$tmp/empty:$1" "$probe" "$2" 2>&1) &&
        echo "$out" | grep -q '^rmsnorm: backend ref: .'; then
        pass=$((pass + 1)); echo "ok   $1: $(echo "$out" | tail -n 1)"
    else
        fail=$((fail + 1)); echo "FAIL $1:"; echo "$out"
    fi
}
run "$tmp/current" accepted
run "$tmp/next" refused
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
