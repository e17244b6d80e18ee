/*
 * glue.c - the operator glue of the prelude (glue.h): identities, combines, lifts, shuffles
 * and finalizes of the built-in operators over every type spec.
 *
 * The 32/64-bit types with the six original operators and their default spec keep the glue
 * they always had (scalar_glue, float_minmax_glue, arg_glue), byte for byte but for the
 * declarations of rt_res_t and RT_FINAL_IN_PLACE. Everything else goes through wide_glue:
 * f16 and bf16 are stored as unsigned short and converted with one instruction (no CUDA
 * header enters a unit), narrow integers widen, and the fused operators map, combine and
 * finalize as docs/types.md describes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glue.h"

/* The identity element of 'op' over 'type', as a CUDA expression. */
static const char *identity(rt_op op, rt_type t)
{
    static const char *const min_id[RT_TYPE_COUNT] = {
        "__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)",
        "2147483647", "0xffffffffu", "9223372036854775807LL", "0xffffffffffffffffULL",
        "__int_as_float(0x7f800000)", "__int_as_float(0x7f800000)", "127", "255u"};
    static const char *const max_id[RT_TYPE_COUNT] = {
        "__int_as_float(0xff800000)", "__longlong_as_double(0xfff0000000000000ULL)",
        "(-2147483647 - 1)", "0u", "(-9223372036854775807LL - 1)", "0ULL",
        "__int_as_float(0xff800000)", "__int_as_float(0xff800000)", "(-128)", "0u"};
    switch (op) {
    case RT_SUM: return "0";
    case RT_PROD: return "1";
    case RT_MIN: case RT_ARGMIN: return min_id[t];
    case RT_MAX: case RT_ARGMAX: return max_id[t];
    default: return NULL;
    }
}

/* The combine body; 'a' holds the lower indices. Integer sums and products go through the
 * unsigned type so that overflow wraps (signed overflow is undefined in C++). Float min/max
 * use fmin/fmax (a NaN is ignored unless every element is NaN) behind the empty marker: see
 * float_minmax_glue. */
static void combine(sbuf *b, rt_op op, rt_type t)
{
    static const char *const utype[RT_TYPE_COUNT] = {
        NULL, NULL, "unsigned int", "unsigned int", "unsigned long long", "unsigned long long",
        NULL, NULL, "unsigned int", "unsigned int"};
    const char *ct = optype_cuda_type(t);
    int fl = optype_is_float(t);
    const char *fsuf = t == RT_F32 ? "f" : "";
    switch (op) {
    case RT_SUM:
    case RT_PROD: {
        char sym = op == RT_SUM ? '+' : '*';
        if (fl)
            sb_printf(b, "return a %c b;", sym);
        else
            sb_printf(b, "return (%s)((%s)a %c (%s)b);", ct, utype[t], sym, utype[t]);
        break;
    }
    case RT_MIN:
        if (fl)
            sb_printf(b, "const rt_acc_t m = fmin%s(a, b); return rt_is_empty(a) ? b : rt_is_empty(b) ? a : m;", fsuf);
        else
            sb_printf(b, "return b < a ? b : a;");
        break;
    case RT_MAX:
        if (fl)
            sb_printf(b, "const rt_acc_t m = fmax%s(a, b); return rt_is_empty(a) ? b : rt_is_empty(b) ? a : m;", fsuf);
        else
            sb_printf(b, "return b > a ? b : a;");
        break;
    default:
        break;
    }
}

static void final_referenced(sbuf *b)
{
    /* referenced in an unevaluated operand: a unit that writes no result (a reference unit)
     * draws no "declared but never referenced" warning */
    sb_printf(b, "static_assert(sizeof(rt_final(rt_identity())) == sizeof(rt_res_t), \"glue\");\n");
}

/* rt_final(acc): the finalize stage, applied by every template exactly where a result is
 * written to the caller's output (never to partials or carries that are combined again). It
 * is the identity here; float min/max map their empty marker to +-inf (float_minmax_glue).
 * RT_FINAL_IS_IDENTITY lets a template skip a pass that would only apply it. */
void glue_final_identity(sbuf *b)
{
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY 1\n#define RT_FINAL_IN_PLACE 1\ntypedef rt_acc_t rt_res_t;\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) { return a; }\n");
    final_referenced(b);
}

/* ---- rt_lift_run: a thread's run of N elements in registers (collectives.cuh's
 * co_lift_run) at less cost per element than N lifts and N - 1 combines. Each gives exactly
 * what the lifts and combines give (var_mean: a result within the same bound, docs/types.md). */

/* The head of an rt_lift_run: N elements x[] whose indices at(m) increase with m. */
static void run_head(sbuf *b)
{
    sb_printf(b, "#define RT_LIFT_RUN 1\n"
                 "template <int N, class At> static __device__ __forceinline__ rt_acc_t "
                 "rt_lift_run(const rt_value_t (&x)[N], At at) {\n");
}

