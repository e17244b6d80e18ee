#!/usr/bin/env bash
#
# check_templates.sh - compile every kernel template with nvcc, the way the code generator will
# feed it to NVRTC: standalone (the template's own defaults), and behind a generated prelude for
# each operator (sum prod min max) x type (f32 f64 i32 u32 i64 u64) x a few parameter sets,
# plus two struct accumulators (an argmin-like pair; a non-commutative affine map, which the
# families that need a commutative operator must refuse). Fails on any error or warning, and
# on local memory (spills or a stack frame) in a family's default configuration (elsewhere it
# is noted); prints the registers of min on f32.
#
#   tools/check_templates.sh                      sm_90
#   ARCHS="sm_80 sm_90" tools/check_templates.sh  both (one nvcc run per unit, a -gencode each)
#   NVCC=/path/to/nvcc JOBS=8 VERBOSE=1 KEEP=1 tools/check_templates.sh
#
# VERBOSE=1 prints a line per compilation; KEEP=1 keeps the generated sources and logs.
# Exit status: 0 when everything passed, 1 when something failed, 2 when nvcc is missing.

set -u

top=$(cd "$(dirname "$0")/.." && pwd)
ARCHS=${ARCHS:-sm_90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
VERBOSE=${VERBOSE:-0}
KEEP=${KEEP:-0}

if [ -z "${NVCC:-}" ]; then
    for c in "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then NVCC=$c; break; fi
    done
fi
if [ -z "${NVCC:-}" ] || [ ! -x "$NVCC" ]; then
    echo "check_templates: nvcc not found (set NVCC or CUDA_HOME)" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/check_templates.XXXXXX") || exit 1
if [ "$KEEP" = 1 ]; then
    echo "check_templates: sources and logs kept in $work"
else
    trap 'rm -rf "$work"' EXIT
fi

# ---------------------------------------------------------------------------------------------
# The prelude, as the code generator writes it (the contract in docs/templates.md).

ctype() {   # type -> CUDA C++ type
    case $1 in
    f32) echo "float" ;; f64) echo "double" ;; i32) echo "int" ;; u32) echo "unsigned int" ;;
    i64) echo "long long" ;; u64) echo "unsigned long long" ;;
    esac
}

tsize() {   # type -> bytes
    case $1 in f32|i32|u32) echo 4 ;; *) echo 8 ;; esac
}

identity() {   # op type -> the identity's expression (with its comment)
    case $1/$2 in
    sum/f32) echo "0.0f" ;;  sum/f64) echo "0.0" ;;  sum/i32) echo "0" ;;  sum/u32) echo "0u" ;;
    sum/i64) echo "0ll" ;;   sum/u64) echo "0ull" ;;
    prod/f32) echo "1.0f" ;; prod/f64) echo "1.0" ;; prod/i32) echo "1" ;; prod/u32) echo "1u" ;;
    prod/i64) echo "1ll" ;;  prod/u64) echo "1ull" ;;
    min/f32) echo "__int_as_float(0x7f800000); /* +inf */" ;;
    min/f64) echo "__longlong_as_double(0x7ff0000000000000ll); /* +inf */" ;;
    min/i32) echo "2147483647" ;;
    min/u32) echo "0xffffffffu" ;;
    min/i64) echo "9223372036854775807ll" ;;
    min/u64) echo "0xffffffffffffffffull" ;;
    max/f32) echo "__int_as_float((int)0xff800000u); /* -inf */" ;;
    max/f64) echo "__longlong_as_double((long long)0xfff0000000000000ull); /* -inf */" ;;
    max/i32) echo "(-2147483647 - 1)" ;;
    max/u32) echo "0u" ;;
    max/i64) echo "(-9223372036854775807ll - 1)" ;;
    max/u64) echo "0ull" ;;
    esac
}

combine() {   # op type -> the combine's expression of a and b
    case $1/$2 in
    sum/*) echo "a + b" ;;
    prod/*) echo "a * b" ;;
    min/f32) echo "fminf(a, b)" ;; min/f64) echo "fmin(a, b)" ;; min/*) echo "a < b ? a : b" ;;
    max/f32) echo "fmaxf(a, b)" ;; max/f64) echo "fmax(a, b)" ;; max/*) echo "a > b ? a : b" ;;
    esac
}

upper() { echo "$1" | tr '[:lower:]' '[:upper:]'; }

prelude() {   # op type -> the glue, for a built-in operator on a built-in type
    local op=$1 ty=$2 t id semi
    t=$(ctype "$ty")
    id=$(identity "$op" "$ty")
    case $id in *";"*) semi="" ;; *) semi=";" ;; esac
    cat <<EOF
#define RT_PRELUDE 1
#define RT_OP_$(upper "$op") 1
#define RT_TYPE_$(upper "$ty") 1
#define RT_COMMUTATIVE 1
typedef $t rt_value_t;   /* element type in memory */
typedef $t rt_acc_t;     /* accumulator, partials and output type */
static __device__ __forceinline__ rt_acc_t rt_identity() { return $id$semi }
static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { return $(combine "$op" "$ty"); }  /* a: lower indices, b: higher */
static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) { return v; }   /* element i of the input -> accumulator */
static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) { return __shfl_down_sync(0xffffffffu, a, d); }
#define RT_FINAL_IS_IDENTITY 1
static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }   /* accumulator -> the result written to the caller */
EOF
}

