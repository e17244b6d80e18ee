/*
 * optype.c - operators and types: names, sizes and properties.
 */
#include <string.h>
#include "optype.h"

static const char *const op_names[RT_OP_COUNT] = {"sum", "prod", "min", "max", "argmin", "argmax"};
static const char *const type_names[RT_TYPE_COUNT] = {"f32", "f64", "i32", "u32", "i64", "u64"};
static const char *const cuda_types[RT_TYPE_COUNT] = {
    "float", "double", "int", "unsigned int", "long long", "unsigned long long"};
static const size_t sizes[RT_TYPE_COUNT] = {4, 8, 4, 4, 8, 8};

const char *rt_op_name(rt_op op)
{
    return (unsigned)op < RT_OP_COUNT ? op_names[op] : NULL;
}

const char *rt_type_name(rt_type t)
{
    return (unsigned)t < RT_TYPE_COUNT ? type_names[t] : NULL;
}

int optype_parse_op(const char *name)
{
    for (int i = 0; name && i < RT_OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

int optype_parse_type(const char *name)
{
    for (int i = 0; name && i < RT_TYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

size_t optype_size(rt_type t) { return (unsigned)t < RT_TYPE_COUNT ? sizes[t] : 0; }
int optype_is_float(rt_type t) { return t == RT_F32 || t == RT_F64; }
int optype_is_signed(rt_type t) { return t == RT_F32 || t == RT_F64 || t == RT_I32 || t == RT_I64; }
int optype_commutes(rt_op op) { (void)op; return 1; }

const char *optype_cuda_type(rt_type t)
{
    return (unsigned)t < RT_TYPE_COUNT ? cuda_types[t] : NULL;
}

const char *optype_op_list(void) { return "sum, prod, min, max, argmin, argmax"; }

int optype_is_arg(rt_op op) { return op == RT_ARGMIN || op == RT_ARGMAX; }

size_t optype_acc_size(rt_op op, rt_type t)
{
    return optype_is_arg(op) ? 16 : optype_size(t);
}
const char *optype_type_list(void) { return "f32, f64, i32, u32, i64, u64"; }
