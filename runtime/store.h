/*
 * store.h - a redtune database as libredtune reads it: opened read-only (runtime/store.c)
 * and looked up (runtime/store_lookup.c). No file under runtime/ writes a database: opening
 * for writing and the tuning writes are the redtune program's (tuner/store_tune.h), and so is
 * shipping (tuner/ship.h).
 *
 * The schema is db/schema.sql (built into the redtune program); PRAGMA user_version
 * versions it.
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>
#include "err.h"
#include "device.h"
#include "hash.h"

#define STORE_SCHEMA_VERSION 3

/* The oldest schema version libredtune reads (read-only, never migrating): a version 2 file
 * (before acc and result) reads as if each row's acc and result were its type, which is what
 * every row made before version 3 measured. Older files are refused: open them for writing
 * once (the redtune program migrates). */
#define STORE_READ_MIN_VERSION 2

typedef struct store store;

/* Open modes. */
#define STORE_READ    0   /* must exist and be a redtune database; never written */
#define STORE_WRITE   1   /* created with the schema when absent; migrated when older: the
                           * redtune program's store_open only (tuner/store_open.c) */

/*
 * Open the existing redtune database 'path' read-only (what libredtune does; opening for
 * writing, STORE_WRITE, is the redtune program's store_open in tuner/store_tune.h). A file
 * that is not an SQLite database, or one without redtune's schema or of a newer schema
 * version or older than STORE_READ_MIN_VERSION, is refused with RT_EDB and left untouched;
 * nothing is created. A version 2 file is read as it is: the lookup below reads its rows as
 * acc = result = type (store_version says which it is). *out is NULL on error. Close with
 * store_close().
 */
int store_open_read(const char *path, store **out, rt_err *e);

/* A function called once a wait for another connection's lock has lasted a second (the wait
 * gives up after timeout_ms); NULL, the default, waits silently. Not thread-safe: set it once,
 * at startup. */
void store_set_wait_notice(void (*fn)(const char *path, int timeout_ms));

/* Close; NULL is a harmless no-op. */
void store_close(store *s);

/* The path the store was opened with. */
const char *store_path(const store *s);

/* The schema version of the file as opened (STORE_SCHEMA_VERSION, or an older one that
 * STORE_READ read as it is). */
int store_version(const store *s);

/* The generated source of a kernel; *source is malloc'd, caller frees. RT_ENOTFOUND if absent. */
int store_get_kernel_source(store *s, const char *hash, char **source, rt_err *e);

/* As store_get_kernel_source, and the SHA-256 of the source (up to its first NUL) must be
 * 'hash': RT_EDB naming the hash when it is not (the row was altered after it was stored).
 * What libredtune reads before it runs a stored kernel. */
int store_get_checked_source(store *s, const char *hash, char **source, rt_err *e);

/* PRAGMA quick_check: RT_EDB "PATH: corrupt database (PRAGMA quick_check): ..." unless the
 * database's pages are intact. Reads every page: what rt_open pays (docs/api.md). */
int store_quick_check(store *s, rt_err *e);

/* A compiled binary: CUBIN for (kernel hash, arch, NVRTC version). */
typedef struct store_binary {
    void *cubin;        /* malloc'd by store_get_binary; caller frees */
    size_t size;
    int registers;      /* -1 when unknown */
    int smem_bytes;     /* static shared memory; -1 when unknown */
    char *log;          /* compile log, malloc'd or NULL */
} store_binary;

/* RT_ENOTFOUND when no binary is stored for that key. */
int store_get_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     store_binary *b, rt_err *e);
void store_binary_free(store_binary *b);

/* A row of table best, joined with its kernel and device. Strings are owned by the store and
 * valid during the callback only. */
typedef struct store_best_row {
    const char *device_name;
    const char *arch;        /* "sm_90" */
    const char *op, *type, *layout;
    long long n;
    int hot;
    const char *kernel_hash;
    const char *acc, *result; /* the accumulator's and the result's scalar types ("f32") */
    const char *family;
    const char *params;      /* "B=256 V=4" */
    double median_us, min_us, max_us;
    double gbps, frac_bw;
    int deterministic;
    long long nseg;          /* segmented: the segmentation measured (0 for flat) */
    double seg_mean;
    long long device_id;     /* its device row */
} store_best_row;