# A struct accumulator: the value and index of the minimum, ties to the lower index. It proves
# the templates treat rt_acc_t as opaque (no +, <, volatile copy on it) and pass rt_lift the
# right index type.
prelude_argmin() {
    cat <<'EOF'
#define RT_PRELUDE 1
#define RT_OP_ARGMIN 1
#define RT_TYPE_F32 1
#define RT_COMMUTATIVE 1
typedef float rt_value_t;   /* element type in memory */
typedef struct { float v; unsigned long long i; } rt_acc_t;   /* accumulator, partials and output type */
static __device__ __forceinline__ rt_acc_t rt_identity() { rt_acc_t r = { __int_as_float(0x7f800000), 0xffffffffffffffffull }; return r; }
static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a; }  /* a: lower indices, b: higher */
static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) { rt_acc_t r = { v, i }; return r; }   /* element i of the input -> accumulator */
static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) { a.v = __shfl_down_sync(0xffffffffu, a.v, d); a.i = __shfl_down_sync(0xffffffffu, a.i, d); return a; }
#define RT_FINAL_IS_IDENTITY 1
static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }   /* accumulator -> the result written to the caller */
EOF
}

# A non-commutative operator: composition of affine maps x -> m*x + c, f32 pairs (8 bytes,
# 4-byte aligned). Only the families with @commutative not-required may accept it.
prelude_affine() {
    cat <<'EOF'
#define RT_PRELUDE 1
#define RT_OP_USER 1
#define RT_TYPE_F32 1
#define RT_COMMUTATIVE 0
typedef float rt_value_t;   /* element type in memory */
typedef struct { float m, c; } rt_acc_t;   /* accumulator, partials and output type */
static __device__ __forceinline__ rt_acc_t rt_identity() { rt_acc_t r = { 1.0f, 0.0f }; return r; }
static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { rt_acc_t r = { b.m * a.m, b.m * a.c + b.c }; return r; }  /* a: lower indices, b: higher */
static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) { rt_acc_t r = { v, (float)(i & 7) }; return r; }   /* element i of the input -> accumulator */
static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) { a.m = __shfl_down_sync(0xffffffffu, a.m, d); a.c = __shfl_down_sync(0xffffffffu, a.c, d); return a; }
#define RT_FINAL_IS_IDENTITY 1
static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }   /* accumulator -> the result written to the caller */
EOF
}

# ---------------------------------------------------------------------------------------------
# Parameter sets per family: the seed ladder's steps and the extremes of every range.

params_for() {   # family type -> one parameter set per line, NAME=value separated by spaces
    local vmax
    vmax=$((16 / $(tsize "$2")))
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
        echo "B=32 V=1 U=1 G=1"
        echo "B=1024 V=$vmax U=8 G=16"
        echo "B=128 V=2 U=3 G=2"
        ;;
    bandwidth)
        echo "B=512 U=4 G=4"
        echo "B=32 U=1 G=1"
        echo "B=1024 U=8 G=16"
        ;;
    esac
}

families="tree_interleaved tree_sequential gridstride"
ops="sum prod min max"
types="f32 f64 i32 u32 i64 u64"

# ---------------------------------------------------------------------------------------------
# Generate the translation units: NNNN.cu, NNNN.desc ("template what params"), NNNN.expect.

n=0
emit() {   # template description params expect(ok|fail) glue-function [glue args...]
    local tpl=$1 desc=$2 params=$3 expect=$4 glue=$5
    shift 5
    local id
    id=$(printf '%04d' "$n")
    n=$((n + 1))
    {
        if [ "$glue" != none ]; then "$glue" "$@"; fi
        for p in $params; do echo "#define RT_${p%%=*} ${p#*=}"; done
        echo "#line 1 \"templates/$tpl.cu\""
        cat "$top/templates/$tpl.cu"
    } >"$work/$id.cu"
    echo "$tpl $desc $params" >"$work/$id.desc"
    echo "$expect" >"$work/$id.expect"
}

for f in $families bandwidth; do
    emit "$f" "standalone" "" ok none
done
for f in $families; do
    for op in $ops; do
        for ty in $types; do
            while read -r ps; do
                emit "$f" "$op/$ty" "$ps" ok prelude "$op" "$ty"
            done < <(params_for "$f" "$ty")
        done
    done
    while read -r ps; do
        emit "$f" "argmin/f32" "$ps" ok prelude_argmin
    done < <(params_for "$f" f32 | head -n 2)
    if [ "$f" = tree_interleaved ]; then
        while read -r ps; do
            emit "$f" "affine/f32" "$ps" ok prelude_affine
        done < <(params_for "$f" f32)
    else
        emit "$f" "affine/f32" "$(params_for "$f" f32 | head -n 1)" fail prelude_affine
    fi