/* A balanced tree over w[0 .. N-1] with the expression 'op' of w[k] and w[k + s]. */
static void run_tree(sbuf *b, const char *op)
{
    sb_printf(b, "#pragma unroll\n    for (int s = 1; s < N; s *= 2)\n"
                 "#pragma unroll\n        for (int k = 0; k + s < N; k += 2 * s)\n"
                 "            w[k] = %s;\n", op);
}

/* argmin/argmax: the best value of the run and its place p in it, by a tree in which the left
 * operand always holds the lower places, so that the right one is taken only when it is
 * strictly better (NaN last: a number beats a NaN): ties keep the lower index, as the
 * combine's total order does. One lift at the end: at(p). 'wide' is the compared type. */
static void arg_run(sbuf *b, rt_op op, const char *wide, int fl, const char *conv)
{
    const char *better = op == RT_ARGMIN ? "<" : ">";
    run_head(b);
    sb_printf(b, "    %s w[N];\n    int p[N];\n"
                 "#pragma unroll\n    for (int k = 0; k < N; k++) { w[k] = %s(x[k]); p[k] = k; }\n"
                 "#pragma unroll\n    for (int s = 1; s < N; s *= 2)\n"
                 "#pragma unroll\n        for (int k = 0; k + s < N; k += 2 * s) {\n", wide, conv);
    if (fl)   /* strictly better, or a number after a NaN; never a NaN: !(r <= l) && r == r */
        sb_printf(b, "            const bool t = !(w[k + s] %s= w[k]) && w[k + s] == w[k + s];\n",
                  op == RT_ARGMIN ? ">" : "<");
    else
        sb_printf(b, "            const bool t = w[k + s] %s w[k];\n", better);
    sb_printf(b, "            w[k] = t ? w[k + s] : w[k];\n            p[k] = t ? p[k + s] : p[k];\n"
                 "        }\n    rt_acc_t r;\n    r.v = w[0];\n    r.i = (long long)at(p[0]);\n"
                 "    return r;\n}\n");
}

/* argmin / argmax's combine: b when a is the identity (index -1), or when b is an element
 * that comes first in the order (NaN last, then the value, then the lower index); else a.
 * One select of the two instead of a chain of early returns (half the PTX branches of a
 * gridstride kernel): the fixed part of a launch, which cost argmax f32 1.8 us more than
 * sum at every size, lost 0.5 us of it (H100, fortieth session, docs/results.md). 'better'
 * is "<" or ">"; 'fl': floating values (the NaN rule). */
static void arg_combine(sbuf *b, const char *better, int fl)
{
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) {\n");
    if (fl)
        sb_printf(b, "    const bool an = a.v != a.v, bn = b.v != b.v;\n"
                     "    const bool first = an != bn ? an : !an && b.v != a.v ? b.v %s a.v : b.i < a.i;\n",
                  better);
    else
        sb_printf(b, "    const bool first = b.v != a.v ? b.v %s a.v : b.i < a.i;\n", better);
    sb_printf(b, "    return a.i < 0 || (b.i >= 0 && first) ? b : a;\n}\n");
}

/* argmin/argmax over a 32-bit compared type (f32, i32, u32, and the narrow types widened to
 * them): rt_warp_reduce, every lane's accumulator of the warp combined, in every lane, for
 * the collectives' 32-lane trees (templates/collectives.cuh) - three of the warp's integer
 * reductions (redux.sync, sm_80 and later) and a ballot where the tree has five levels of a
 * three-shuffle exchange and the combine. The combine's total order (a number before a NaN,
 * then the value, then the lower index; the identity, index -1, last) as a key: a 32-bit
 * integer, greater is better, NaN and the identity at INT_MIN (±0 one key, as they compare
 * equal), then the lowest index as unsigned (the identity's -1 is the highest). The order is
 * total, so every tree gives the same winner, and so does this: the ordered trees may use it
 * too. 'cmp' is the compared type; 'better' "<" (argmin) or ">". */
static void arg_warp_select(sbuf *b, rt_type cmp, const char *better)
{
    if (optype_size(cmp) != 4)
        return;   /* the 64-bit types keep the trees */
    const char *key;
    if (cmp == RT_F32)   /* the bits of a float, ordered as signed integers; -0 as +0 */
        key = "const float x = a.v == 0.0f ? 0.0f : (float)a.v;\n"
              "    const int bits = __float_as_int(x);\n"
              "    const int k = bits >= 0 ? bits : bits ^ 0x7fffffff;\n"
              "    const bool worst = a.i < 0 || a.v != a.v;\n";
    else if (cmp == RT_U32)
        key = "const int k = (int)((unsigned int)a.v ^ 0x80000000u);\n"
              "    const bool worst = a.i < 0;\n";
    else
        key = "const int k = (int)a.v;\n    const bool worst = a.i < 0;\n";
    sb_printf(b, "#if __CUDA_ARCH__ >= 800\n#define RT_WARP_REDUCE 1\n"
                 "static __device__ __forceinline__ rt_acc_t rt_warp_reduce(rt_acc_t a) {\n"
                 "    %s"
                 "    const int key = worst ? (int)0x80000000u : %s;\n"
                 "    const int kb = __reduce_max_sync(0xffffffffu, key);\n"
                 "    const unsigned long long i = (unsigned long long)a.i;\n"
                 "    const unsigned int hi = key == kb ? (unsigned int)(i >> 32) : 0xffffffffu;\n"
                 "    const unsigned int mh = __reduce_min_sync(0xffffffffu, hi);\n"
                 "    const unsigned int lo = key == kb && hi == mh ? (unsigned int)i : 0xffffffffu;\n"
                 "    const unsigned int ml = __reduce_min_sync(0xffffffffu, lo);\n"
                 "    const unsigned int w = __ballot_sync(0xffffffffu, key == kb && hi == mh && lo == ml);\n"
                 "    return rt_shfl(a, __ffs(w) - 1);\n}\n"
                 /* Referenced in an unevaluated operand: a family without the collectives' 32-lane
                  * trees draws no "declared but never referenced". */
                 "static_assert(sizeof(rt_warp_reduce(rt_identity())) == sizeof(rt_acc_t), \"glue\");\n"
                 "#endif\n",
              key, *better == '>' ? "k" : "~k");
}

