/*
 * ship.h - shipping databases: export, merge, dump, load (redtune export | merge | dump |
 * load), and the writer of whole outputs they share with the tuner's other commands. The
 * redtune program's, not libredtune's (tuner/ship.c, ship_dump.c, ship_out.c).
 */
#ifndef RT_SHIP_H
#define RT_SHIP_H

#include <stddef.h>
#include "../runtime/store.h"

/*
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