done
# The yardstick alone (parameters only), and behind a family's prelude.
while read -r ps; do
    emit bandwidth "params" "$ps" ok none
done < <(params_for bandwidth f32)
emit bandwidth "min/f64" "B=512 U=4 G=4" ok prelude min f64

# ---------------------------------------------------------------------------------------------
# Compile, JOBS at a time; one nvcc run per unit covers every architecture.

archflags=""
set -- $ARCHS
if [ $# = 1 ]; then
    archflags="-arch=$1"
else
    for a in "$@"; do archflags="$archflags -gencode arch=compute_${a#sm_},code=$a"; done
fi

compile_one() {   # NNNN
    local id=$1
    "$NVCC" $archflags -I"$top/templates" -c -x cu -Werror all-warnings --resource-usage \
        -o "$work/$id.o" "$work/$id.cu" >"$work/$id.log" 2>&1
    echo $? >"$work/$id.rc"
    rm -f "$work/$id.o"
}
export -f compile_one
export NVCC work archflags top   # top: templates/standalone.cuh for the standalone units

ls "$work" | sed -n 's/^\([0-9]*\)\.cu$/\1/p' | xargs -P "$JOBS" -I{} bash -c 'compile_one {}'

# ---------------------------------------------------------------------------------------------
# Judge and report.

regs_of() {   # log [arch] -> "kernel:regs ..." for that arch, or "arch/kernel:regs ..." for all
    awk -v want="${2:-}" '
        /Compiling entry function/ { k = $7; a = $NF; gsub(/\047/, "", k); gsub(/\047/, "", a) }
        /Used [0-9]+ registers/ { if (want == "" || a == want) for (i = 1; i <= NF; i++) if ($i == "Used") print (want == "" ? a "/" : "") k ":" $(i + 1) }' "$1" |
        sort -u | tr '\n' ' ' | sed 's/ $//'
}

local_memory() {   # log -> true when a kernel has a stack frame or spills
    grep -E 'bytes stack frame|spill' "$1" | grep -qE '(^|[^0-9])[1-9][0-9]* bytes'
}

passed=0
failed=0
spilled=0
for cu in "$work"/*.cu; do
    id=$(basename "$cu" .cu)
    desc=$(cat "$work/$id.desc")
    expect=$(cat "$work/$id.expect")
    log="$work/$id.log"
    rc=$(cat "$work/$id.rc" 2>/dev/null || echo 99)
    why=""
    if [ "$expect" = fail ]; then
        if [ "$rc" = 0 ]; then
            why="compiled, but must refuse a non-commutative operator"
        elif ! grep -q 'needs a commutative operator' "$log"; then
            why="failed for another reason than the operator"
        fi
    elif [ "$rc" != 0 ]; then
        why="nvcc exit $rc"
    elif grep -qi 'warning' "$log"; then
        why="warning"
    elif local_memory "$log"; then
        # Register-starved corners (B=1024 with eight 16-byte loads of 64-bit values, 32
        # registers to keep two blocks per SM) may spill a word outside the loop: noted. The
        # first parameter set of each family, its defaults, must not.
        set -- $desc
        first=$(params_for "$1" "${2#*/}" 2>/dev/null | head -n 1)
        shift 2
        if [ "$*" = "$first" ] || [ -z "$*" ]; then
            why="local memory (stack frame or spills) in a default configuration"
        else
            spilled=$((spilled + 1))
            echo "note: local memory: $desc: $(grep -E 'spill' "$log" | sed 's/^ *//' | sort -u | tr '\n' ' ')"
        fi
    fi
    if [ -n "$why" ]; then
        failed=$((failed + 1))
        echo "FAIL $desc: $why"
        sed 's/^/    /' "$log"
    else
        passed=$((passed + 1))
        if [ "$VERBOSE" = 1 ]; then
            echo "ok   $desc  $(regs_of "$log")"
        fi
    fi
done

echo "registers for min on f32 (first parameter set of each family), and the yardstick:"
for arch in $ARCHS; do
    for f in $families bandwidth; do
        for cu in "$work"/*.cu; do
            id=$(basename "$cu" .cu)
            set -- $(cat "$work/$id.desc")
            if [ "$1" = "$f" ] && { [ "$2" = min/f32 ] || { [ "$f" = bandwidth ] && [ "$2" = standalone ]; }; }; then
                shift 2
                echo "  $arch $f (${*:-defaults}): $(regs_of "$work/$id.log" "$arch")"
                break
            fi
        done
    done
done

echo "check_templates: $n translation units for $ARCHS, $spilled with local memory noted"
echo "check_templates: $passed passed, $failed failed"
[ "$failed" = 0 ]
