/*
 * optype.h - the operator and type model: names, sizes, properties, and the resolution of a
 * type spec (element -> map -> accumulator, combined -> finalize -> result) for an operator.
 *
 * An rt_type argument is a spec (include/redtune.h): the element type in its low byte, an
 * accumulator asked for in bits 8..15 (the type + 1; 0: the operator's default),
 * RT_RESULT_ELEM's bit 16 (the result in the element type) and RT_RESULT_INDEX's bit 17
 * (argmin/argmax: the index alone). optype_resolve turns (op, spec)
 * into the three types and a slot: the small index a context caches decisions under, equal
 * for every spec that resolves alike.
 */
#ifndef RT_OPTYPE_H
#define RT_OPTYPE_H

#include <stddef.h>
#include "../include/redtune.h"

/* Parse a name as written on the command line; -1 when unknown. */
int optype_parse_op(const char *name);
int optype_parse_type(const char *name);

/* The element type of a spec (its low byte); RT_TYPE_COUNT when the spec is malformed (bits
 * other than the three fields, or a field out of range). */
rt_type optype_elem(rt_type spec);

size_t optype_size(rt_type spec);     /* bytes per element of the spec's element type */
int optype_is_float(rt_type spec);    /* f16, bf16, f32, f64 */
int optype_is_signed(rt_type spec);
int optype_is_half(rt_type spec);     /* f16, bf16 */
int optype_commutes(rt_op op);        /* all built-ins commute; user operators may not */

/* 1 for argmin/argmax, whose accumulator is {value, index}. */
int optype_is_arg(rt_op op);

/* 1 for the operators whose accumulator is a struct of its own: mean {sum, count}, var_mean
 * and std_mean {count, mean, M2}. */
int optype_is_struct(rt_op op);

/* 1 for the operators that accumulate in a wider type (sum, prod, asum, sumsq, norm2, mean,
 * var/std_mean); min, max, argmin, argmax and amax keep the element type. */
int optype_widens(rt_op op);

/* The built-in operators of the same cost as 'op', the nearest first, into out[0 .. max) (at
 * most 3); their count. A kernel tuned for one serves the others as well as it serves its
 * own (the same loads, the same accumulator, a combine of one instruction): min, max and
 * amax; argmin and argmax; sum, asum, sumsq and norm2; var_mean, std_mean and their sample
 * forms. prod and mean have none; neither has a user operator. Whether a sibling is defined
 * for a type spec, with the same accumulator and result, is the caller's to check
 * (optype_same_cost). */
int optype_siblings(rt_op op, rt_op *out, int max);

/* 1 when built-in 'sib' resolves 'spec' to the element, accumulator and result types of
 * 'op', with accumulators and results of the same size: 'op' may run a kernel tuned for 'sib'
 * (docs/api.md, "Choosing the kernel"). */
int optype_same_cost(rt_op op, rt_op sib, rt_type spec);

/* The plain types whose winners built-in 'op' of the plain type 'spec' may run when it has
 * none of its own, the nearest first, into out[0 .. max); their count. A type of the same
 * element size for which 'op' resolves to an accumulator and a result of the same sizes (the
 * same loads, vectors, shuffles and shared memory; a combine of the same count of
 * instructions): i64 takes u64's then f64's, u32 i32's then f32's, f64 i64's then u64's, f16
 * bf16's, i8 u8's; the same kind (float or integer) first, then the same signedness. None for
 * a type spec with an accumulator or result of its own choosing (RT_ACC, RT_RESULT_*), nor for
 * an operator a type of that size does not define. */
int optype_type_kin(rt_op op, rt_type spec, rt_type *out, int max);

/* A resolved (op, spec). */
typedef struct optype_ts {
    rt_type elem;     /* the element type */
    rt_type acc;      /* the accumulator's scalar type (of its fields, for mean and var) */
    rt_type res;      /* the result's scalar type */
    rt_type canon;    /* the spec with only what differs from the defaults set */
    int slot;         /* 0 .. OPTYPE_SLOTS - 1 */
} optype_ts;

#define OPTYPE_SLOTS (RT_TYPE_COUNT * 4)

/* Resolve 'spec' for built-in 'op' (or a user operator, op >= RT_OP_USER_FIRST: the plain
 * element type only). 0, or -1 with 'why' saying which pair is not defined ("var_mean of u8
 * is not defined: var_mean takes f16, bf16, f32, f64"). */
int optype_resolve(rt_op op, rt_type spec, optype_ts *ts, char *why, size_t len);

/* Bytes of the accumulator (the partials and carries) and of one result, for a spec that
 * resolves; 0 otherwise. The accumulator: the element size, the wider accumulator's, 16 for
 * argmin/argmax {value, index at 8}, 16 for mean {sum, count}, 16 or 24 for var_mean
 * {count, mean, M2}; min/max/amax of f16/bf16 and i8/u8 accumulate in 4 bytes. The result:
 * the result type's size, 16 for argmin/argmax, twice the result type for var/std_mean. */
size_t optype_acc_size(rt_op op, rt_type spec);
size_t optype_res_size(rt_op op, rt_type spec);

/* The result of an empty input (n == 0) into out[0 .. optype_res_size): the identity of sum,
 * prod, min, max; 0 for amax, asum, sumsq, norm2; NaN for mean and var/std_mean; argmin and
 * argmax the min/max identity and index -1. RT_EINVAL-free: the spec must resolve. */
void optype_empty_result(rt_op op, rt_type spec, void *out);

/* 1 when the spec (a resolved canon, or a caller's) asks for RT_RESULT_INDEX: argmin/argmax
 * give the 8-byte index alone (ts.res is RT_I64). */
int optype_index_result(rt_type spec);

/* The spec as text, for messages and the tuner: "bf16", "bf16 (f64 accumulator)",
 * "bf16 (f32 accumulator, bf16 result)" (the parts that differ from the operator's
 * defaults). */
void optype_spec_text(rt_op op, rt_type spec, char *buf, size_t len);

/* CUDA C++ spelling of the element's storage type ("float", "long long"; f16 and bf16 are
 * "unsigned short": units need no header, see codegen.c). */
const char *optype_cuda_type(rt_type spec);

/* A comma-separated list of the names, for usage messages ("sum, prod, min, max"). */
const char *optype_op_list(void);
const char *optype_type_list(void);

#endif
