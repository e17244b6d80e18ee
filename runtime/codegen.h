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
 * RT_EINVAL when the operator needs commutativity the family lacks, or op/type is unknown, or
 * REDTUNE_LOADS holds neither stream nor keep (codegen_loads). */
int codegen_emit(const rt_config *c, rt_op op, rt_type type, char **src, rt_err *e);

/* How the families load their input, from the environment (docs/templates.md, "Loads"):
 * REDTUNE_LOADS unset, empty or "stream": CODEGEN_LOADS_STREAM, the streaming hint where a
 * family uses it; "keep": CODEGEN_LOADS_KEEP, no hint anywhere (the unit gets
 * `#define RT_LOAD_KEEP 1`, so it is another unit, with its own hash); anything else: -1 with
 * RT_EINVAL in e naming the variable and its value. Read at every emission. */
#define CODEGEN_LOADS_STREAM 0
#define CODEGEN_LOADS_KEEP 1
int codegen_loads(rt_err *e);

/* A user-defined operator: its element (and accumulator) type, its identity as a CUDA
 * expression, the body of `rt_acc_t rt_combine(rt_acc_t a, rt_acc_t b)` where a holds the
 * lower indices, and whether it commutes. A non-commutative operator is never paired with a
 * family that needs commutativity. With 'file' set, the identity and the body are emitted
 * under `#line` directives naming it, so that NVRTC's messages point into the operator file;
 * the file name and lines are then part of the unit (and of its hash). */
typedef struct rt_user_op {
    char name[RT_NAME_MAX];      /* [a-z0-9_]+ */
    rt_type type;
    char identity[256];
    char combine[4096];
    int commutative;
    char file[256];              /* where identity and combine were written; "" for nowhere */
    int identity_line;           /* their first lines in 'file' (1-based) */
    int combine_line;
    /* Optional, "" for the default (docs/ops.md); a definition that gives none of them is
     * emitted exactly as before they existed. */
    char map[4096];              /* body of rt_acc_t rt_lift(rt_value_t x, unsigned long long
                                    i); default: the element itself */
    char acc[512];               /* the accumulator: f32 f64 i32 u32 i64 u64, or
                                    "struct { T name; ... }" of at most 32 bytes; default: the
                                    element type */
    char finalize[4096];         /* body of rt_res_t rt_final(rt_acc_t a); default: a */
    char result[512];            /* the result type, as acc; default: the accumulator */
    int map_line, acc_line, finalize_line, result_line;
} rt_user_op;

/* The layout of an accumulator or result type as the host computes it (natural alignment,
 * the struct aligned to 8 bytes, as `struct __align__(8)` on the device). */
#define CODEGEN_FIELDS_MAX 16
#define CODEGEN_STRUCT_MAX 32    /* bytes of the largest accumulator or result */
typedef struct codegen_layout {
    int scalar;                  /* the rt_type of a scalar, -1 for a struct */
    int nfields;
    size_t size;
    struct {
        char name[32];
        const char *ct;          /* the canonical CUDA type ("unsigned int") */
        size_t off, size;
        int is_float;
    } f[CODEGEN_FIELDS_MAX];
} codegen_layout;

/* Read an accumulator or result type (rt_user_op.acc / .result): a type name (f32 f64 i32
 * u32 i64 u64) or `struct { T a; T b, c; }` whose T are float, double, [signed|unsigned]
 * char, short, int, long long (and their `int` spellings), with comments allowed. RT_OK with
 * *l filled, or RT_EINVAL with *line (1-based in text) and why[0..len) saying what is wrong
 * (a struct over CODEGEN_STRUCT_MAX bytes included). */
int codegen_layout_parse(const char *text, codegen_layout *l, int *line, char *why, size_t len);

/* The rules between a user operator's optional fields (docs/ops.md), after each has passed
 * codegen_check_fragment: acc and result parse (codegen_layout_parse); a struct accumulator
 * needs a map; a 1- or 2-byte element (f16, bf16, i8, u8) needs an acc; a result needs a
 * finalize. RT_OK with *acc and *res the layouts (defaults applied), or RT_EINVAL with
 * *field the field at fault ("acc"), *line the line in its text and why[0..len) the rule. */
int codegen_user_fields(const rt_user_op *op, codegen_layout *acc, codegen_layout *res,
                        const char **field, int *line, char *why, size_t len);

/* Check user CUDA text (an operator's identity or combine) before it enters a unit, so that
 * it stays inside the function it is written into and reads nothing from the host: no
 * preprocessor directive ('#', '%:', _Pragma), line splice, trigraph, digraph, raw string,
 * stray backslash or control character; (), [] and {} balanced; comments and literals closed
 * (a literal on its line); with 'expr' (an expression written inside a line) no // comment
 * open at the end. RT_OK, or RT_EINVAL with *line the line in 'text' (1-based) and *why a
 * static phrase ("a preprocessor directive ('#') is not allowed"). */
int codegen_check_fragment(const char *text, int expr, int *line, const char **why);

#define RT_USER_OP_ID 17         /* 16 hex digits and the NUL */

/* The definition's fingerprint: 16 hex digits of the SHA-256 of its type, identity, combine
 * body and commutativity, and of map, acc, finalize and result where given (a definition
 * without them keeps the fingerprint it had before they existed); not its name, file or
 * lines. Every unit of a user operator carries
 * it in a comment, `/\* redtune: user operator NAME, definition ID *\/`. */
void codegen_user_op_id(const rt_user_op *op, char out[RT_USER_OP_ID]);

/* Emit the unit for config 'c' with a user-defined operator; RT_EINVAL when the family needs
 * a commutative operator and 'op' is not, or the name is not [a-z0-9_]+. */
int codegen_emit_user(const rt_config *c, const rt_user_op *op, char **src, rt_err *e);

/* Emit the reference unit of a user-defined operator: its prelude, then three kernels that
 * the tuner's worker checks candidates with (no family; *src malloc'd):
 *   rt_ref_chunks(const rt_value_t *in, u64 n, u64 chunk, rt_acc_t *out): thread t folds
 *       elements [t*chunk, min(n, (t+1)*chunk)) left to right, starting from the first
 *       element (not the identity), into out[t];
 *   rt_ref_fold(const rt_acc_t *in, u64 m, rt_res_t *out): one thread folds in[0..m) left
 *       to right and writes the finalized result rt_final(fold) into out[0];
 *   rt_ref_identity(const rt_value_t *in, u64 n, u64 *first_bad): atomicMin of the index of
 *       each element i whose x = map(in[i], i) has combine(identity, x) or combine(x,
 *       identity) other than x (== for floats, field by field in a struct, so -0 matches 0
 *       and NaN matches NaN);
 *   rt_ref_identity_value(rt_res_t *out): out[0] = rt_final(rt_identity()) (libredtune's
 *       n == 0).
 * The reference is a left fold of left folds: correct for any associative combine, whether it
 * commutes or not. */
int codegen_emit_user_check(const rt_user_op *op, char **src, rt_err *e);

/* Emit a helper template that declares no family (templates/bandwidth.cu) with its
 * parameters as "NAME=value" pairs; *src malloc'd. */
int codegen_emit_helper(const char *file, const char *const *defines, int ndefines,
                        char **src, rt_err *e);

#endif
