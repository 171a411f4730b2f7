#!/bin/sh
# shellcheck disable=SC2015 # ok and bad always succeed, so "a && ok || bad" is an if-else
# Checks the dynamic symbol table of the shared library against the public
# header: every exported symbol is rmsnorm_* at version RMSNORM_1.0, the set is
# exactly the functions the header declares, and the SONAME is librmsnorm.so.1.
# GPU plugins given after the header must export rmsnorm_plugin_init alone.
#
# usage: check_symbols.sh build/librmsnorm.so.1 abi/rmsnorm.h [plugin.so...]
set -u
lib=$1
header=$2
shift 2
node=RMSNORM_1.0
pass=0
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# Defined dynamic symbols as "name@version" (nm prints @@ for the default
# version, @ for a hidden one). Undefined ones (libc, libgomp) are not ours, nor
# is the absolute symbol that names each version node.
exported() {
    nm -D --defined-only --with-symbol-versions "$1" | awk '!($2 == "A" && $3 !~ /@/) {print $NF}' \
        | sed 's/@@*/@/' | sort
}

# Public functions: the identifier before the first "(" of each RMSNORM_API line.
sed -n 's/^RMSNORM_API[^(]*[^A-Za-z0-9_(]\(rmsnorm_[A-Za-z0-9_]*\)(.*/\1/p' "$header" | sort -u \
    > "$tmp/declared"
if [ -s "$tmp/declared" ]; then
    ok "$(wc -l < "$tmp/declared") public functions declared in $header"
else
    bad "no RMSNORM_API function found in $header"
fi

exported "$lib" > "$tmp/symbols"

bad_version=$(grep -v "@$node\$" "$tmp/symbols")
[ -z "$bad_version" ] && ok "every exported symbol has version $node" \
    || bad "symbols without version $node: $bad_version"

bad_prefix=$(grep -v '^rmsnorm_' "$tmp/symbols")
[ -z "$bad_prefix" ] && ok "every exported symbol is rmsnorm_*" \
    || bad "exported symbols outside rmsnorm_*: $bad_prefix"

sed 's/@.*//' "$tmp/symbols" | sort -u > "$tmp/names"
if cmp -s "$tmp/names" "$tmp/declared"; then
    ok "exported set equals the header's functions"
else
    bad "exported set differs from the header (< header only, > library only):"
    diff "$tmp/declared" "$tmp/names" | grep '^[<>]'
fi

# Objects (variables) must not be part of the ABI.
objects=$(readelf --dyn-syms -W "$lib" | awk '$4 == "OBJECT" && $7 != "UND" && $7 != "ABS" {print $8}')
[ -z "$objects" ] && ok "no exported data objects" || bad "exported data objects: $objects"

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = "librmsnorm.so.1" ] && ok "SONAME $soname" || bad "SONAME is '$soname'"

verdef=$(readelf -V -W "$lib" | sed -n '/Version definition/,/^$/p' | grep -o 'Name: [A-Za-z0-9_.]*' \
    | sed 's/Name: //' | grep -v '^librmsnorm' | sort -u | tr '\n' ' ')
[ "$verdef" = "$node " ] && ok "version definitions: $verdef" || bad "version definitions: '$verdef'"

for plugin in "$@"; do
    if [ ! -f "$plugin" ]; then
        echo "SKIP $plugin not built"
        continue
    fi
    syms=$(exported "$plugin" | tr '\n' ' ')
    [ "$syms" = "rmsnorm_plugin_init@$node " ] && ok "$plugin exports rmsnorm_plugin_init@$node only" \
        || bad "$plugin exports: $syms"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
