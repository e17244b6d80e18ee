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

/* Emit a helper template that declares no family (templates/bandwidth.cu) with its
 * parameters as "NAME=value" pairs; *src malloc'd. */
int codegen_emit_helper(const char *file, const char *const *defines, int ndefines,
                        char **src, rt_err *e);

#endif
