#!/usr/bin/env bash
# refresh_shipped.sh [DUMP] - give a shipped dump (default db/tuned/h100.sql) the CUBINs of the
# units this build generates for its winners, with no GPU (NVRTC, sm_90).
#
# libredtune runs a winner as the unit its own generator makes for the winner's family and
# parameters (runtime/api_kernel.c), and takes a stored CUBIN only when it was made
# from exactly that unit (same SHA-256). After a change of the generator (a prelude or a
# template), the stored CUBINs no longer match and the library compiles each winner with NVRTC
# at its first call. This script compiles the winners' configs as they are generated today
# (`redtune compile --db`, which stores their kernels and CUBINs), drops the CUBINs no winner
# can use any more, and writes the dump back. Winners, measurements and kernel rows stay as
# measured: the timings are those of the tuned units, and docs/results.md says when the code
# changed under them.
set -eu
cd "$(dirname "$0")/.."
dump=${1:-db/tuned/h100.sql}
arch=${ARCH:-sm_90}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/redtune load "$dump" -o "$work/db.db"
python3 - "$work" <<'PY'
import os, sqlite3, sys
work = sys.argv[1]
db = sqlite3.connect(os.path.join(work, "db.db"))
groups = {}
for op, typ, layout, family, params in db.execute(
        "SELECT DISTINCT b.op, b.type, b.layout, k.family, k.params FROM best b "
        "JOIN kernels k ON k.hash = b.kernel_hash ORDER BY 1, 2, 3, 4, 5"):
    kind = layout.split(":")[0]
    groups.setdefault((op, typ, kind), set()).add((family, params))
with open(os.path.join(work, "groups.txt"), "w") as g:
    for i, ((op, typ, kind), cfgs) in enumerate(sorted(groups.items())):
        path = os.path.join(work, f"space{i}.lua")
        with open(path, "w") as f:
            f.write("return {\n")
            for family, params in sorted(cfgs):
                kv = []
                for w in params.split():
                    k, v = w.split("=")
                    if kind != "flat" and k == "OFF64":
                        v = "0"   # what rt_reduce_offsets runs without RT_SEG_OFF64
                    kv.append(f"{k} = {int(v)}")
                f.write(f'  {{ family = "{family}", params = {{ {", ".join(kv)} }} }},\n')
            f.write("}\n")
        g.write(f"{op} {typ} {kind} {path}\n")
PY
: > "$work/new.txt"
while read -r op type kind space; do
    seg=
    [ "$kind" = keys ] || [ "$kind" = offsets ] && seg="--segmented $kind"
    [ "$kind" = axis ] && seg="--axis --shapes 1,4096,1"   # an axis unit does not depend on the shape
    # shellcheck disable=SC2086
    build/redtune compile --arch "$arch" --space "$space" --op "$op" --type "$type" $seg \
        --db "$work/db.db" -v | awk '$1 == "ok" {print $NF}' >> "$work/new.txt"
    # argmin/argmax along an axis: also the units of the index alone (RT_RESULT_INDEX, what
    # the Python package's argmax(x, dim) runs), from the same winners
    if [ "$kind" = axis ] && { [ "$op" = argmax ] || [ "$op" = argmin ]; }; then
        # shellcheck disable=SC2086
        build/redtune compile --arch "$arch" --space "$space" --op "$op" --type "$type" $seg \
            --result index --db "$work/db.db" -v | awk '$1 == "ok" {print $NF}' >> "$work/new.txt"
    fi
done < "$work/groups.txt"
python3 - "$work" <<'PY'
import os, sqlite3, sys
work = sys.argv[1]
keep = set(open(os.path.join(work, "new.txt")).read().split())
db = sqlite3.connect(os.path.join(work, "db.db"))
db.execute("CREATE TEMP TABLE keep (hash TEXT PRIMARY KEY)")
db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", [(h,) for h in keep])
gone = db.execute("DELETE FROM binaries WHERE hash NOT IN (SELECT hash FROM keep)").rowcount
# Kernels that nothing refers to any more (neither a best row nor a measurement nor a CUBIN).
db.execute("DELETE FROM kernels WHERE hash NOT IN (SELECT kernel_hash FROM best) AND "
           "hash NOT IN (SELECT kernel_hash FROM measurements) AND "
           "hash NOT IN (SELECT hash FROM binaries)")
db.commit()
print(f"refresh: {len(keep)} units of today's generator compiled, {gone} old CUBINs dropped")
PY
build/redtune dump "$work/db.db" -o "$dump" --force
