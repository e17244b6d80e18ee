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
#include "hash.h"

#define STORE_SCHEMA_VERSION 2

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

/* A function called once a wait for another connection's lock has lasted a second (the wait
 * gives up after timeout_ms); NULL, the default, waits silently. Not thread-safe: set it once,
 * at startup. */
void store_set_wait_notice(void (*fn)(const char *path, int timeout_ms));

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
} store_measurement;

/* Insert (or replace, for the same device, kernel, op, type, layout, n, hot) one measurement,
 * committed at once. */
int store_put_measurement(store *s, const store_measurement *m, rt_err *e);

/* *found = 1 when a measurement exists for that key, whatever its status. */
int store_has_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *layout, long long n,
                          int hot, int *found, rt_err *e);

/* A kernel measured for 'op' (on any device) whose source does not contain 'marker': how the
 * tuner finds measurements of another operator of the same name (a user operator's units
 * carry its definition's fingerprint). *found = 1 and hash set when there is one. */
int store_op_kernel_without(store *s, const char *op, const char *marker,
                            char hash[RT_HASH_HEX], int *found, rt_err *e);

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
    long long nseg;          /* segmented: the segmentation measured (0 for flat) */
    double seg_mean;
} store_best_row;

/* Filters: NULL op/type/device_match (substring of the device name) and n <= 0 mean any.
 * Calls 'cb' for each row ordered by device, op, type, layout, hot, n; a non-zero return
 * from 'cb' stops the walk. */
int store_list_best(store *s, const char *device_match, const char *op, const char *type,
                    long long n, int (*cb)(const store_best_row *row, void *arg), void *arg,
                    rt_err *e);

/* ---- runtime lookup (the read-only queries of runtime/api.c) ----
 * 'layout' below matches the layout itself and its profiles: "keys" finds "keys:len3" and
 * every other "keys:PROFILE" row; "flat" finds "flat". */
/*
 * The read-only queries libredtune's lookup needs (runtime/api.c). Same discipline as
 * store.c: errors are RT_EDB naming the path, what was being done and SQLite's message.
 */

/* The store's connection (struct store is private to store.c), for tests that inspect it. */
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
} store_device_match;

/*
 * The device row closest to 'd' that has at least one row of table best for (op, type,
 * layout, hot): the best level first, then the nearest SM count, then the most best rows,
 * then the most recently seen. RT_ENOTFOUND when no row of the same major architecture has
 * one (the caller falls back to its built-in default).
 */
int store_find_device(store *s, const rt_device *d, const char *op, const char *type,
                      const char *layout, int hot, store_device_match *m, rt_err *e);

/* The rows of table best of one device for (op, type, layout, hot), ordered by n, joined with
 * their kernel (as store_list_best); a non-zero return from 'cb' stops the walk. */
int store_list_best_for_device(store *s, long long device_id, const char *op,
                               const char *type, const char *layout, int hot,
                               int (*cb)(const store_best_row *row, void *arg), void *arg,
                               rt_err *e);

/* A CUBIN of kernel 'hash' for 'arch' made by any NVRTC version, the newest version first;
 * *nvrtc_version receives the version it was made with. RT_ENOTFOUND when there is none. */
int store_get_binary_any(store *s, const char *hash, const char *arch, store_binary *b,
                         int *nvrtc_version, rt_err *e);

/* ---- shipping databases: export, merge, dump, load (redtune export | merge | dump | load) ----
 *
 * Each writes its output whole or not at all: built in memory, written to a file of the
 * output's directory that has no name until it is complete, then linked (or, with 'force',
 * renamed over an existing output) into place; an existing output without 'force' is refused
 * before any input is read. The output is in rollback-journal mode (no -wal/-shm for its
 * readers). Inputs are opened with STORE_READ and never written; one that is missing,
 * foreign, corrupt or of a newer schema is refused with RT_EDB (RT_EIO when unreadable) and
 * named in st->refused.
 */
