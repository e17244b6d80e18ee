#!/usr/bin/env bash
#
# check_templates.sh - compile the kernel templates with nvcc the way NVRTC gets them: each unit
# is written by the real code generator (`redtune emit FAMILY NAME=VALUE... --op OP --type T`),
# so the glue here is always the generator's. Device code only (-cubin), warnings are errors.
#
# For each family of the list: the template alone (its standalone.cuh defaults); behind the
# generator's prelude for each operator (sum prod min max) x type (f32 f64 i32 u32 i64 u64) x
# a few parameter sets (the defaults first, then the seed ladder's steps or the paper's shapes
# and the ends of the ranges); argmin on f32 (a 16-byte struct accumulator); the
# non-commutative lua/ops/affine.lua, which the families that keep the order must compile and
# the others must refuse twice: in the generator (`redtune emit` says so) and in the template
# (its #error, behind the min/f32 prelude with RT_COMMUTATIVE 0); and the illegal shapes each
# family's static_asserts must refuse, with their message. The yardstick (templates/
# bandwidth.cu, a helper with parameters and no glue) alone and with its parameters. The new
# types (f16 bf16 i8 u8) and operators (argmax, amax, asum, sumsq, norm2, mean, var/std_mean):
# every pair optype defines at each family's defaults.
# Fails on any error or warning, and on local memory (spills or a stack frame) in a family's
# default configuration (elsewhere it is noted); prints registers of min on f32 at the defaults.
#
#   tools/check_templates.sh [--quick] [--tap] [FAMILY...]    default: every family below
#   ARCHS="sm_80 sm_90" tools/check_templates.sh              one nvcc run per unit, -gencode each
#   NVCC=/path/to/nvcc REDTUNE=build/redtune JOBS=8 VERBOSE=1 KEEP=1 tools/check_templates.sh
#
# --quick: a reduced matrix (what `ninja test` runs): per family the template alone, its
# defaults for eight operator/type pairs that cover every operator and type, every parameter
# set on min/f32, argmin, affine and the refused shapes; and fourteen new pairs (every new type
# and fused operator) on gridstride, seg_lb and the axis families, half of them on tree_sequential and seg_per. --tap: one TAP line per family
# ("ok N - ..." / "not ok N - ..."; "# SKIP" when nvcc is missing), details as # comments,
# for tests/run.sh. VERBOSE=1 prints a line per unit; KEEP=1 keeps the sources and logs.
# Exit status: 0 when everything passed, 1 when something failed, 2 when nvcc or redtune is
# missing.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
ARCHS=${ARCHS:-sm_90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
VERBOSE=${VERBOSE:-0}
KEEP=${KEEP:-0}
REDTUNE=${REDTUNE:-$top/build/redtune}

quick=0
tap=0
want=()
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --tap) tap=1 ;;
    -h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check_templates: unknown option '$a'" >&2; exit 2 ;;
    *) want+=("$a") ;;
    esac
done

# The family list: the flat families, the paper's, then the yardstick (not a family).
all_families="tree_interleaved tree_sequential gridstride oneblock tb2 tb4warp matrix persistent_matrix
    diffwarps diffwarps_async axis_rows axis_cols bandwidth"
if [ ${#want[@]} -gt 0 ]; then families="${want[*]}"; else families=$(echo $all_families); fi

say() {   # a line of the report; a TAP comment with --tap
    if [ "$tap" = 1 ]; then printf '# %s\n' "$*"; else printf '%s\n' "$*"; fi
}

missing() {   # why: nvcc or redtune is missing; a skip with --tap
    if [ "$tap" = 1 ]; then
        echo "not ok 1 # SKIP check_templates: $1"
    else
        echo "check_templates: $1" >&2
    fi
    exit 2
}

if [ -z "${NVCC:-}" ]; then
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then NVCC=$c; break; fi
    done
fi
[ -n "${NVCC:-}" ] && [ -x "$NVCC" ] || missing "nvcc not found (set NVCC or CUDA_HOME)"
[ -x "$REDTUNE" ] || missing "$REDTUNE not found (run ninja first, or set REDTUNE)"
# The generator's own view of the families: known ones, and which need a commutative operator.
known=$("$REDTUNE" families 2>&1) || missing "$REDTUNE families failed: $known"

work=$(mktemp -d "${TMPDIR:-/tmp}/check_templates.XXXXXX") || exit 1
if [ "$KEEP" = 1 ]; then
    say "check_templates: sources and logs kept in $work"
else
    trap 'rm -rf "$work"' EXIT
fi

needs_commutative() {   # family -> true when `redtune families` says so
    echo "$known" | awk -v f="$1" '
        $1 == f && $2 ~ /^\(/ { on = 1; next }
        on && /needs a commutative operator:/ { print ($0 ~ /needs a commutative operator: yes/) ? "yes" : "no"; exit }' |
        grep -q yes
}

tsize() {   # type -> bytes
    case $1 in f32|i32|u32) echo 4 ;; f16|bf16) echo 2 ;; i8|u8) echo 1 ;; *) echo 8 ;; esac
}