/* sum, min and max in a 32-bit integer accumulator (i32 and u32, and the i8 and u8 elements
 * widened to them): rt_warp_reduce as for argmin/argmax (arg_warp_select), one of the warp's
 * integer reductions (redux.sync, sm_80 and later) where the collectives' 32-lane trees take
 * five shuffles and five combines. Sums wrap as the combine's do (the unsigned reduction);
 * every order gives the same result, so the ordered trees may use it too. 'cmp' is the
 * combine (RT_SUM for every sum-like operator), 'a' the accumulator's type: nothing is
 * emitted for another type (the 64-bit and float accumulators keep the trees). */
static void int_warp_reduce(sbuf *b, rt_op cmp, rt_type a)
{
    if (a != RT_I32 && a != RT_U32)
        return;
    const char *fn = cmp == RT_MIN ? "__reduce_min_sync" : cmp == RT_MAX ? "__reduce_max_sync"
                                                                          : "__reduce_add_sync";
    const char *ct = cmp == RT_SUM || a == RT_U32 ? "unsigned int" : "int";
    sb_printf(b, "#if __CUDA_ARCH__ >= 800\n#define RT_WARP_REDUCE 1\n"
                 "static __device__ __forceinline__ rt_acc_t rt_warp_reduce(rt_acc_t a) "
                 "{ return (rt_acc_t)%s(0xffffffffu, (%s)a); }\n"
                 "static_assert(sizeof(rt_warp_reduce(rt_identity())) == sizeof(rt_acc_t), \"glue\");\n"
                 "#endif\n", fn, ct);
}

/* argmin/argmax: the accumulator is {value, index}; index -1 marks the empty accumulator
 * (the identity). Elements are ordered by (NaN last, value, index), a total order, so the
 * combine is associative and commutative and every tree gives the same winner: the least
 * (greatest) value at the lowest index, NaN only when nothing else is there. */
static void arg_glue(sbuf *b, rt_op op, rt_type t)
{
    const char *better = op == RT_ARGMIN ? "<" : ">";
    sb_printf(b, "struct __align__(8) rt_acc_t { rt_value_t v; long long i; };\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ rt_acc_t r; r.v = (rt_value_t)(%s); r.i = -1; return r; }\n", identity(op, t));
    arg_combine(b, better, optype_is_float(t));
    glue_final_identity(b);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ rt_acc_t r; r.v = v; r.i = (long long)i; return r; }\n");
    arg_run(b, op, "rt_value_t", optype_is_float(t), "");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) "
                 "{ a.v = __shfl_down_sync(0xffffffffu, a.v, d); a.i = __shfl_down_sync(0xffffffffu, a.i, d); "
                 "return a; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) "
                 "{ a.v = __shfl_up_sync(0xffffffffu, a.v, d); a.i = __shfl_up_sync(0xffffffffu, a.i, d); "
                 "return a; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) "
                 "{ a.v = __shfl_sync(0xffffffffu, a.v, lane); a.i = __shfl_sync(0xffffffffu, a.i, lane); "
                 "return a; }\n");    /* Not every template shuffles up or by lane: referenced here in an unevaluated operand,
     * they draw no "declared but never referenced" warning. */
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
    arg_warp_select(b, t, better);
}

/* The lift of an element into the accumulator and the warp shuffles of a scalar accumulator.
 * With canon_nan (float min/max) an element that is NaN enters as the canonical NaN, so that
 * no element can forge the empty marker (float_minmax_glue). */
void glue_lift_and_shuffle(sbuf *b, const char *canon_nan)
{
    if (canon_nan)
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                     "{ (void)i; return v != v ? %s : v; }\n", canon_nan);
    else
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                     "{ (void)i; return v; }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_down_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_up_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) "
                 "{ return __shfl_sync(0xffffffffu, a, lane); }\n");    /* Not every template shuffles up or by lane: referenced here in an unevaluated operand,
     * they draw no "declared but never referenced" warning. */
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
}

/* The glue of an operator whose accumulator is its element type: identity, combine body,
 * lift, shuffle, rt_final (the identity). */
