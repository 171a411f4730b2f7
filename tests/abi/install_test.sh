#!/bin/sh
# shellcheck disable=SC2015 # ok and bad always succeed, so "a && ok || bad" is an if-else
# Installs into a temporary DESTDIR + PREFIX and a temporary PREFIX, checks the
# layout, then builds tests/abi/consumer.c against each install with
# `pkg-config --cflags --libs rmsnorm` only (shared) and with --static, and runs it.
# With a probe program and a stand-in plugin (tests/abi/plugin_probe.c,
# fake_plugin.c), it also checks that the installed core finds a plugin in the
# installed lib/rmsnorm/ folder.
# usage: install_test.sh build-dir [plugin_probe fake-plugin.so]
set -u
BUILD=${1:-build}
probe=${2:-}
fake=${3:-}
cc=${CC:-gcc}
pass=0
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# 1. a packager's staged install: everything under DESTDIR, the .pc names PREFIX
if DESTDIR="$tmp/stage" PREFIX=/opt/rmsnorm BUILD="$BUILD" sh tools/install.sh > "$tmp/log1" 2>&1; then
    ok "DESTDIR install"
else
    bad "DESTDIR install:"; cat "$tmp/log1"
fi
s=$tmp/stage/opt/rmsnorm
for f in include/rmsnorm.h lib/librmsnorm.a lib/librmsnorm.so.1 lib/pkgconfig/rmsnorm.pc; do
    [ -f "$s/$f" ] && ok "staged $f" || bad "staged $f missing"
done
[ "$(readlink "$s/lib/librmsnorm.so")" = "librmsnorm.so.1" ] && ok "staged librmsnorm.so -> librmsnorm.so.1" \
    || bad "staged librmsnorm.so link"
grep -qx 'prefix=/opt/rmsnorm' "$s/lib/pkgconfig/rmsnorm.pc" && ok "rmsnorm.pc names PREFIX, not DESTDIR" \
    || bad "rmsnorm.pc prefix line: $(grep '^prefix=' "$s/lib/pkgconfig/rmsnorm.pc")"
for plugin in "$BUILD"/librmsnorm_cuda.so "$BUILD"/librmsnorm_hip.so; do
    [ -f "$plugin" ] || continue
    [ -f "$s/lib/rmsnorm/$(basename "$plugin")" ] && ok "staged plugin $(basename "$plugin")" \
        || bad "plugin $(basename "$plugin") not staged in lib/rmsnorm/"
done

# 2. a user's install into a prefix, then a consumer built through pkg-config
p=$tmp/prefix
if PREFIX="$p" BUILD="$BUILD" sh tools/install.sh > "$tmp/log2" 2>&1; then
    ok "PREFIX install"
else
    bad "PREFIX install:"; cat "$tmp/log2"
fi
export PKG_CONFIG_PATH="$p/lib/pkgconfig"
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
v=$(pkg-config --modversion rmsnorm 2>&1) && ok "pkg-config --modversion: $v" || bad "pkg-config: $v"
flags=$(pkg-config --cflags --libs rmsnorm) || flags=
# shellcheck disable=SC2086 # the flags are words on purpose
if $cc -std=c11 -Wall -Werror -o "$tmp/consumer" tests/abi/consumer.c $flags > "$tmp/log3" 2>&1; then
    ok "consumer built with: $flags"
    # The loader path is the only run-time hint: the binary carries no rpath.
    if out=$(LD_LIBRARY_PATH="$p/lib" "$tmp/consumer" 2>&1); then ok "$out"; else bad "consumer: $out"; fi
    needed=$(readelf -d "$tmp/consumer" | sed -n 's/.*(NEEDED).*\[\(librmsnorm[^]]*\)\].*/\1/p')
    [ "$needed" = "librmsnorm.so.1" ] && ok "consumer needs $needed" || bad "consumer NEEDED '$needed'"
else
    bad "consumer build:"; cat "$tmp/log3"
fi

# 3. static: Libs.private must carry what librmsnorm.a needs
sflags=$(pkg-config --cflags --libs --static rmsnorm) || sflags=
sflags=$(echo "$sflags" | sed 's/-lrmsnorm/-Wl,-Bstatic -lrmsnorm -Wl,-Bdynamic/')
# shellcheck disable=SC2086
if $cc -std=c11 -Wall -Werror -o "$tmp/consumer-static" tests/abi/consumer.c $sflags > "$tmp/log4" 2>&1; then
    ok "static consumer built with: $sflags"
    if out=$("$tmp/consumer-static" 2>&1); then ok "$out (static)"; else bad "static consumer: $out"; fi
    readelf -d "$tmp/consumer-static" | grep -q 'librmsnorm' && bad "static consumer still needs librmsnorm.so" \
        || ok "static consumer has no librmsnorm dependency"
else
    bad "static consumer build:"; cat "$tmp/log4"
fi

# 4. plugin discovery in the installed layout: <libdir>/rmsnorm/
if [ -n "$probe" ] && [ -n "$fake" ]; then
    mkdir -p "$p/lib/rmsnorm"
    cp "$fake" "$p/lib/rmsnorm/librmsnorm_cuda.so"
    # RUNPATH yields to LD_LIBRARY_PATH, so the probe loads the installed core.
    if out=$(env -u RMSNORM_PLUGIN_PATH RMSNORM_DEBUG=1 LD_LIBRARY_PATH="$p/lib" "$probe" accepted 2>&1) \
        && echo "$out" | grep -q "plugin $p/lib/rmsnorm/librmsnorm_cuda.so loaded"; then
        ok "installed core found lib/rmsnorm/librmsnorm_cuda.so"
    else
        bad "installed core did not load lib/rmsnorm/librmsnorm_cuda.so:"; echo "$out"
    fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
