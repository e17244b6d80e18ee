#!/usr/bin/env bash
# check_static_link.sh [LIB] - an application that defines its own `cu`, `store_open`,
# `config_set`, ... (tests/static/clash.c) links against the static libredtune (default
# build/libredtune.a) with the flags build/redtune.pc gives (pkg-config --static), and runs:
# rt_open of a missing file answers RT_EDB, with no GPU. One TAP line, counted by tests/run.sh.
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
lib=${1:-build/libredtune.a}
pc=build/redtune.pc
for f in "$lib" "$pc"; do
    if [ ! -f "$f" ]; then
        echo "not ok 1 # SKIP static link: $f not built"
        exit 0
    fi
done
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "not ok 1 # SKIP static link: no pkg-config"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The .pc as installed, its directories pointed at the build tree; libdir holds only the
# archive, so -lredtune is the static library.
ln -s "$top/$lib" "$tmp/libredtune.a"
if ! flags=$(pkg-config --define-variable=includedir="$top/include" \
        --define-variable=libdir="$tmp" --static --cflags --libs "$pc" 2>"$tmp/log"); then
    echo "not ok 1 - static link: pkg-config --static $pc failed"
    sed 's/^/# /' "$tmp/log"
    exit 1
fi
# shellcheck disable=SC2086
if ! ${CC:-cc} -std=c11 -Wall -o "$tmp/clash" tests/static/clash.c $flags >"$tmp/log" 2>&1; then
    echo "not ok 1 - static link: tests/static/clash.c does not link against $lib ($flags)"
    head -20 "$tmp/log" | sed 's/^/# /'
    exit 1
fi
if ! "$tmp/clash" >"$tmp/log" 2>&1; then
    echo "not ok 1 - static link: tests/static/clash.c linked against $lib, but failed when run"
    sed 's/^/# /' "$tmp/log"
    exit 1
fi
echo "ok 1 - static link: an application with its own cu, store_open, config_set, ... links $lib and runs"