void glue_scalar(sbuf *b, const char *ct, const char *ident, const char *body)
{
    sb_printf(b, "typedef %s rt_acc_t;\n", ct);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() { return (rt_acc_t)(%s); }\n",
              ident);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { %s }\n",
              body);
    glue_lift_and_shuffle(b, NULL);
    glue_final_identity(b);
}

/* Float min/max. fmin/fmax ignore a NaN, and their identity is +-inf, so with +-inf as the
 * accumulator's identity "no element" and "only NaN" both end as +-inf, while the documented
 * result of an all-NaN input (or segment) is NaN, as fmin and numpy.nanmin give. So the
 * accumulator's identity is a distinct empty marker E, a signalling NaN (f32 0x7fbfffff,
 * f64 0x7ff7ffffffffffff): the hardware makes only quiet NaNs, and the lift turns every NaN
 * element into the canonical quiet NaN, so no element or combine result can equal E. The
 * combine treats E as the identity and never hands it to fmin:
 *     combine(a, b) = is_empty(a) ? b : is_empty(b) ? a : fmin(a, b)
 * which is E adjoined as identity to fmin's monoid, so associativity, commutativity and
 * every tree shape are kept (fmin of two NaNs is NaN). rt_final maps E to +-inf where a
 * result is written to the caller's output (empty input or segment: the identity, as the host
 * writes for n = 0); any other value, NaN included, passes. The cost per element is one
 * integer compare and select more than fmin alone (the lift's NaN test was there before). */
static void float_minmax_glue(sbuf *b, rt_op op, rt_type t, const char *body)
{
    const int f32 = t == RT_F32;
    const char *empty = f32 ? "0x7fbfffffu" : "0x7ff7ffffffffffffULL";
    const char *bits = f32 ? "__float_as_uint(a)" : "(unsigned long long)__double_as_longlong(a)";
    const char *make = f32 ? "__uint_as_float" : "__longlong_as_double";
    const char *cast = f32 ? "" : "(long long)";
    sb_printf(b, "typedef %s rt_acc_t;\n", optype_cuda_type(t));
    sb_printf(b, "#define RT_EMPTY_BITS %s\n", empty);
    sb_printf(b, "static __device__ __forceinline__ bool rt_is_empty(rt_acc_t a) "
                 "{ return %s == RT_EMPTY_BITS; }\n", bits);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ return %s(%sRT_EMPTY_BITS); }\n", make, cast);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) { %s }\n",
              body);
    glue_lift_and_shuffle(b, f32 ? "__uint_as_float(0x7fffffffu)"
                            : "__longlong_as_double(0x7fffffffffffffffLL)");
    /* rt_fold_nz(a, v, i) is rt_combine(a, rt_lift(v, i)) for an accumulator that holds an
     * element already (not E: a fold after its first element, which the lift gives): fmin(a, v)
     * alone. fmin passes over a NaN element, whatever its bits (E's included), unless a is NaN,
     * and fmin of two NaNs is the canonical NaN, so the result is never E and equals the lift
     * and combine's. A template that folds runs from their first element (RT_FOLD_NZ) saves
     * the lift's NaN test and the combine's two marker tests an element. */
    sb_printf(b, "#define RT_FOLD_NZ 1\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_fold_nz(rt_acc_t a, rt_value_t v, "
                 "unsigned long long i) { (void)i; return %s%s(a, v); }\n",
              op == RT_MIN ? "fmin" : "fmax", f32 ? "f" : "");
    sb_printf(b, "static_assert(sizeof(rt_fold_nz(rt_identity(), (rt_value_t)0, 0ull)) == "
                 "sizeof(rt_acc_t), \"glue\");\n");
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY 0\n#define RT_FINAL_IN_PLACE 1\ntypedef rt_acc_t rt_res_t;\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_final(rt_acc_t a) "
                 "{ return rt_is_empty(a) ? (rt_acc_t)(%s) : a; }\n", identity(op, t));
    final_referenced(b);
}

/* ---- the wider model: conversions, fused operators, struct accumulators ---- */

/* Conversions a unit of a half, narrow or re-typed spec may need: f16/bf16 <-> f32 in one
 * instruction (bf16 up is a shift; down rounds to nearest even by hand, so no sm_80 cvt is
 * needed), f64 -> f32 with round-to-odd first when a half is the target (no double
 * rounding: f32 keeps more than the half's precision + 2 bits). Unused ones cost nothing. */
static void conversions(sbuf *b)
{
    sb_printf(b,
        "static __device__ __forceinline__ float rt_h2f(unsigned short h) "
        "{ float f; asm(\"cvt.f32.f16 %%0, %%1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
        "static __device__ __forceinline__ float rt_b2f(unsigned short h) "
        "{ return __uint_as_float((unsigned int)h << 16); }\n"
        "static __device__ __forceinline__ unsigned short rt_f2h(float f) "
        "{ unsigned short h; asm(\"cvt.rn.f16.f32 %%0, %%1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
        "static __device__ __forceinline__ unsigned short rt_f2b(float f) {\n"
        "    unsigned int u = __float_as_uint(f);\n"
        "    if (f != f) return (unsigned short)((u >> 16) | 0x40u);\n"
        "    u += 0x7fffu + ((u >> 16) & 1u);\n"
        "    return (unsigned short)(u >> 16);\n}\n"
        "static __device__ __forceinline__ float rt_d2odd(double d) {\n"
        "    const float r = __double2float_rz(d);\n"
        "    return (double)r == d || r != r ? r : __uint_as_float(__float_as_uint(r) | 1u);\n}\n"
        "static_assert(sizeof(rt_h2f(0)) + sizeof(rt_b2f(0)) + sizeof(rt_f2h(0.0f)) + sizeof(rt_f2b(0.0f)) "
        "+ sizeof(rt_d2odd(0.0)) > 0, \"glue\");\n");
}

