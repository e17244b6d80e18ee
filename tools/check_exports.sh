#!/usr/bin/env bash
# check_exports.sh [LIB] - the names a shared libredtune exports are exactly the functions
# include/redtune.h declares (one TAP line, counted by tests/run.sh). With --map, print the
# linker version script that makes it so (build.ninja's so_map rule). With --names, print
# those names one a line (variant.ninja's syms rule: the only global names of libredtune.a).
# LIB may be a static library (libredtune.a): then its global defined symbols are checked.
set -u
cd "$(dirname "$0")/.." || exit 1
# Declarations start in column 0; comments and macros do not.
api=$(grep -E '^[a-z]' include/redtune.h | grep -oE '\brt_[a-z_0-9]+ *\(' | tr -d '( ' | sort -u)
if [ "${1:-}" = --map ]; then
    printf '{ global:'
    printf ' %s;' $api
    printf ' local: *; };\n'
    exit 0
fi
if [ "${1:-}" = --names ]; then
    printf '%s\n' $api
    exit 0
fi
lib=${1:-build/libredtune.so}
if [ ! -f "$lib" ]; then
    echo "not ok 1 # SKIP exports: $lib not built"
    exit 0
fi
case $lib in
    *.a) dyn= ;;
    *) dyn=-D ;;
esac
got=$(nm $dyn -g --defined-only "$lib" | awk '$2 ~ /^[TtWDdBbRrVi]$/ {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$api") <(echo "$got") | tr '\n' ' ')
missing=$(comm -23 <(echo "$api") <(echo "$got") | tr '\n' ' ')
if [ -z "$extra$missing" ]; then
    echo "ok 1 - exports: $lib exports exactly the $(echo "$api" | wc -l) functions of include/redtune.h"
else
    echo "not ok 1 - exports: $lib exports ${extra:-nothing }beyond include/redtune.h; lacks ${missing:-nothing}"
    exit 1
fi
