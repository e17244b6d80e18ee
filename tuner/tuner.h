/*
 * tuner.h - the redtune program's commands (cmds.c, reduce.c, the tuning run of tune.h), for
 * main.c and cli.c. It also brings the candidate set (cands.h) and the space helpers
 * (space.h), which the tests reach through it.
 */
#ifndef RT_TUNER_H
#define RT_TUNER_H

#include "../runtime/err.h"
#include "../runtime/family.h"
#include "../runtime/store.h"
#include "cands.h"
#include "ship.h"
#include "store_tune.h"
#include "opfile.h"
#include "space.h"
#include "tune.h"

/* The other commands; each prints to stdout and returns RT_OK or an RT_E* code with 'e' set. */
int cmd_emit(const rt_config *c, rt_op op, rt_type type, const opfile *user, rt_err *e);
int cmd_families(void);
/* Compile every config of the space for 'arch'; with 'db' (not NULL) the kernels and their
 * CUBINs are stored there too (already stored ones are reused), as a tuning run stores them:
 * how a database gets CUBINs of today's units for its winners (tools/refresh_shipped.sh). */
int cmd_compile(const char *arch, const tune_opts *o, const char *db, rt_err *e);

/* *refused is set when the database itself was refused (missing, not redtune's, corrupt,
 * newer): RT_EDB from store_open. */
int cmd_best(const char *db_path, const char *device_match, const char *op, const char *type,
             const char *acc, long long n, int *refused, rt_err *e);

/* export, merge, dump, load (tuner/ship.h's store_export ...): each prints what it wrote;
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
    int axis;                 /* --shape given: reduce along an axis (rt_reduce_axis) */
    unsigned long long shape[3];   /* --shape OUTER,LEN,INNER */
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