/* The CUDA type of an accumulator or result scalar. f16/bf16 results are their bits. */
static const char *scalar_ct(rt_type t) { return optype_cuda_type(t); }

/* rt_in(element) -> A: the element as the accumulator's scalar 'a'. */
static void conv_in(sbuf *b, rt_type elem, rt_type a)
{
    const char *x = elem == RT_F16 ? "rt_h2f(v)" : elem == RT_BF16 ? "rt_b2f(v)" : "v";
    sb_printf(b, "static __device__ __forceinline__ %s rt_in(rt_value_t v) { return (%s)(%s); }\n",
              scalar_ct(a), scalar_ct(a), x);
}

/* rt_out(A) -> R: the accumulator's scalar as the result's; halves round to nearest even,
 * integers wrap. */
static void conv_out(sbuf *b, rt_type a, rt_type r)
{
    const char *body;
    char tmp[128];
    if (r == RT_F16 || r == RT_BF16) {
        snprintf(tmp, sizeof tmp, "%s(%s)", r == RT_F16 ? "rt_f2h" : "rt_f2b",
                 a == RT_F64 ? "rt_d2odd(x)" : "(float)x");
        body = tmp;
    } else {
        snprintf(tmp, sizeof tmp, "(%s)x", scalar_ct(r));
        body = tmp;
    }
    sb_printf(b, "static __device__ __forceinline__ %s rt_out(%s x) { return %s; }\n",
              scalar_ct(r), scalar_ct(a), body);
}

/* Shuffles of a struct accumulator, a 32-bit word at a time. */
static void struct_shuffles(sbuf *b)
{
    static const char *const names[3][2] = {{"rt_shfl_down", "unsigned int d"},
                                            {"rt_shfl_up", "unsigned int d"},
                                            {"rt_shfl", "int d"}};
    static const char *const calls[3] = {"__shfl_down_sync", "__shfl_up_sync", "__shfl_sync"};
    sb_printf(b, "static_assert(sizeof(rt_acc_t) %% 4 == 0, \"glue: accumulator of whole words\");\n");
    for (int k = 0; k < 3; k++)
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t %s(rt_acc_t a, %s) {\n"
                     "    unsigned int w[sizeof(rt_acc_t) / 4];\n    memcpy(w, &a, sizeof a);\n"
                     "#pragma unroll\n"
                     "    for (int k = 0; k < (int)(sizeof(rt_acc_t) / 4); k++) w[k] = %s(0xffffffffu, w[k], d);\n"
                     "    memcpy(&a, w, sizeof a);\n    return a;\n}\n", names[k][0], names[k][1],
                  calls[k]);
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
}

static void scalar_shuffles(sbuf *b)
{
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_down(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_down_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl_up(rt_acc_t a, unsigned int d) "
                 "{ return __shfl_up_sync(0xffffffffu, a, d); }\n");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_shfl(rt_acc_t a, int lane) "
                 "{ return __shfl_sync(0xffffffffu, a, lane); }\n");
    sb_printf(b, "static_assert(sizeof(rt_shfl_up(rt_identity(), 1u)) == sizeof(rt_shfl(rt_identity(), 0)), "
                 "\"glue\");\n");
}

/* For user operators' units (codegen.c): the same text as the built-in operators get. */
void glue_conversions(sbuf *b) { conversions(b); }
void glue_struct_shuffles(sbuf *b) { struct_shuffles(b); }
void glue_scalar_shuffles(sbuf *b) { scalar_shuffles(b); }

/* The flags and the unevaluated reference of rt_final (final_referenced). */
static void final_flags(sbuf *b, int is_identity, int in_place)
{
    sb_printf(b, "#define RT_FINAL_IS_IDENTITY %d\n#define RT_FINAL_IN_PLACE %d\n", is_identity,
              in_place);
}