defaults_of() {   # family -> its @param defaults, NAME=value separated by spaces
    sed -n 's|^// @param \([A-Z_0-9]*\) \(-\{0,1\}[0-9][0-9]*\) .*|\1=\2|p' "$top/templates/$1.cu" |
        tr '\n' ' ' | sed 's/ $//'
    echo
}

# ---------------------------------------------------------------------------------------------
# Parameter sets per family, the first being its default configuration (must not use local
# memory): the flat families' seed-ladder steps and range ends; the paper's families: the
# header's defaults, then the paper's shapes and the ends of the ranges (all legal for 8-byte
# types; the first two also for the 16-byte argmin accumulator).

params_for() {   # family type -> one parameter set per line, NAME=value separated by spaces
    local vmax vmin
    vmax=$((16 / $(tsize "$2")))
    vmin=$(( $(tsize "$2") == 1 ? 2 : 1 ))   # gridstride has no 1-byte load
    case $1 in
    tree_interleaved)
        echo "B=256 DIVERGENT=0"
        echo "B=32 DIVERGENT=1"
        echo "B=1024 DIVERGENT=1"
        ;;
    tree_sequential)
        echo "B=256 R=1 LOAD_ADD=0 WARP=0 UNROLL=0"       # reduce3
        echo "B=128 R=1 LOAD_ADD=1 WARP=0 UNROLL=0"       # reduce4
        echo "B=64 R=1 LOAD_ADD=1 WARP=1 UNROLL=0"        # reduce5
        echo "B=512 R=8 LOAD_ADD=1 WARP=1 UNROLL=1"       # reduce6, many elements per thread
        echo "B=32 R=3 LOAD_ADD=0 WARP=1 UNROLL=1"
        echo "B=1024 R=64 LOAD_ADD=1 WARP=0 UNROLL=1"
        ;;
    gridstride)
        echo "B=256 V=$vmax U=4 G=4"
        echo "B=32 V=$vmin U=1 G=1"
        echo "B=1024 V=$vmax U=8 G=16"
        echo "B=128 V=2 U=3 G=2"
        ;;
    oneblock)
        echo "B=1024 V=$vmax U=1"
        echo "B=64 V=$vmin U=1"
        echo "B=256 V=2 U=3"
        echo "B=512 V=$vmax U=8"
        ;;
    tb2)
        defaults_of tb2
        echo "B=32 R=1 PAD=0 PAD_PERIOD=32"
        echo "B=1024 R=4 PAD=1 PAD_PERIOD=16"
        echo "B=128 R=16 PAD=1 PAD_PERIOD=2"
        echo "B=64 R=32 PAD=1 PAD_PERIOD=1024"
        ;;
    tb4warp)
        defaults_of tb4warp
        echo "B=32 R=1"
        echo "B=1024 R=8"
        echo "B=96 R=7"
        echo "B=512 R=32"
        ;;
    matrix|persistent_matrix)
        defaults_of "$1"
        echo "B=32 H=32 W=1 PAD=0"
        echo "B=1024 H=1024 W=4 PAD=1"
        echo "B=96 H=64 W=33 PAD=1"
        echo "B=512 H=128 W=40 PAD=0"
        ;;
    diffwarps)
        defaults_of diffwarps
        echo "P=1 C=1 W=1 PAD=0"
        echo "P=24 C=8 W=8 PAD=1"
        echo "P=3 C=2 W=40 PAD=0"
        echo "P=31 C=1 W=64 PAD=1"
        ;;
    diffwarps_async)
        defaults_of diffwarps_async
        echo "P=1 C=1 W=8 STAGES=2 BULK=1"
        echo "P=4 C=2 W=32 STAGES=2 BULK=1"
        echo "P=2 C=1 W=64 STAGES=2 BULK=0"
        echo "P=24 C=8 W=8 STAGES=2 BULK=0"
        echo "P=1 C=1 W=16 STAGES=8 BULK=1"
        ;;
    axis_rows)   # V at most 16 bytes; the defaults with V narrowed first
        v4=$((vmax < 4 ? vmax : 4))
        echo "B=256 L=32 V=$v4 U=2 CHUNK=0"
        echo "B=64 L=1 V=$vmax U=8 CHUNK=8192"
        echo "B=1024 L=1024 V=$vmax U=4 CHUNK=131072"
        echo "B=192 L=64 V=1 U=1 CHUNK=0"
        echo "B=512 L=8 V=$vmax U=4 CHUNK=32768"
        echo "B=128 L=128 V=$vmax U=4 CHUNK=65536 IL=1"
        ;;
    axis_cols)   # CV at most 8 and 16 bytes
        cvmax=$((vmax < 8 ? vmax : 8))
        echo "B=256 TX=32 CV=2 U=4 CHUNK=0"
        echo "B=64 TX=1 CV=1 U=8 CHUNK=8192"
        echo "B=1024 TX=1024 CV=$cvmax U=8 CHUNK=131072"
        echo "B=1024 TX=8 CV=$cvmax U=8 CHUNK=0"
        echo "B=128 TX=4 CV=$cvmax U=1 CHUNK=32768"
        echo "B=512 TX=16 CV=$cvmax U=4 CHUNK=512 IL=1"
        echo "B=256 TX=32 CV=$cvmax U=2 CHUNK=4096 IL=2"
        ;;
    bandwidth)
        echo "B=512 U=4 G=4"
        echo "B=32 U=1 G=1"
        echo "B=1024 U=8 G=16"
        ;;
    *)
        defaults_of "$1"
        ;;
    esac
}

