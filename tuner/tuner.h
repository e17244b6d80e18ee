/*
 * tuner.h - the redtune program's commands and the candidate set they share.
 */
#ifndef RT_TUNER_H
#define RT_TUNER_H

#include "../runtime/codegen.h"
#include "../runtime/device.h"
#include "../runtime/err.h"
#include "../runtime/family.h"
#include "../runtime/hash.h"
#include "../runtime/nvrtc.h"
#include "ship.h"
#include "store_tune.h"
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

/* 1 when 'name' is one of the comma-separated 'list'. */
int family_listed(const char *list, const char *name);
void cands_free(cand *c, int n);

/* Compile every candidate that has no CUBIN yet for 'arch' on 'jobs' threads. With a store,
 * CUBINs already stored (same hash, arch and NVRTC version) are taken from it and the new
 * ones are stored. Sets *compiled and *failed (failures also in each cand's rc/err). */
int cands_compile(cand *c, int n, const char *arch, int jobs, store *s, int *compiled,
                  int *failed, rt_err *e);

/* A user operator's reference unit (codegen_emit_user_check) compiled for 'arch': the check
 * that its identity and combine compile, before anything else is compiled or stored. On
 * failure RT_ENVRTC "FILE: operator 'NAME' does not compile for ARCH" and NVRTC's log, whose
 * positions point into the operator file. */
int cands_compile_reference(const opfile *user, const char *arch, nvrtc_output *out, rt_err *e);

/* A plausible device for an architecture with no GPU at hand ("sm_90" -> H100-like), for
 * expanding spaces in `redtune compile --arch`. RT_EINVAL for a malformed arch. */
int device_for_arch(const char *arch, rt_device *d, rt_err *e);

/* Read a whole file; *text malloc'd and NUL-terminated. */
int read_file(const char *path, char **text, size_t *len, rt_err *e);

#define TUNE_MAX_PROFILES 8

typedef struct tune_opts {
    int device;
    rt_op op;
    rt_type type;
    const opfile *user;       /* a user-defined operator (--op-file): op and type unused */
    const char *families;     /* --family: comma-separated families to keep; NULL: all */
    const long long *sizes;
    int nsizes;
    const char *space_path;   /* NULL: the embedded default space */
    const char *db_path;
    int hot;
    int jobs;
    int verbose;
    int deterministic;        /* only families declared @deterministic yes */
    unsigned long long seed;
    const char *cmdline;
    const char *self_exe;     /* the program to exec as the worker */
    int layout;               /* SEG_LAYOUT_FLAT, _KEYS, _OFFSETS (segdata.h) */
    int profiles[TUNE_MAX_PROFILES];   /* segmented: the segment profiles to tune */
    int nprofiles;
    int off64;                /* segmented offsets: 64-bit */
} tune_opts;

/* The operator's name, the type and whether the operator commutes, for the case of 'o'. */
void tune_case(const tune_opts *o, const char **op, rt_type *type, int *commutes);

/* `redtune --op ...`: tune, store, print the table. */
int tune_run(const tune_opts *o, rt_err *e);



/* The other commands; each prints to stdout and returns RT_OK or an RT_E* code with 'e' set. */
int cmd_emit(const rt_config *c, rt_op op, rt_type type, const opfile *user, rt_err *e);
int cmd_families(void);
/* Compile every config of the space for 'arch'; with 'db' (not NULL) the kernels and their
 * CUBINs are stored there too (already stored ones are reused), as a tuning run stores them:
 * how a database gets CUBINs of today's units for its winners (tools/refresh_shipped.sh). */
int cmd_compile(const char *arch, const tune_opts *o, const char *db, rt_err *e);

/* The embedded default space for a layout: default.lua (flat) or segmented.lua, with its
 * name for messages. */
const char *space_for_layout(int layout, const char **name);

/* Force the layout parameters of a segmented config (LAYOUT, OFF64). */
void config_force_layout(rt_config *c, int layout, int off64);
/* *refused is set when the database itself was refused (missing, not redtune's, corrupt,
 * newer): RT_EDB from store_open. */
int cmd_best(const char *db_path, const char *device_match, const char *op, const char *type,
             long long n, int *refused, rt_err *e);

/* export, merge, dump, load (runtime/store.h's store_export ...): each prints what it wrote;
 * st->refused names an input that was refused. dump writes to stdout when 'out' is NULL. */
int cmd_export(const char *db, const char *const *match, int nmatch, int with_measurements,
               const char *out, int force, store_ship_stats *st, rt_err *e);
int cmd_merge(const char *const *in, int nin, const char *out, int force,
              store_ship_stats *st, rt_err *e);
int cmd_dump(const char *db, const char *out, int force, store_ship_stats *st, rt_err *e);
int cmd_load(const char *const *in, int nin, const char *out, int force,
             store_ship_stats *st, rt_err *e);

/* `redtune reduce`: reduce raw little-endian files on the GPU through libredtune. */
typedef struct reduce_opts {
    rt_op op;                 /* a built-in operator, unless user_op is set */
    const rt_user_op *user_op;   /* --op-file: registered on the context (rt_register_op) */
    rt_type type;
    const char *in;           /* the values (of 'type') */
    const char *keys;         /* u32 keys, one per value; or NULL */
    const char *offsets;      /* i32 (i64 with off64) CSR offsets[0..nseg]; or NULL */
    int off64;
    long long nseg;           /* --nseg; -1 when not given */
    const char *db;           /* NULL: rt_open's search for the default database */
    int device;
    int check;                /* validate the keys or offsets on the host first */
    int explain;              /* print rt_explain's text before the results */
    const char *out;          /* raw results into this file (atomically); NULL: text on stdout */
    int force;                /* replace an existing 'out' (else it is refused) */
} reduce_opts;

/* What a failed cmd_reduce refused, for the exit status. */
#define REDUCE_FAILED 0       /* anything else: a file unreadable, no GPU, the library failed */
#define REDUCE_BAD_DB 1       /* rt_open refused the database (RT_EDB) */
#define REDUCE_BAD_DATA 2     /* the data files: empty, a size that is no whole number of
                               * elements, counts that disagree, or --check found broken rules */

/* Read the files, check them when asked, reduce, write or print the results. RT_OK, or an
 * error with 'e' set and *refused saying which kind. Nothing is written to o->out unless the
 * whole run succeeded. */
int cmd_reduce(const reduce_opts *o, int *refused, rt_err *e);
#endif