/* sum, prod, asum, sumsq, norm2 in a scalar accumulator 'a' with result 'r'. */
static void wide_scalar(sbuf *b, rt_op op, const optype_ts *ts)
{
    static const char *const utype[RT_TYPE_COUNT] = {
        NULL, NULL, "unsigned int", "unsigned int", "unsigned long long", "unsigned long long"};
    rt_type a = ts->acc, r = ts->res;
    const char *act = scalar_ct(a);
    int fl = optype_is_float(a);
    sb_printf(b, "typedef %s rt_acc_t;\ntypedef %s rt_res_t;\n", act, scalar_ct(r));
    conv_in(b, ts->elem, a);
    conv_out(b, a, r);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() { return (rt_acc_t)(%s); }\n",
              op == RT_PROD ? "1" : "0");
    char sym = op == RT_PROD ? '*' : '+';
    if (fl)
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                     "{ return a %c b; }\n", sym);
    else
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                     "{ return (%s)((%s)a %c (%s)b); }\n", act, utype[a], sym, utype[a]);
    const char *lift = op == RT_ASUM ? "fabs(rt_in(v))"
                     : op == RT_SUMSQ || op == RT_NORM2 ? "rt_in(v) * rt_in(v)" : "rt_in(v)";
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ (void)i; return %s; }\n", lift);
    scalar_shuffles(b);
    if (op != RT_PROD)
        int_warp_reduce(b, RT_SUM, a);
    int ident = op != RT_NORM2 && r == a;
    final_flags(b, ident, ident);
    sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) { return rt_out(%s); }\n",
              op == RT_NORM2 ? "sqrt(a)" : "a");
    final_referenced(b);
}

/* min, max, amax where the accumulator is wider than the element (f16/bf16 in f32, i8/u8 in
 * 32 bits), and amax of f32/f64. Floats use the empty marker of float_minmax_glue; amax lifts
 * |x| and gives 0 for an empty input. The result is the element type: exact, since the
 * winner is one of the elements. */
static void narrow_minmax(sbuf *b, rt_op op, const optype_ts *ts)
{
    rt_type e = ts->elem;
    int fl = optype_is_float(e);
    rt_type a = !fl ? (optype_is_signed(e) ? RT_I32 : RT_U32) : e == RT_F64 ? RT_F64 : RT_F32;
    sb_printf(b, "typedef %s rt_acc_t;\ntypedef rt_value_t rt_res_t;\n", scalar_ct(a));
    conv_in(b, e, a);
    conv_out(b, a, e);
    rt_op cmp = op == RT_AMAX ? RT_MAX : op;
    if (!fl) {
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() { return (rt_acc_t)(%s); }\n",
                  identity(cmp, e));
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                     "{ return b %c a ? b : a; }\n", cmp == RT_MIN ? '<' : '>');
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                     "{ (void)i; return rt_in(v); }\n");
        scalar_shuffles(b);
        int_warp_reduce(b, cmp, a);
        final_flags(b, 0, 0);
        sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) { return rt_out(a); }\n");
        final_referenced(b);
        return;
    }
    const int f32 = a == RT_F32;
    const char *empty = f32 ? "0x7fbfffffu" : "0x7ff7ffffffffffffULL";
    const char *bits = f32 ? "__float_as_uint(a)" : "(unsigned long long)__double_as_longlong(a)";
    const char *make = f32 ? "__uint_as_float" : "__longlong_as_double";
    const char *cast = f32 ? "" : "(long long)";
    const char *canon = f32 ? "__uint_as_float(0x7fffffffu)" : "__longlong_as_double(0x7fffffffffffffffLL)";
    sb_printf(b, "#define RT_EMPTY_BITS %s\n", empty);
    sb_printf(b, "static __device__ __forceinline__ bool rt_is_empty(rt_acc_t a) "
                 "{ return %s == RT_EMPTY_BITS; }\n", bits);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ return %s(%sRT_EMPTY_BITS); }\n", make, cast);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                 "{ const rt_acc_t m = %s%s(a, b); return rt_is_empty(a) ? b : rt_is_empty(b) ? a : m; }\n",
              cmp == RT_MIN ? "fmin" : "fmax", f32 ? "f" : "");
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ (void)i; const rt_acc_t x = %s; return x != x ? %s : x; }\n",
              op == RT_AMAX ? "fabs(rt_in(v))" : "rt_in(v)", canon);
    /* The run: fmin/fmax of the lifted values (a NaN is passed over unless all are NaN), then
     * the canonical NaN as the lift gives it; no empty marker can arise inside a run. */
    run_head(b);
    sb_printf(b, "    (void)at;\n    rt_acc_t w[N];\n"
                 "#pragma unroll\n    for (int k = 0; k < N; k++) w[k] = %s;\n",
              op == RT_AMAX ? "fabs(rt_in(x[k]))" : "rt_in(x[k])");
    char mm[64];
    snprintf(mm, sizeof mm, "%s%s(w[k], w[k + s])", cmp == RT_MIN ? "fmin" : "fmax", f32 ? "f" : "");
    run_tree(b, mm);
    sb_printf(b, "    return w[0] != w[0] ? %s : w[0];\n}\n", canon);
    scalar_shuffles(b);
    /* amax of f32/f64 finalizes in place: 0 combines again as the identity would (|x| >= 0) */
    int in_place = a == e;
    final_flags(b, 0, in_place);
    sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) "
                 "{ return rt_out(rt_is_empty(a) ? (rt_acc_t)(%s) : a); }\n",
              op == RT_AMAX ? "0" : identity(cmp, e));
    final_referenced(b);
}