# Shapes each family must refuse at compile time (min on f32), with a word of the message.
refused_for() {   # family -> "params|expected text" per line
    case $1 in
    tb2)
        echo "B=1024 R=32|does not fit in 48 KB"
        echo "R=3|R must be a power of two"
        ;;
    tb4warp) echo "B=48|B must be a multiple of 32" ;;
    oneblock)
        echo "B=32|B must be a power of two in 64..1024"
        echo "U=9|U must be in 1..8"
        ;;
    matrix) echo "B=32 H=64|H must be a multiple of 32, at most B" ;;
    persistent_matrix) echo "H=96 W=256|at most 64 loads per thread" ;;
    diffwarps) echo "P=30 C=3|P + C at most 32" ;;
    axis_rows)
        echo "L=48|L must be 1, 2, 4, 8, 16, 32 or a multiple of 32 dividing B"
        echo "V=8|a vector is at most 16 bytes"
        echo "IL=2|IL must be 0 or 1"
        ;;
    axis_cols)
        echo "TX=3|TX must be a power of two dividing B"
        echo "CV=8|a vector is at most 16 bytes"
        echo "IL=3|IL must be 0, 1 or 2"
        ;;
    diffwarps_async)
        echo "W=12|multiple of 32 bytes"
        echo "STAGES=1|STAGES must be in 2..8"
        ;;
    esac
}

ops="sum prod min max"
types="f32 f64 i32 u32 i64 u64"
# --quick: every operator and every type at least once, floats and integers for each operator.
quick_pairs="sum/f32 prod/f64 min/f32 max/f64 min/i32 max/u32 sum/i64 prod/u64"
# The new types and operators (docs/types.md), at each family's defaults: the full matrix runs
# every pair optype defines through every family; --quick the pairs below through a few
# families (every plan kind), each new type and fused operator at least once.
new_ops="amax asum sumsq norm2 mean var_mean var_mean_sample std_mean std_mean_sample"
new_types="f16 bf16 i8 u8"
quick_new_pairs="sum/bf16 amax/f16 norm2/bf16 mean/i8 var_mean_sample/f16 std_mean/f64 min/u8 argmax/i8 asum/f32 sumsq/f16 var_mean/bf16 mean/u8 prod/i8 std_mean_sample/f32"
quick_new_families="gridstride oneblock tree_sequential seg_lb seg_per axis_rows axis_cols"
defined_pair() {   # op type -> status 0 when optype defines it (float-only operators)
    case $1 in
    amax|asum|sumsq|norm2|var_mean*|std_mean*) case $2 in f*|bf16) return 0 ;; *) return 1 ;; esac ;;
    esac
    return 0
}

