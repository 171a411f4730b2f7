#!/bin/sh
# Installs librmsnorm: `ninja install` runs this after building the library.
#   PREFIX   where it goes (default /usr/local)
#   DESTDIR  staging root prepended to every path, for packagers (default none)
#   BUILD    the build folder to install from (default build)
# Layout: include/rmsnorm.h, lib/librmsnorm.a, lib/librmsnorm.so.1 and the
# librmsnorm.so link, lib/rmsnorm/librmsnorm_{cuda,hip}.so when built (the core
# looks for plugins in lib/rmsnorm/ next to itself), lib/pkgconfig/rmsnorm.pc.
set -eu
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILD=${BUILD:-build}
here=$(cd "$(dirname "$0")/.." && pwd)

case $PREFIX in
/*) ;;
*) echo "install.sh: PREFIX must be an absolute path (got '$PREFIX')" >&2; exit 1 ;;
esac
for f in "$BUILD/librmsnorm.a" "$BUILD/librmsnorm.so.1"; do
    [ -f "$f" ] || { echo "install.sh: $f is missing: run ninja first" >&2; exit 1; }
done

root=$DESTDIR$PREFIX
header=$here/abi/rmsnorm.h
version=$(awk '/^#define RMSNORM_VERSION_(MAJOR|MINOR|PATCH) / {v = v sep $3; sep = "."} END {print v}' \
    "$header")

install -d "$root/include" "$root/lib/pkgconfig"
install -m 644 "$header" "$root/include/rmsnorm.h"
install -m 644 "$BUILD/librmsnorm.a" "$root/lib/librmsnorm.a"
install -m 755 "$BUILD/librmsnorm.so.1" "$root/lib/librmsnorm.so.1"
ln -sf librmsnorm.so.1 "$root/lib/librmsnorm.so"
for plugin in "$BUILD"/librmsnorm_cuda.so "$BUILD"/librmsnorm_hip.so; do
    [ -f "$plugin" ] || continue
    install -d "$root/lib/rmsnorm"
    install -m 755 "$plugin" "$root/lib/rmsnorm/"
    echo "installed $root/lib/rmsnorm/$(basename "$plugin")"
done
# The .pc file names the final PREFIX, never DESTDIR: the staging root is gone
# once the package is unpacked.
sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@VERSION@|$version|g" "$here/rmsnorm.pc.in" \
    > "$root/lib/pkgconfig/rmsnorm.pc.tmp"
mv "$root/lib/pkgconfig/rmsnorm.pc.tmp" "$root/lib/pkgconfig/rmsnorm.pc"
chmod 644 "$root/lib/pkgconfig/rmsnorm.pc"
echo "installed librmsnorm $version into $root"
