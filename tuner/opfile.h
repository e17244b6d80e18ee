/*
 * opfile.h - user-defined operators from a Lua file (`redtune --op-file myop.lua`).
 *
 * The file runs in the same sandbox as a space script (sandbox.h: base, math, string, table;
 * the same instruction and memory limits) and returns a table (docs/ops.md):
 *
 *   return {
 *     name = "affine",              -- [a-z0-9_]+, not a built-in operator's name
 *     type = "u64",                 -- f32 f64 i32 u32 i64 u64 f16 bf16 i8 u8: the element
 *     identity = "0x100000000ULL",  -- a CUDA expression (or a Lua number)
 *     combine = [[ ... ]],          -- the CUDA body of rt_combine(a, b), a the lower indices
 *     commutative = false,          -- whether combine(a, b) == combine(b, a)
 *     sample = function(i, r) ... end,   -- optional: element i of the test data
 *     tolerance = 1e-6,             -- optional, f32/f64 results only: relative error allowed
 *     map = [[ ... ]],              -- optional: the body of rt_lift(x, i), element -> acc
 *     acc = "struct { float s; float c; }",   -- optional: f32 .. u64 or a struct <= 32 bytes
 *     finalize = [[ ... ]],         -- optional: the body of rt_final(a), acc -> result
 *     result = "f32",               -- optional, with finalize: f32 .. u64 or a struct
 *   }
 */
#ifndef RT_OPFILE_H
#define RT_OPFILE_H

#include <stddef.h>
#include <stdint.h>
#include "../runtime/codegen.h"

/* The largest operator file read, in bytes. */
#define OPFILE_MAX_BYTES (1 << 20)

/* The relative tolerances of f32 and f64 results when the file gives none. */
#define OPFILE_TOL_F32 1e-3
#define OPFILE_TOL_F64 1e-9

typedef struct opfile {
    rt_user_op op;        /* with op.file the file's path, and the lines of its fragments */
    char *text;           /* the file, malloc'd: the worker runs its sample function from it */
    size_t len;
    int has_sample;
    double tolerance;     /* f32/f64 results: |got - want| <= tolerance * max(|got|, |want|) */
} opfile;

/* Read and check the operator file 'path'. RT_EIO when it cannot be read; RT_ELUA
 * "path:line: message" for a Lua error (syntax, runtime, limit); RT_EINVAL naming the file and
 * the field for a missing, ill-typed or illegal field (a built-in operator's name included).
 * On error *o is left empty. Free with opfile_free. */
int opfile_load(const char *path, opfile *o, rt_err *e);

/* The same from text already read (len bytes, at most OPFILE_MAX_BYTES, need not end in a
 * NUL): 'chunkname' names it in messages and #line directives. Needs no GPU and no NVRTC;
 * the entry point for fuzzing op files. */
int opfile_parse(const char *text, size_t len, const char *chunkname, opfile *o, rt_err *e);

void opfile_free(opfile *o);

/* Fill buf[0..n) of 'type' with the file's sample function: element i is sample(i, r), r a
 * 64-bit random integer that depends on (seed, i) only. An integer result is taken modulo
 * 2^bits for integer types; floats want a number. Runs on up to 'threads' threads, a sandbox
 * each; the instruction limit counts per call. RT_ELUA "file:line: message" naming the element
 * when the function fails or returns something else. */
int opfile_sample(const char *text, size_t len, const char *chunkname, rt_type type, void *buf,
                  unsigned long long n, uint64_t seed, int threads, rt_err *e);

#endif