# ---------------------------------------------------------------------------------------------
# Generate the units: NNNN.desc ("family what params"), NNNN.expect ("ok", "fail:TEXT" (nvcc
# must refuse with TEXT), "emitfail:TEXT" (redtune emit must refuse with TEXT)), NNNN.fam, and
# NNNN.cu to compile, or NNNN.rc + NNNN.log when nothing is left to compile.

n=0
next_id() { id=$(printf '%04d' "$n"); n=$((n + 1)); }

note_unit() {   # family desc params expect
    echo "$1 $2 $3" >"$work/$id.desc"
    echo "$4" >"$work/$id.expect"
    echo "$1" >"$work/$id.fam"
}

unit_emit() {   # family desc params expect [emit args...]: a unit from redtune emit
    local f=$1 desc=$2 params=$3 expect=$4
    shift 4
    next_id
    note_unit "$f" "$desc" "$params" "$expect"
    # shellcheck disable=SC2086
    if ! (cd "$top" && "$REDTUNE" emit "$f" $params "$@") >"$work/$id.cu" 2>"$work/$id.log"; then
        rm -f "$work/$id.cu"
        echo emit >"$work/$id.rc"
    fi
}

unit_refused_emit() {   # family: redtune emit must refuse the non-commutative operator
    next_id
    note_unit "$1" "affine/u64" "" "emitfail:needs a commutative operator"
    (cd "$top" && "$REDTUNE" emit "$1" --op-file lua/ops/affine.lua) >/dev/null 2>"$work/$id.log"
    echo $? >"$work/$id.rc"
}

unit_template() {   # file desc params: the template alone, its parameters as defines
    next_id
    note_unit "$1" "$2" "$3" ok
    {
        for p in $3; do echo "#define RT_${p%%=*} ${p#*=}"; done
        echo "#line 1 \"templates/$1.cu\""
        cat "$top/templates/$1.cu"
    } >"$work/$id.cu"
}

