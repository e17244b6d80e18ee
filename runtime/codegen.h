/*
 * codegen.h - template + config -> one self-contained CUDA translation unit.
 *
 * The unit is a prelude (value and accumulator types, the operator, its identity, the lift of
 * an element into the accumulator, the warp shuffle, and each parameter as a #define), then
 * `#line 1 "templates/<file>.cu"` and the template text. That text is what is hashed, cached,
 * stored and shown by `redtune emit`.
 */
#ifndef RT_CODEGEN_H
#define RT_CODEGEN_H

#include "err.h"
#include "family.h"
#include "hash.h"

/* Emit the unit for config 'c' reducing 'op' over 'type'. *src is malloc'd (caller frees).
 * RT_EINVAL when the operator needs commutativity the family lacks, or op/type is unknown. */
int codegen_emit(const rt_config *c, rt_op op, rt_type type, char **src, rt_err *e);

/* A user-defined operator: its element (and accumulator) type, its identity as a CUDA
 * expression, the body of `rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b)` where a holds the
 * lower indices, and whether it commutes. A non-commutative operator is never paired with a
 * family that needs commutativity. */
typedef struct rt_user_op {
    char name[RT_NAME_MAX];      /* [a-z0-9_]+ */
    rt_type type;
    char identity[256];
    char combine[4096];
    int commutative;
} rt_user_op;

/* Emit the unit for config 'c' with a user-defined operator; RT_EINVAL when the family needs
 * a commutative operator and 'op' is not, or the name is not [a-z0-9_]+. */
int codegen_emit_user(const rt_config *c, const rt_user_op *op, char **src, rt_err *e);

/* Emit a helper template that declares no family (templates/bandwidth.cu) with its
 * parameters as "NAME=value" pairs; *src malloc'd. */
int codegen_emit_helper(const char *file, const char *const *defines, int ndefines,
                        char **src, rt_err *e);

#endif