/* argmin/argmax of f16, bf16, i8, u8: arg_glue's order over the widened value; the result
 * keeps the element's value at offset 0 and the index at 8. With RT_RESULT_INDEX (any element
 * type; 32/64-bit values compared in their own type) the same accumulator and order, and the
 * result is the index alone: rt_res_t is long long, finalized from the accumulator (not in
 * place: the segmented families keep accumulators and finalize them in a last launch). */
static void narrow_arg(sbuf *b, rt_op op, const optype_ts *ts)
{
    rt_type e = ts->elem;
    int fl = optype_is_float(e), index = optype_index_result(ts->canon);
    rt_type a = optype_size(e) >= 4 ? e : fl ? RT_F32 : optype_is_signed(e) ? RT_I32 : RT_U32;
    const char *better = op == RT_ARGMIN ? "<" : ">";
    sb_printf(b, "struct __align__(8) rt_acc_t { %s v; long long i; };\n", scalar_ct(a));
    if (index)
        sb_printf(b, "typedef long long rt_res_t;\n");
    else
        sb_printf(b, "struct __align__(8) rt_res_t { rt_value_t v; long long i; };\n");
    conv_in(b, e, a);
    if (!index)
        conv_out(b, a, e);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ rt_acc_t r; r.v = (%s)(%s); r.i = -1; return r; }\n", scalar_ct(a),
              identity(op, e));
    arg_combine(b, better, fl);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ rt_acc_t r; r.v = rt_in(v); r.i = (long long)i; return r; }\n");
    arg_run(b, op, scalar_ct(a), fl, "rt_in");
    struct_shuffles(b);
    arg_warp_select(b, a, better);
    final_flags(b, 0, 0);
    if (index)
        sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) { return a.i; }\n");
    else
        sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) "
                     "{ rt_res_t r; r.v = rt_out(a.v); r.i = a.i; return r; }\n");
    final_referenced(b);
}

/* mean: {sum, count}; the result sum / count (0 / 0 = NaN for an empty input). */
static void mean_glue(sbuf *b, const optype_ts *ts)
{
    static const char *const utype[RT_TYPE_COUNT] = {
        NULL, NULL, "unsigned int", "unsigned int", "unsigned long long", "unsigned long long"};
    rt_type a = ts->acc, r = ts->res;
    const char *act = scalar_ct(a);
    sb_printf(b, "struct __align__(8) rt_acc_t { %s s; unsigned long long n; };\n", act);
    sb_printf(b, "typedef %s rt_res_t;\n", scalar_ct(r));
    conv_in(b, ts->elem, a);
    /* the quotient is formed in the accumulator's float type (f64 for integers) */
    rt_type q = optype_is_float(a) ? a : RT_F64;
    conv_out(b, q, r);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ rt_acc_t r; r.s = (%s)0; r.n = 0; return r; }\n", act);
    if (optype_is_float(a))
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                     "{ a.s = a.s + b.s; a.n += b.n; return a; }\n");
    else
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) "
                     "{ a.s = (%s)((%s)a.s + (%s)b.s); a.n += b.n; return a; }\n", act, utype[a],
                  utype[a]);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ (void)i; rt_acc_t r; r.s = rt_in(v); r.n = 1; return r; }\n");
    if (optype_is_float(a)) {   /* the run: its sum by a tree, its count N */
        run_head(b);
        sb_printf(b, "    (void)at;\n    %s w[N];\n"
                     "#pragma unroll\n    for (int k = 0; k < N; k++) w[k] = rt_in(x[k]);\n", act);
        run_tree(b, "w[k] + w[k + s]");
        sb_printf(b, "    rt_acc_t r;\n    r.s = w[0];\n    r.n = N;\n    return r;\n}\n");
    }
    struct_shuffles(b);
    final_flags(b, 0, 0);
    sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) "
                 "{ return rt_out((%s)a.s / (%s)a.n); }\n", scalar_ct(q), scalar_ct(q));
    final_referenced(b);
}

/* var_mean / std_mean: {count, mean, M2} merged as Chan, Golub and LeVeque's pairwise update
 * (docs/types.md gives its error bound): with d = mean_b - mean_a and n = n_a + n_b,
 *     mean = mean_a + d * n_b / n,   M2 = M2_a + M2_b + d^2 * n_a * n_b / n.
 * An element lifts to {1, x, 0}. The result {variance or deviation, mean}: M2 / (n - ddof). */
