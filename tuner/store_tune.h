/*
 * store_tune.h - the redtune program's side of the store: opening for writing and what
 * tuning writes (tuner/store_open.c, tuner/store_tune.c). libredtune only reads
 * (runtime/store.h's store_open_read); store_open here opens either way: STORE_READ as
 * libredtune does, STORE_WRITE creating, migrating and writing.
 *
 * A store opened with STORE_WRITE is in WAL mode with a busy timeout so that several tuner
 * processes may share one file, and each put is its own committed transaction, so a killed
 * run loses at most what was in flight.
 */
#ifndef RT_STORE_TUNE_H
#define RT_STORE_TUNE_H

#include "../runtime/store.h"

/*
 * Open 'path'. A file that is not an SQLite database, or an SQLite database without redtune's
 * schema, or one of a newer schema version, is refused with RT_EDB and left untouched
 * (a file with no tables at all, e.g. zero bytes, counts as new in STORE_WRITE mode).
 * A path that cannot be created or written gives RT_EIO or RT_EDB naming the path.
 * *out is NULL on error. Close with store_close().
 */
int store_open(const char *path, int mode, store **out, rt_err *e);

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

/* Insert (or replace) the CUBIN of (kernel hash, arch, NVRTC version); the kernel must be
 * there. */
int store_put_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     const store_binary *b, rt_err *e);

/* One measurement of one kernel on one case. status is one of "ok", "wrong", "fault",
 * "timeout", "error"; the times are microseconds (0 when status is not "ok"). */
typedef struct store_measurement {
    long long device_id;
    long long run_id;
    const char *kernel_hash;
    const char *op;          /* "min" */
    const char *type;        /* "f32" */
    const char *layout;      /* "flat", or "keys:PROFILE" / "offsets:PROFILE" */
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
    long long nseg;          /* segmented layouts: segments, mean and spread of their */
    double seg_mean;         /* lengths; 0 for flat */
    double seg_spread;
    const char *acc;         /* the resolved accumulator and result scalar types ("f32"); */
    const char *result;      /* NULL: the type itself */
} store_measurement;

/* Insert (or replace, for the same device, kernel, op, type, acc, result, layout, n, hot) one
 * measurement, committed at once. */
int store_put_measurement(store *s, const store_measurement *m, rt_err *e);

/* *found = 1 when a measurement exists for that key, whatever its status. Here and below,
 * acc and result are the resolved accumulator and result scalar types' names; NULL stands
 * for 'type'. */
int store_has_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *acc,
                          const char *result, const char *layout, long long n, int hot,
                          int *found, rt_err *e);

/* A kernel measured for 'op' (on any device) whose source does not contain 'marker': how the
 * tuner finds measurements of another operator of the same name (a user operator's units
 * carry its definition's fingerprint). *found = 1 and hash set when there is one. */
int store_op_kernel_without(store *s, const char *op, const char *marker,
                            char hash[RT_HASH_HEX], int *found, rt_err *e);

/* The measurement of that key, when there is one: *found = 1 and m's status (copied into
 * 'status'), median_us, min_us, max_us, reps and verified set; m's other fields untouched. */
int store_get_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *acc,
                          const char *result, const char *layout, long long n, int hot,
                          store_measurement *m, char status[16], int *found, rt_err *e);

/* The fewest timed repetitions of a measurement that best considers: the full repetition
 * rule's floor (strategy.h's STRATEGY_FULL_MIN). Successive halving stores its brief rounds'
 * timings (3 or 9 repetitions) as they are, honestly labelled by reps; they rank candidates
 * within the search but never compete with full timings for best. */
#define STORE_FULL_REPS 10
#define STORE_FULL_REPS_SQL "10"

/* Recompute the winner for (device, op, type, acc, result, layout, n, hot) from the verified
 * "ok" measurements of at least STORE_FULL_REPS repetitions (lowest median) and store it in
 * table best. RT_ENOTFOUND if there is none. */
int store_update_best_spec(store *s, long long device_id, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout,
                           long long n, int hot, rt_err *e);

/* store_update_best_spec with acc = result = type. */
int store_update_best(store *s, long long device_id, const char *op, const char *type,
                      const char *layout, long long n, int hot, rt_err *e);

/* Migrate the database on 'db' (no store: an in-memory image a shipping command reads) from
 * schema 'version' to STORE_SCHEMA_VERSION, in one transaction; 'path' names it in
 * messages. */
int store_migrate_db(struct sqlite3 *db, const char *path, int version, rt_err *e);

/* Filters: NULL op/type/device_match (substring of the device name) and n <= 0 mean any.
 * Calls 'cb' for each row ordered by device, op, type, layout, hot, n; a non-zero return
 * from 'cb' stops the walk. */
int store_list_best(store *s, const char *device_match, const char *op, const char *type,
                    long long n, int (*cb)(const store_best_row *row, void *arg), void *arg,
                    rt_err *e);

/* A new file will be made at 'path': its directory must exist and be writable (RT_EIO
 * "PATH: cannot create: ..." when not). */
int store_check_dir(const char *path, rt_err *e);

#endif
