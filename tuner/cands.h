/*
 * cands.h - the candidate set of a case: the space expanded and filtered, each config emitted,
 * hashed and compiled (CUBINs reused from and stored into the database).
 */
#ifndef RT_CANDS_H
#define RT_CANDS_H

#include "../runtime/codegen.h"
#include "../runtime/device.h"
#include "../runtime/err.h"
#include "../runtime/family.h"
#include "../runtime/hash.h"
#include "../runtime/nvrtc.h"
#include "../runtime/store.h"
#include "axisdata.h"
#include "opfile.h"

/* One config of a space, ready for the GPU: its generated source, hash and CUBIN. */
typedef struct cand {
    rt_config cfg;
    char params[256];     /* "B=256 V=4 U=4 G=4" */
    char *src;            /* generated unit, malloc'd */
    char hash[RT_HASH_HEX];
    void *cubin;          /* malloc'd; NULL until compiled or found in the database */
    size_t cubin_size;
    char *log;            /* NVRTC log, malloc'd or NULL */
    int compiled;         /* compiled in this process (not taken from the database) */
    int stored;           /* ... and its CUBIN stored (counted) by cands_compile_idx */
    int rc;               /* RT_OK, or the compile error */
    char *err;            /* the compile error message, malloc'd or NULL */
} cand;

/* Emit and hash every config for (op, type), or for a user-defined operator; *out malloc'd,
 * free with cands_free. */
int cands_make(const rt_config *cfgs, int n, rt_op op, rt_type type, cand **out, rt_err *e);
int cands_make_user(const rt_config *cfgs, int n, const rt_user_op *user, cand **out, rt_err *e);

/* Expand the space 'space_path' (NULL: the built-in default) for 'dev' and the case (the
 * operator's name, type, whether it commutes), then keep the configs of the families named in
 * 'families' (comma-separated; NULL: all), and only deterministic families if asked.
 * 'skipped' receives the names of the families left out for want of a commutative operator
 * ("tree_sequential gridstride"). 'layout' (SEG_LAYOUT_*) picks the default space and the
 * families that can run it; segmented configs get LAYOUT and OFF64 set. *cfgs malloc'd. RT_EINVAL saying why when no config is
 * left. */
int cands_expand(const char *space_path, const char *families, int deterministic,
                 const rt_device *dev, const char *op, rt_type type, int commutative,
                 int layout, int off64, rt_config **cfgs, int *n, char *skipped,
                 size_t skipped_len, rt_err *e);

/* An axis run (SEG_LAYOUT_AXIS): the space expanded for each of the nshapes shapes (Lua
 * sees each as case.outer, case.len, case.inner), the union of their configs in first-seen
 * order in *cfgs, and in idx[g] (malloc'd, nidx[g] entries) the indices into *cfgs of shape
 * g's configs, in the order of its expansion. A shape without any config is an error naming
 * it. On failure nothing is left allocated. */
int cands_expand_axis(const char *space_path, const char *families, int deterministic,
                      const rt_device *dev, const char *op, rt_type type, int commutative,
                      const axis_shape *shapes, int nshapes, rt_config **cfgs, int *n,
                      int **idx, int *nidx, char *skipped, size_t skipped_len, rt_err *e);

/* 1 when 'name' is one of the comma-separated 'list'. */
int family_listed(const char *list, const char *name);
void cands_free(cand *c, int n);

/* Compile every candidate that has no CUBIN yet for 'arch' on 'jobs' threads. With a store,
 * CUBINs already stored (same hash, arch and NVRTC version) are taken from it and the new
 * ones are stored. Sets *compiled and *failed (failures also in each cand's rc/err). */
int cands_compile(cand *c, int n, const char *arch, int jobs, store *s, int *compiled,
                  int *failed, rt_err *e);

/* The first half of cands_compile: the CUBINs the store holds for candidates that have none
 * (*reused counts them); nothing is compiled. A run whose strategy picks a share of the space
 * compiles the rest as they are picked (sweep.c). */
int cands_reuse(cand *c, int n, const char *arch, store *s, int *reused, rt_err *e);

/* The second half: compile c[idx[k]] for k < n (idx NULL: c[k]) that have no CUBIN and no
 * failure yet, on 'jobs' threads, and store the new CUBINs; *compiled counts those compiled
 * and stored by this call, *failed the candidates of the list that do not compile. */
int cands_compile_idx(cand *c, const int *idx, int n, const char *arch, int jobs, store *s,
                      int *compiled, int *failed, rt_err *e);

/* "redtune: FAMILY PARAMS does not compile:" and its error, on stderr. */
void cands_say_failed(const cand *c);

/* A user operator's reference unit (codegen_emit_user_check) compiled for 'arch': the check
 * that its identity and combine compile, before anything else is compiled or stored. On
 * failure RT_ENVRTC "FILE: operator 'NAME' does not compile for ARCH" and NVRTC's log, whose
 * positions point into the operator file. */
int cands_compile_reference(const opfile *user, const char *arch, nvrtc_output *out, rt_err *e);

#endif