static void var_glue(sbuf *b, rt_op op, const optype_ts *ts)
{
    rt_type a = ts->acc, r = ts->res;
    const char *act = scalar_ct(a);
    int ddof = op == RT_VAR_MEAN_SAMPLE || op == RT_STD_MEAN_SAMPLE;
    int sd = op == RT_STD_MEAN || op == RT_STD_MEAN_SAMPLE;
    const char *nan = a == RT_F32 ? "__int_as_float(0x7fc00000)"
                                  : "__longlong_as_double(0x7ff8000000000000LL)";
    sb_printf(b, "struct __align__(8) rt_acc_t { unsigned long long n; %s m; %s q; };\n", act, act);
    sb_printf(b, "struct rt_res_t { %s v; %s m; };\n", scalar_ct(r), scalar_ct(r));
    conv_in(b, ts->elem, a);
    conv_out(b, a, r);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_identity() "
                 "{ rt_acc_t r; r.n = 0; r.m = 0; r.q = 0; return r; }\n");
    /* f32: selects, not early returns, for an empty side (as arg_combine), and the fraction
     * n_b / n by the fast division (within 2 ulp; n >= 1 wherever it is used), which has no
     * slow path to branch to: the fixed part of a launch, 2.4 us over sum's, lost 1.4 us of
     * it (H100, fortieth session, docs/results.md; the fast division alone had gained 0.1
     * us, sixth session). f64 keeps the early returns: its IEEE division, computed for
     * every pair, gave axis_rows std_mean f64 a stack frame (tools/check_templates.sh). */
    if (a == RT_F32)
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) {\n"
                     "    rt_acc_t r;\n    r.n = a.n + b.n;\n"
                     "    const float na = (float)a.n, nb = (float)b.n, d = b.m - a.m, "
                     "f = __fdividef(nb, na + nb);\n"
                     "    r.m = a.m + d * f;\n"
                     "    r.q = a.q + b.q + d * d * na * f;\n"
                     "    r = b.n == 0 ? a : r;\n"
                     "    return a.n == 0 ? b : r;\n}\n");
    else
        sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b) {\n"
                     "    if (b.n == 0) return a;\n    if (a.n == 0) return b;\n"
                     "    rt_acc_t r;\n    r.n = a.n + b.n;\n"
                     "    const %s d = b.m - a.m, f = (%s)b.n / (%s)r.n;\n"
                     "    r.m = a.m + d * f;\n"
                     "    r.q = a.q + b.q + d * d * (%s)a.n * f;\n"
                     "    return r;\n}\n", act, act, act, act);
    sb_printf(b, "static __device__ __forceinline__ rt_acc_t rt_lift(rt_value_t v, unsigned long long i) "
                 "{ (void)i; rt_acc_t r; r.n = 1; r.m = rt_in(v); r.q = 0; return r; }\n");
    /* The run: the two-pass algorithm in registers (its mean, then the sum of squared
     * deviations from it), one accumulator {N, mean, M2} merged by the combine: one Chan
     * update per run instead of one per element (docs/types.md). */
    run_head(b);
    sb_printf(b, "    (void)at;\n    %s v[N], w[N];\n"
                 "#pragma unroll\n    for (int k = 0; k < N; k++) { v[k] = rt_in(x[k]); w[k] = v[k]; }\n",
              act);
    run_tree(b, "w[k] + w[k + s]");
    sb_printf(b, "    const %s mean = (N & (N - 1)) == 0 ? w[0] * (%s)(1.0 / N) : w[0] / (%s)N;\n"
                 "#pragma unroll\n    for (int k = 0; k < N; k++) w[k] = (v[k] - mean) * (v[k] - mean);\n",
              act, act, act);
    run_tree(b, "w[k] + w[k + s]");
    sb_printf(b, "    rt_acc_t r;\n    r.n = N;\n    r.m = mean;\n    r.q = w[0];\n    return r;\n}\n");
    struct_shuffles(b);
    final_flags(b, 0, 0);
    sb_printf(b, "static __device__ __forceinline__ rt_res_t rt_final(rt_acc_t a) {\n"
                 "    const %s nan = %s;\n"
                 "    const %s var = a.n > %d ? a.q / (%s)(a.n - %d) : nan;\n"
                 "    rt_res_t r;\n    r.v = rt_out(%s);\n    r.m = rt_out(a.n ? a.m : nan);\n"
                 "    return r;\n}\n", act, nan, act, ddof, act, ddof, sd ? "sqrt(var)" : "var");
    final_referenced(b);
}

void glue_builtin(sbuf *b, rt_op op, const optype_ts *ts)
{
    rt_type t = ts->elem;
    int classic = t <= RT_U64 && op <= RT_ARGMAX && ts->canon == t;
    if (classic) {
        if (optype_is_arg(op)) {
            arg_glue(b, op, t);
            return;
        }
        sbuf body = {0};
        combine(&body, op, t);
        if (optype_is_float(t) && (op == RT_MIN || op == RT_MAX))
            float_minmax_glue(b, op, t, body.s ? body.s : "");
        else
            glue_scalar(b, optype_cuda_type(t), identity(op, t), body.s ? body.s : "");
        if (op == RT_SUM || op == RT_MIN || op == RT_MAX)
            int_warp_reduce(b, op, t);
        free(body.s);
        return;
    }
    conversions(b);
    switch (op) {
    case RT_MIN: case RT_MAX: case RT_AMAX:
        narrow_minmax(b, op, ts);
        break;
    case RT_ARGMIN: case RT_ARGMAX:
        narrow_arg(b, op, ts);
        break;
    case RT_MEAN:
        mean_glue(b, ts);
        break;
    case RT_VAR_MEAN: case RT_VAR_MEAN_SAMPLE: case RT_STD_MEAN: case RT_STD_MEAN_SAMPLE:
        var_glue(b, op, ts);
        break;
    default:
        wide_scalar(b, op, ts);
        break;
    }
}