for f in $families; do
    if [ "$f" = bandwidth ]; then
        unit_template bandwidth standalone ""
        while read -r ps; do
            unit_template bandwidth params "$ps"
        done < <(params_for bandwidth f32)
        continue
    fi
    if ! echo "$known" | grep -q "^$f  ("; then
        next_id
        note_unit "$f" "family" "" ok
        echo "redtune families does not list '$f'" >"$work/$id.log"
        echo unknown >"$work/$id.rc"
        continue
    fi
    unit_template "$f" standalone ""
    for op in $ops; do
        for ty in $types; do
            first=1
            while read -r ps; do
                if [ "$quick" = 1 ]; then
                    case " $quick_pairs " in
                    *" $op/$ty "*) ;;
                    *) continue ;;
                    esac
                    # Defaults on the quick pairs, every set on min/f32.
                    if [ "$first" = 0 ] && [ "$op/$ty" != min/f32 ]; then continue; fi
                fi
                first=0
                unit_emit "$f" "$op/$ty" "$ps" ok --op "$op" --type "$ty"
            done < <(params_for "$f" "$ty")
        done
    done
    while read -r ps; do
        unit_emit "$f" "argmin/f32" "$ps" ok --op argmin --type f32
    done < <(params_for "$f" f32 | head -n $([ "$quick" = 1 ] && echo 1 || echo 2))
    if [ "$quick" = 1 ]; then
        case " $quick_new_families " in
        *" $f "*)
            # half of the pairs on the multipass and offsets families, all on the others
            k=0
            for pair in $quick_new_pairs; do
                k=$((k + 1))
                case $f in tree_sequential|seg_per) [ $((k % 2)) = 0 ] && continue ;; esac
                unit_emit "$f" "$pair" "$(params_for "$f" "${pair#*/}" | head -n 1)" ok \
                    --op "${pair%/*}" --type "${pair#*/}"
            done ;;
        esac
    else
        for op in $ops argmin argmax $new_ops; do
            for ty in $types $new_types; do
                case " $ops argmin argmax " in *" $op "*) case " $types " in *" $ty "*) continue ;; esac ;; esac
                defined_pair "$op" "$ty" || continue
                unit_emit "$f" "$op/$ty" "$(params_for "$f" "$ty" | head -n 1)" ok --op "$op" --type "$ty"
            done
        done
    fi
    if needs_commutative "$f"; then
        unit_refused_emit "$f"
        # The template's own guard: the generator's min/f32 glue, said to be non-commutative.
        unit_emit "$f" "noncommutative" "$(params_for "$f" f32 | head -n 1)" \
            "fail:needs a commutative operator" --op min --type f32
        [ -f "$work/$id.cu" ] && sed -i 's/^#define RT_COMMUTATIVE 1$/#define RT_COMMUTATIVE 0/' "$work/$id.cu"
    else
        while read -r ps; do
            case "$f $ps " in
            axis_*" IL=1 "* | axis_*" IL=2 "*)   # interleaved rows: the template refuses the operator
                # (seg_mark's IL, two halves of a thread's walk, keeps the order)
                unit_emit "$f" "affine/u64" "$ps" "fail:needs a commutative operator" \
                    --op-file lua/ops/affine.lua ;;
            *) unit_emit "$f" "affine/u64" "$ps" ok --op-file lua/ops/affine.lua ;;
            esac
        done < <(params_for "$f" u64 | head -n $([ "$quick" = 1 ] && echo 1 || echo 99))
    fi
    while IFS='|' read -r ps text; do
        unit_emit "$f" "refused" "$ps" "fail:$text" --op min --type f32
    done < <(refused_for "$f")
done

# ---------------------------------------------------------------------------------------------
# Compile, JOBS at a time; one nvcc run per unit covers every architecture. -cubin: device code
# only, as NVRTC compiles it.

