#!/bin/bash
# ptx_same.sh OLD_REDTUNE DB FAMILY - the PTX of each of DB's winners of FAMILY as OLD_REDTUNE
# (the binary that measured them, e.g. unpacked from build/c26.tar.xz) and build/redtune (the
# committed templates) emit it, compared (nvcc -ptx, same file name so that internal names
# match): "same" or "DIFF" a line. The twenty-sixth session checked its shipped seg_pipe rows
# so after re-keying their CUBINs (docs/results.md).
old=${1:?old redtune binary} db=${2:?database} fam=${3:?family}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
build/redtune best --db "$db" --format csv 2>/dev/null | python3 -c '
import csv, sys
fam = sys.argv[1]
for r in csv.DictReader(sys.stdin):
    if r["family"] == fam:
        print(r["op"], r["type"], r["params"])
' "$fam" | sort -u | while read -r op ty params; do
    "$old" emit "$fam" $params --op "$op" --type "$ty" > "$d/x.cu" && /usr/local/cuda/bin/nvcc -arch=sm_90 -ptx "$d/x.cu" -o "$d/old.ptx" 2> /dev/null
    build/redtune emit "$fam" $params --op "$op" --type "$ty" > "$d/x.cu" && /usr/local/cuda/bin/nvcc -arch=sm_90 -ptx "$d/x.cu" -o "$d/new.ptx" 2> /dev/null
    if cmp -s "$d/old.ptx" "$d/new.ptx"; then echo "same $op $ty $params"; else echo "DIFF $op $ty $params"; fi
done