typedef struct store_ship_stats {
    long long devices, best, kernels, binaries, measurements, runs;   /* rows of the output */
    long long left_out;      /* best rows of the inputs no verified measurement backs */
    const char *refused;     /* the input (or output) refused (one of the caller's strings) */
} store_ship_stats;

/*
 * Every database a shipping command reads, and its output before it is written, is checked
 * and refused whole (RT_EDB, naming the file and the check) when one fails: PRAGMA
 * quick_check ("corrupt database"), PRAGMA foreign_key_check ("inconsistent database"), each
 * kernel's hash the SHA-256 of its source ("kernel hash check"), no text value holding a NUL
 * byte ("text check"), the median of each "ok" measurement and best row positive and finite
 * ("time check"), each best row's kernel of its layout's plan ("layout check").
 */

/*
 * The devices of 'in' whose name holds one of match[0..nmatch) (ASCII case ignored), with
 * their best rows, the kernels those need and their CUBINs for the devices' arches; with
 * 'with_measurements' also their measurements, runs and measured kernels. RT_ENOTFOUND
 * (naming the devices 'in' holds) when no device matches; nothing is written then.
 */
int store_export(const char *in, const char *const *match, int nmatch, int with_measurements,
                 const char *out, int force, store_ship_stats *st, rt_err *e);

/*
 * in[0..nin) combined: devices matched by uuid, else name and ordinal; kernels and binaries
 * by their keys; measurements by their UNIQUE key, the faster verified "ok" one kept (an
 * unverified one never replaces another); best by its key, the lower median kept. A best
 * row is taken only when a verified "ok" measurement of its kernel and case in the same input
 * backs it, or when that input holds no measurement of its device at all (an export made
 * without measurements: the row is its own only record); the others are left out and
 * counted in st->left_out (export applies the same rule).
 */
int store_merge(const char *const *in, int nin, const char *out, int force,
                store_ship_stats *st, rt_err *e);

/*
 * The rows of 'in' as SQL text that diffs: a header line "-- redtune dump: schema version N",
 * then one INSERT a row, tables in dependency order, rows by key, REALs to 17 digits, BLOBs
 * (CUBINs) as X'hex'. *text is malloc'd (caller frees), *len its length.
 */
int store_dump(const char *in, char **text, size_t *len, store_ship_stats *st, rt_err *e);

/*
 * The database of the dumps sql[0..nsql): the first loaded as it is (ids kept, so that
 * dump(load(dump(x))) is dump(x)), the others merged in as by store_merge. No dump at all
 * gives an empty database. A dump may hold only INSERT statements into redtune's tables
 * (anything else is refused, with its line); a newer schema version is refused.
 */
int store_load(const char *const *sql, int nsql, const char *out, int force,
               store_ship_stats *st, rt_err *e);

/* A dump larger than this is refused by store_load (the file named, before it is read when
 * it is a regular file). */
#define STORE_DUMP_MAX (512 << 20)   /* bytes: 512 MiB */

/*
 * Whether 'path' may be an output of a command whose inputs are in[0..nin) (paths; NULL
 * entries and missing files are skipped): RT_OK when it does not exist or is a regular file
 * that 'force' lets be replaced. Refused (RT_EIO, naming it): one of the inputs (the same
 * device and inode, through symbolic or hard links too), a symbolic link (not followed and
 * not replaced: name its target), a directory or any other file that is not regular, an
 * existing file without 'force', a directory that cannot be written. RT_EINVAL: no path.
 */
int store_check_output(const char *path, int force, const char *const *in, int nin,
                       rt_err *e);

/* Write data[0..len) to 'path' whole or not at all, as the functions above write their
 * outputs, after store_check_output(path, force, in, nin). */
int store_write_output(const char *path, const void *data, size_t len, int force,
                       const char *const *in, int nin, rt_err *e);

/* store_write_output with no inputs. */
int store_write_file(const char *path, const void *data, size_t len, int force, rt_err *e);

#endif