archflags=""
set -- $ARCHS
if [ $# = 1 ]; then
    archflags="-arch=$1"
else
    for a in "$@"; do archflags="$archflags -gencode arch=compute_${a#sm_},code=$a"; done
fi

compile_one() {   # NNNN
    local id=$1
    "$NVCC" $archflags -I"$top/templates" -cubin -x cu -Werror all-warnings --resource-usage \
        -o "$work/$id.cubin" "$work/$id.cu" >"$work/$id.log" 2>&1
    echo $? >"$work/$id.rc"
    rm -f "$work/$id.cubin"
}
export -f compile_one
export NVCC work archflags top   # top: templates/standalone.cuh for the standalone units

ls "$work" | sed -n 's/^\([0-9]*\)\.cu$/\1/p' | xargs -r -P "$JOBS" -I{} bash -c 'compile_one {}'

# ---------------------------------------------------------------------------------------------
# Judge and report.

regs_of() {   # log [arch] -> "kernel:regs ..." for that arch, or "arch/kernel:regs ..." for all
    awk -v want="${2:-}" '
        /Compiling entry function/ { k = $7; a = $NF; gsub(/\047/, "", k); gsub(/\047/, "", a) }
        /Used [0-9]+ registers/ { if (want == "" || a == want) for (i = 1; i <= NF; i++) if ($i == "Used") print (want == "" ? a "/" : "") k ":" $(i + 1) }' "$1" |
        sort -u | tr '\n' ' ' | sed 's/ $//'
}

smem_of() {   # log arch -> the largest static shared memory of a kernel for that arch, bytes
    awk -v want="$2" '
        /Compiling entry function/ { a = $NF; gsub(/\047/, "", a) }
        /bytes smem/ { if (a == want) for (i = 2; i <= NF; i++) if ($i == "smem" || $i == "smem,") if ($(i - 2) + 0 > m) m = $(i - 2) + 0 }
        END { print m + 0 }' "$1"
}

local_memory() {   # log -> true when a kernel has a stack frame or spills
    grep -E 'bytes stack frame|spill' "$1" | grep -qE '(^|[^0-9])[1-9][0-9]* bytes'
}

passed=0
failed=0
spilled=0
declare -A fam_units fam_failed
for d in "$work"/*.desc; do
    id=$(basename "$d" .desc)
    desc=$(cat "$d")
    fam=$(cat "$work/$id.fam")
    expect=$(cat "$work/$id.expect")
    log="$work/$id.log"
    rc=$(cat "$work/$id.rc" 2>/dev/null || echo 99)
    fam_units[$fam]=$((${fam_units[$fam]:-0} + 1))
    why=""
    case $expect in
    emitfail:*)
        if [ "$rc" = 0 ]; then
            why="redtune emit wrote it, but must refuse (${expect#emitfail:})"
        elif ! grep -qF "${expect#emitfail:}" "$log"; then
            why="redtune emit refused, but not with '${expect#emitfail:}'"
        fi
        ;;
    fail:*)
        if [ "$rc" = emit ]; then
            why="redtune emit failed"
        elif [ "$rc" = 0 ]; then
            why="compiled, but must be refused (${expect#fail:})"
        elif ! grep -qF "${expect#fail:}" "$log"; then
            why="refused, but not with '${expect#fail:}'"
        fi
        ;;
    *)
        if [ "$rc" = emit ]; then
            why="redtune emit failed"
        elif [ "$rc" = unknown ]; then
            why="unknown family"
        elif [ "$rc" != 0 ]; then
            why="nvcc exit $rc"
        elif grep -qi 'warning' "$log"; then
            why="warning"
        elif local_memory "$log"; then
            # Register-starved corners (B=1024 with eight 16-byte loads of 64-bit values, 32
            # registers to keep two blocks per SM) may spill a word outside the loop: noted.
            # The first parameter set of each family, its defaults, must not.
            set -- $desc
            first=$(params_for "$1" "${2#*/}" 2>/dev/null | head -n 1)
            shift 2
            if [ "$*" = "$first" ] || [ -z "$*" ]; then
                why="local memory (stack frame or spills) in a default configuration"
            else
                spilled=$((spilled + 1))
                say "note: local memory: $desc: $(grep -E 'spill|stack' "$log" | grep -E '[1-9][0-9]* bytes' | sed 's/^ *//' | sort -u | tr '\n' ' ')"
            fi
        fi
        ;;
    esac
    if [ -n "$why" ]; then
        failed=$((failed + 1))
        fam_failed[$fam]=$((${fam_failed[$fam]:-0} + 1))
        say "FAIL $desc: $why"
        sed 's/^/#    /' "$log" | if [ "$tap" = 1 ]; then cat; else sed 's/^#//'; fi
    else
        passed=$((passed + 1))
        if [ "$VERBOSE" = 1 ]; then
            case $expect in
            *fail:*) say "ok   $desc  (refused)" ;;
            *) say "ok   $desc  $(regs_of "$log")" ;;
            esac
        fi
    fi
done

if [ "$tap" = 0 ] || [ "$VERBOSE" = 1 ]; then
    say "registers and static shared memory for min on f32 at the defaults (the yardstick: alone):"
    for arch in $ARCHS; do
        for f in $families; do
            if [ "$f" = bandwidth ]; then
                first="" what="$f standalone "
            else
                first=$(params_for "$f" f32 | head -n 1) what="$f min/f32 $first"
            fi
            for d in "$work"/*.desc; do
                id=$(basename "$d" .desc)
                if [ "$(cat "$d")" = "$what" ]; then
                    say "  $arch $f (${first:-defaults}): $(regs_of "$work/$id.log" "$arch"), $(smem_of "$work/$id.log" "$arch") B smem"
                    break
                fi
            done
        done
    done
fi

if [ "$tap" = 1 ]; then
    t=0
    for f in $families; do
        t=$((t + 1))
        if [ "${fam_failed[$f]:-0}" = 0 ]; then
            echo "ok $t - check_templates $f: ${fam_units[$f]:-0} units for $ARCHS"
        else
            echo "not ok $t - check_templates $f: ${fam_failed[$f]} of ${fam_units[$f]} units failed"
        fi
    done
fi
say "check_templates: $n translation units ($([ "$quick" = 1 ] && echo quick || echo full) matrix) for $ARCHS, $spilled with local memory noted"
say "check_templates: $passed passed, $failed failed"
[ "$failed" = 0 ]
