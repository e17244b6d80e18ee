/*
 * optype.h - the operator and type model: names, sizes, properties, and the CUDA C++ glue the
 * code generator puts in front of every template.
 */
#ifndef RT_OPTYPE_H
#define RT_OPTYPE_H

#include <stddef.h>
#include "../include/redtune.h"

/* Parse a name as written on the command line; -1 when unknown. */
int optype_parse_op(const char *name);
int optype_parse_type(const char *name);

size_t optype_size(rt_type t);       /* bytes per element */
int optype_is_float(rt_type t);
int optype_is_signed(rt_type t);
int optype_commutes(rt_op op);       /* all built-ins commute; user operators may not */

/* 1 for argmin/argmax, whose accumulator is {value, index}. */
int optype_is_arg(rt_op op);

/* Bytes of the accumulator, the partials and the result: the element size, or 16 for
 * argmin/argmax (value in the first 8 bytes, index at offset 8). */
size_t optype_acc_size(rt_op op, rt_type t);

/* CUDA C++ spelling of the element type ("float", "long long"). */
const char *optype_cuda_type(rt_type t);

/* A comma-separated list of the names, for usage messages ("sum, prod, min, max"). */
const char *optype_op_list(void);
const char *optype_type_list(void);

#endif