/* ---- runtime lookup (the read-only queries of runtime/api*.c) ----
 * 'layout' below matches the layout itself and its profiles: "keys" finds "keys:len3" and
 * every other "keys:PROFILE" row; "flat" finds "flat". */
/*
 * The read-only queries libredtune's lookup needs (runtime/api*.c). Same discipline as
 * store.c: errors are RT_EDB naming the path, what was being done and SQLite's message.
 */

/* The store's connection (struct store is private to the store's files), for tests that
 * inspect it. */
struct sqlite3;
struct sqlite3 *store_db(store *s);

/* How a device row of the database relates to the GPU at hand (the fallback chain). */
#define STORE_MATCH_EXACT  1   /* same name, SM count and compute capability */
#define STORE_MATCH_CC     2   /* same compute capability */
#define STORE_MATCH_MAJOR  3   /* same major architecture */

typedef struct store_device_match {
    long long id;
    char name[256];
    int cc_major, cc_minor, sm_count;
    int level;               /* STORE_MATCH_* */
    int nbest;               /* rows of table best it has for the case asked */
    int own;                 /* 1: the row of the GPU asked about (the same UUID) */
} store_device_match;

/*
 * The device row closest to 'd' that has at least one row of table best for (op, type, acc,
 * result, layout, hot): the best level first, then the nearest SM count, then the most best
 * rows, then the GPU's own row (the same UUID), then the most recently seen. RT_ENOTFOUND
 * when no row of the same major architecture has one (the caller falls back to its built-in
 * default).
 *
 * 'type' is the element type's name, 'acc' and 'result' the names of the resolved
 * accumulator and result scalar types (optype_resolve's ts.acc and ts.res, through
 * rt_type_name): "bf16", "f32", "f32" for a sum of bf16 by default. NULL acc or result stands
 * for 'type' (the original six operators on 32/64-bit types, min/max/argmin/argmax/amax).
 */
int store_find_device_spec(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout, int hot,
                           store_device_match *m, rt_err *e);

/* The rows of table best of one device for (op, type, acc, result, layout, hot), ordered by
 * n, joined with their kernel (as store_list_best); a non-zero return from 'cb' stops the
 * walk. acc and result as in store_find_device_spec. A case (layout, n) the device has no
 * row for is filled from the devices identical to it (same name, compute capability, SM
 * count, memory clock and bus width; the GPUs `redtune --split` shares the cases among), the
 * fastest such row; row->device_id says whose a row is. */
int store_list_best_for_device_spec(store *s, long long device_id, const char *op,
                                    const char *type, const char *acc, const char *result,
                                    const char *layout, int hot,
                                    int (*cb)(const store_best_row *row, void *arg),
                                    void *arg, rt_err *e);

/* The two above for the rows of layout "axis" of one kind: axis_kind 1 the `axis:OxLxI`
 * rows whose inner is 1 (rows of a matrix), 0 those whose inner is not; -1 any row of
 * 'layout' (the two above). */
int store_find_device_kind(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout,
                           int axis_kind, int hot, store_device_match *m, rt_err *e);
int store_list_best_for_device_kind(store *s, long long device_id, const char *op,
                                    const char *type, const char *acc, const char *result,
                                    const char *layout, int axis_kind, int hot,
                                    int (*cb)(const store_best_row *row, void *arg),
                                    void *arg, rt_err *e);

/* store_find_device_spec counting only the rows whose mean segment length lies in
 * [mlo, mhi] (segmented layouts): the device row nearest 'd' with a winner for lengths like
 * those of a call, when the row store_find_device_spec gives has none near them. */
int store_find_device_mean(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout, int hot,
                           double mlo, double mhi, store_device_match *m, rt_err *e);

/* The two above with acc = result = type: the rows of the original operators. */
int store_find_device(store *s, const rt_device *d, const char *op, const char *type,
                      const char *layout, int hot, store_device_match *m, rt_err *e);
int store_list_best_for_device(store *s, long long device_id, const char *op,
                               const char *type, const char *layout, int hot,
                               int (*cb)(const store_best_row *row, void *arg), void *arg,
                               rt_err *e);

/* A CUBIN of kernel 'hash' for 'arch' made by any NVRTC version, the newest version first;
 * *nvrtc_version receives the version it was made with. RT_ENOTFOUND when there is none. */
int store_get_binary_any(store *s, const char *hash, const char *arch, store_binary *b,
                         int *nvrtc_version, rt_err *e);

#endif
