#!/usr/bin/env bash
# check_runtime.sh [LIB] - libredtune carries only what an application runs (TAP lines, counted
# by tests/run.sh):
#   1  no file under runtime/ holds SQL that writes a database (INSERT, UPDATE, DELETE, CREATE,
#      ATTACH, VACUUM, ...: those are the tuner's, tuner/store_*.c and tuner/ship*.c) nor
#      calls sqlite3_backup or opens a file with SQLITE_OPEN_CREATE;
#   2  LIB (default build/libredtune.a) holds no such SQL text either;
#   3  LIB holds none of the Lua text of lua/ and not the schema (the redtune program's own
#      embed object, build/gen/embed_tuner.c, carries them);
#   4, 5  build/tests/libonly, linked with the runtime objects alone (libredtune_int.a): a
#      missing database opened read-only is refused and no file is made; embed_find finds
#      the templates and no Lua (the link itself shows that the runtime needs no tuner
#      symbol: there is no store_open, the tuner's open for writing, in it).
set -u
cd "$(dirname "$0")/.." || exit 1
lib=${1:-build/libredtune.a}
# SQL that changes a database, as it appears in a C string or in the library's text.
writes='(INSERT|REPLACE)( +OR +[A-Z]+)? +INTO|UPDATE +[A-Za-z_."]+ +SET|DELETE +FROM|CREATE +(TEMP +|UNIQUE +)?(TABLE|INDEX|VIEW|TRIGGER)|ATTACH |DETACH |VACUUM|ALTER +TABLE|DROP +(TABLE|INDEX)|BEGIN +IMMEDIATE|journal_mode *= *WAL|user_version *='
status=0

bad=$(grep -nE "\"[^\"]*($writes)|sqlite3_backup|SQLITE_OPEN_CREATE" runtime/*.c runtime/*.h)
if [ -z "$bad" ]; then
    echo "ok 1 - runtime: no file under runtime/ writes a database"
else
    echo "not ok 1 - runtime: these lines under runtime/ write a database (the tuner's work):"
    echo "$bad" | sed 's/^/#   /'
    status=1
fi

if [ ! -f "$lib" ]; then
    echo "not ok 2 # SKIP runtime: $lib not built"
    echo "not ok 3 # SKIP runtime: $lib not built"
    exit $status
fi
text=$(strings -a "$lib")
bad=$(echo "$text" | grep -E "$writes" | head -3)
if [ -z "$bad" ]; then
    echo "ok 2 - runtime: $lib holds no SQL that writes a database"
else
    echo "not ok 2 - runtime: $lib holds SQL that writes a database, e.g.:"
    echo "$bad" | cut -c1-100 | sed 's/^/#   /'
    status=1
fi

# Each tuner file by its path (the embed table's key) and by its first line.
missing=
for f in $(find lua -name '*.lua' | LC_ALL=C sort) db/schema.sql; do
    first=$(head -n 1 "$f")
    if echo "$text" | grep -qF -e "$f" || { [ -n "$first" ] && echo "$text" | grep -qF -e "$first"; }
    then
        missing="$missing $f"
    fi
done
if [ -z "$missing" ]; then
    echo "ok 3 - runtime: $lib carries no Lua text and no schema"
else
    echo "not ok 3 - runtime: $lib carries what only the tuner runs:$missing"
    status=1
fi

if [ ! -x build/tests/libonly ]; then
    echo "not ok 4 # SKIP runtime: build/tests/libonly not built"
    echo "not ok 5 # SKIP runtime: build/tests/libonly not built"
    exit $status
fi
dir=$(mktemp -d)
build/tests/libonly "$dir" || status=1
rm -rf "$dir"
exit $status
