/*
 * api.h - libredtune's internals that its tests and bench/ use. Not public: applications
 * include include/redtune.h only, and libredtune.so exports none of these names.
 */
#ifndef RT_API_H
#define RT_API_H

#include <stddef.h>
#include "err.h"
#include "hash.h"
#include "plan.h"

/*
 * The database rt_open(NULL, ...) opens, into path[0..len): 'env' ($REDTUNE_DB) when set and
 * not empty, whether or not it exists; else the first that exists of
 *   1. redtune.db in the working directory,
 *   2. redtune.db in 'moddir' (the directory of libredtune.so, or of the program that links
 *      libredtune.a: build/redtune.db for the build tree's library),
 *   3. 'moddir'/../share/redtune/redtune.db (an installed tree, wherever it was moved),
 *   4. 'datadir'/redtune.db ($prefix/share/redtune/redtune.db of ./configure --prefix).
 * *how says which ("$REDTUNE_DB", "the working directory", ...). RT_EDB naming every place
 * looked at when none exists. moddir may be NULL (steps 2 and 3 skipped).
 */
int api_find_db(const char *env, const char *moddir, const char *datadir, char *path,
                size_t len, const char **how, rt_err *e);

/* The directory of the object that holds libredtune's code (dladdr; /proc/self/exe for a
 * program linked statically); "" when unknown. */
void api_module_dir(char *dir, size_t len);

/*
 * The loaded kernel rt_reduce runs for (op, type, n >= 1), choosing and loading it as
 * rt_reduce would: its launch plan (owned by the context) and its hash. For bench/, which
 * times the same launches without the library around them. Caller has the context's CUDA
 * context current.
 */
struct rt_ctx;
int api_kernel_of(struct rt_ctx *ctx, int op, int type, unsigned long long n,
                  const plan **p, char hash[RT_HASH_HEX], rt_err *e);

/* The pointer checks of every reduction call (api.c; declared in api_int.h too): d_in
 * aligned to the element, d_out to the result (8 for argmin/argmax, else the result's
 * scalar). 'ctx' may be NULL for a built-in operator. For the tests, with no GPU. */
int api_check_pointers(const char *fn, const struct rt_ctx *ctx, rt_op op, rt_type type,
                       const void *d_in, unsigned long long n, const void *d_out, rt_err *e);

/* The argument checks of the axis calls (api_axis.c): outer * inner and outer * len * inner
 * within 64 bits, d_in not NULL with elements, d_out not NULL with outputs, the alignments
 * of api_check_pointers. 'ctx' may be NULL for a built-in operator. For the tests. */
int api_check_axis(const char *fn, const struct rt_ctx *ctx, rt_op op, rt_type type,
                   const void *d_in, unsigned long long outer, unsigned long long len,
                   unsigned long long inner, const void *d_out, rt_err *e);

/* The built-in default of an axis case with nothing tuned: its family and "NAME=V ..."
 * parameters (docs/axis.md, "The library"). Rows (inner == 1) of a commutative operator:
 * axis_rows with 16-byte loads and L from len; else axis_cols with CV and TX from inner,
 * and for short columns (len < 128) fewer row groups and CV bounded by 'acc_size', the bytes
 * of the accumulator (0: the element's). */
void api_axis_builtin(int commutative, size_t elem_size, size_t acc_size,
                      unsigned long long outer, unsigned long long len,
                      unsigned long long inner, char *family, size_t family_len, char *params,
                      size_t params_len);

#endif
