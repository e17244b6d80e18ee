/*
 * store.h - the SQLite database: every SQL statement redtune runs lives in store.c.
 *
 * The schema is db/schema.sql (embedded into the binary at build time); PRAGMA user_version
 * versions it. A store is opened in WAL mode with a busy timeout so that several tuner
 * processes may share one file, and each put is its own committed transaction, so a killed
 * run loses at most what was in flight.
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>
#include "err.h"
#include "device.h"

#define STORE_SCHEMA_VERSION 1

typedef struct store store;

/* Open modes. */
#define STORE_READ    0   /* must exist and be a redtune database; never written */
#define STORE_WRITE   1   /* created with the schema when absent; migrated when older */

/*
 * Open 'path'. A file that is not an SQLite database, or an SQLite database without redtune's
 * schema, or one of a newer schema version, is refused with RT_EDB and left untouched
 * (a file with no tables at all, e.g. zero bytes, counts as new in STORE_WRITE mode).
 * A path that cannot be created or written gives RT_EIO or RT_EDB naming the path.
 * *out is NULL on error. Close with store_close().
 */
int store_open(const char *path, int mode, store **out, rt_err *e);

/* Close; NULL is a harmless no-op. */
void store_close(store *s);

/* The path the store was opened with. */
const char *store_path(const store *s);

/* Insert or find the device (keyed by uuid, else name + ordinal); update its measured read
 * bandwidth when read_gbps > 0. *id receives the row id. */
int store_put_device(store *s, const rt_device *d, double read_gbps, long long *id, rt_err *e);

/* Begin a tuning run: remembers the command line, the redtune version, the NVRTC version
 * and the start time; *run_id receives its id. store_end_run stamps the end time. */
int store_begin_run(store *s, long long device_id, const char *cmdline, int nvrtc_version,
                    long long *run_id, rt_err *e);
int store_end_run(store *s, long long run_id, rt_err *e);

/* Insert the kernel (content hash of its full generated source) if it is not there yet. */
int store_put_kernel(store *s, const char *hash, const char *family, const char *params,
                     const char *source, rt_err *e);

/* The generated source of a kernel; *source is malloc'd, caller frees. RT_ENOTFOUND if absent. */
int store_get_kernel_source(store *s, const char *hash, char **source, rt_err *e);

/* A compiled binary: CUBIN for (kernel hash, arch, NVRTC version). */
typedef struct store_binary {
    void *cubin;        /* malloc'd by store_get_binary; caller frees */
    size_t size;
    int registers;      /* -1 when unknown */
    int smem_bytes;     /* static shared memory; -1 when unknown */
    char *log;          /* compile log, malloc'd or NULL */
} store_binary;

int store_put_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     const store_binary *b, rt_err *e);
/* RT_ENOTFOUND when no binary is stored for that key. */
int store_get_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     store_binary *b, rt_err *e);
void store_binary_free(store_binary *b);

/* One measurement of one kernel on one case. status is one of "ok", "wrong", "fault",
 * "timeout", "error"; the times are microseconds (0 when status is not "ok"). */
typedef struct store_measurement {
    long long device_id;
    long long run_id;
    const char *kernel_hash;
    const char *op;          /* "min" */
    const char *type;        /* "f32" */
    const char *layout;      /* "flat" for unsegmented */
    long long n;
    int hot;                 /* 1: L2 not flushed between repetitions */
    const char *status;
    const char *message;     /* why it failed; "" when ok */
    double median_us, min_us, max_us;
    int reps;
    double gbps;             /* bytes read / median time */
    double frac_bw;          /* gbps / the device's measured read bandwidth */
    int verified;            /* 1 when checked against the CPU reference */
    int deterministic;       /* 1 bitwise identical on re-run, 0 not, -1 not checked */
} store_measurement;

/* Insert (or replace, for the same device, kernel, op, type, layout, n, hot) one measurement,
 * committed at once. */
int store_put_measurement(store *s, const store_measurement *m, rt_err *e);

/* *found = 1 when a measurement exists for that key, whatever its status. */
int store_has_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *layout, long long n,
                          int hot, int *found, rt_err *e);

/* Recompute the winner for (device, op, type, layout, n, hot) from the verified "ok"
 * measurements (lowest median) and store it in table best. RT_ENOTFOUND if none is ok. */
int store_update_best(store *s, long long device_id, const char *op, const char *type,
                      const char *layout, long long n, int hot, rt_err *e);

/* A row of table best, joined with its kernel and device. Strings are owned by the store and
 * valid during the callback only. */
typedef struct store_best_row {
    const char *device_name;
    const char *arch;        /* "sm_90" */
    const char *op, *type, *layout;
    long long n;
    int hot;
    const char *kernel_hash;
    const char *family;
    const char *params;      /* "B=256 V=4" */
    double median_us, min_us, max_us;
    double gbps, frac_bw;
    int deterministic;
} store_best_row;

/* Filters: NULL op/type/device_match (substring of the device name) and n <= 0 mean any.
 * Calls 'cb' for each row ordered by device, op, type, layout, hot, n; a non-zero return
 * from 'cb' stops the walk. */
int store_list_best(store *s, const char *device_match, const char *op, const char *type,
                    long long n, int (*cb)(const store_best_row *row, void *arg), void *arg,
                    rt_err *e);

#endif
