/*
 * store.c - the SQLite database: every SQL statement redtune runs, one function per statement.
 *
 * Statements are prepared, bound, stepped until SQLITE_DONE and finalized on every path; an
 * error names the database's path, what was being done and SQLite's own message. A put is one
 * statement in autocommit mode, or a BEGIN IMMEDIATE transaction when it needs several, so
 * each is committed before it returns and a writer waits (busy timeout) rather than fails
 * when another tuner process holds the write lock.
 *
 * Opening never modifies a file that is not already a redtune database: an existing file is
 * first inspected read-only (its header by hand, then its schema through a read-only
 * connection), and only a file that is redtune's, or empty, is then opened for writing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "embed.h"
#include "store.h"

#define BUSY_TIMEOUT_MS 10000
#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

struct store {
    sqlite3 *db;
    char *path;
};

/* The tables that make a file redtune's. */
static const char *const redtune_tables[] = {
    "devices", "runs", "kernels", "binaries", "measurements", "best",
};
#define N_TABLES ((int)(sizeof redtune_tables / sizeof redtune_tables[0]))

/*
 * Migration steps: migrations[k] brings a database from schema version k to k + 1 and runs,
 * with every other step needed, in the one transaction that store_open commits; the loop sets
 * user_version after each step. A new file gets db/schema.sql whole instead, so there is no
 * step from 0. To change the schema: edit db/schema.sql, raise STORE_SCHEMA_VERSION and add
 * the step here, e.g. [1] = "ALTER TABLE devices ADD COLUMN ecc INTEGER;".
 */
static const char *const migrations[STORE_SCHEMA_VERSION] = {
    [0] = NULL,
};

/* What a file holds, as far as opening it is concerned. */
enum {
    DB_NEW,        /* no tables and user_version 0: gets the schema (STORE_WRITE) */
    DB_CURRENT,    /* redtune's, at STORE_SCHEMA_VERSION */
    DB_OLDER,      /* redtune's, at an older version: to be migrated */
    DB_REFUSED     /* anything else; the reason is in the rt_err */
};

static int db_fail(sqlite3 *db, const char *path, const char *what, rt_err *e)
{
    return rt_seterr(e, RT_EDB, "%s: %s: %s", path, what, sqlite3_errmsg(db));
}

static int fail(store *s, const char *what, rt_err *e)
{
    return db_fail(s->db, s->path, what, e);
}

/* Run SQL text without results (transaction control, pragmas, the schema). */
static int exec_sql(sqlite3 *db, const char *path, const char *sql, const char *what, rt_err *e)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(db, path, what, e);
    return RT_OK;
}

/* Take the write lock now, waiting for other writers, rather than at the first write. */
static int tx_begin(store *s, rt_err *e)
{
    return exec_sql(s->db, s->path, "BEGIN IMMEDIATE", "begin transaction", e);
}

static int tx_commit(store *s, rt_err *e)
{
    return exec_sql(s->db, s->path, "COMMIT", "commit", e);
}

/* Undo an open transaction, if any; for error paths, whose message is already set. */
static void tx_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* Bind text, or NULL when 'text' is NULL. The text must outlive the step. */
static int bind_text(sqlite3_stmt *st, int i, const char *text)
{
    return sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
}

/* Text of a result column, "" for NULL, so that callers never see a NULL string. */
static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* ---------------------------------------------------------------- opening and the schema */

/*
 * A single-integer query on a connection that is not yet a store: PRAGMA user_version or a
 * count over sqlite_master, with an optional text argument ?1. *out is 0 when no row.
 */
static int query_int(sqlite3 *db, const char *path, const char *sql, const char *arg,
                     long long *out, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *out = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(db, path, "read schema", e);
        goto done;
    }
    if (arg && bind_text(st, 1, arg) != SQLITE_OK) {
        rc = db_fail(db, path, "read schema", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    if (r != SQLITE_DONE)
        rc = db_fail(db, path, "read schema", e);
done:
    sqlite3_finalize(st);
    return rc;
}

/*
 * Say what the database on 'db' is (DB_*). 'may_be_new': a file with no tables is acceptable
 * (STORE_WRITE). Returns RT_EDB only when SQLite fails; a refusal is *kind = DB_REFUSED with
 * its reason in 'e'.
 */
static int classify(sqlite3 *db, const char *path, int may_be_new, int *kind, int *version,
                    rt_err *e)
{
    long long v = 0, objects = 0, one;
    int present = 0, rc, own_tx = sqlite3_get_autocommit(db);
    const char *missing = NULL;

    *kind = DB_REFUSED;
    /* One read transaction, so that every answer describes the same state of the file. */
    if (own_tx && (rc = exec_sql(db, path, "BEGIN", "read schema", e)) != RT_OK)
        return rc;
    if ((rc = query_int(db, path, "PRAGMA user_version", NULL, &v, e)) != RT_OK
        || (rc = query_int(db, path, "SELECT count(*) FROM sqlite_master", NULL, &objects, e)))
        goto done;
    for (int i = 0; i < N_TABLES; i++) {
        rc = query_int(db, path, "SELECT count(*) FROM sqlite_master "
                                 "WHERE type = 'table' AND name = ?1",
                       redtune_tables[i], &one, e);
        if (rc != RT_OK)
            goto done;
        if (one)
            present++;
        else if (!missing)
            missing = redtune_tables[i];
    }
    *version = (int)v;

    if (objects == 0 && v == 0 && may_be_new)
        *kind = DB_NEW;
    else if (present == 0)
        rt_seterr(e, RT_EDB, "%s: not a redtune database (has no redtune tables)", path);
    else if (v > STORE_SCHEMA_VERSION)
        rt_seterr(e, RT_EDB, "%s: schema version %lld is newer than this redtune (%d): "
                  "upgrade redtune", path, v, STORE_SCHEMA_VERSION);
    else if (missing)
        rt_seterr(e, RT_EDB, "%s: not a redtune database (table '%s' is missing)",
                  path, missing);
    else if (v < 1)
        rt_seterr(e, RT_EDB, "%s: not a redtune database (redtune's tables but schema "
                  "version %lld)", path, v);
    else
        *kind = v < STORE_SCHEMA_VERSION ? DB_OLDER : DB_CURRENT;
done:
    if (own_tx)
        tx_rollback(db);   /* ends the read transaction */
    return rc;
}

/* The header sniff: what the first bytes of a file say. */
enum { FILE_EMPTY, FILE_SQLITE, FILE_SQLITE_WAL, FILE_OTHER };

static int sniff(const char *path, int *what, rt_err *e)
{
    unsigned char h[100];
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    while (got < sizeof h) {
        ssize_t r = read(fd, h + got, sizeof h - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            close(fd);
            return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(err));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got == 0)
        *what = FILE_EMPTY;
    else if (got < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        *what = FILE_OTHER;
    else /* bytes 18 and 19: file format read/write versions, 2 for WAL */
        *what = h[18] == 2 && h[19] == 2 ? FILE_SQLITE_WAL : FILE_SQLITE;
    return RT_OK;
}

/*
 * "file:" URI for 'path', percent-encoded, so that no file name is read as a URI or as
 * ":memory:", with optional query text. malloc'd; NULL when out of memory.
 */
static char *make_uri(const char *path, const char *query)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t len = strlen(path), q = query ? strlen(query) + 1 : 0;
    char *uri = malloc(7 + 3 * len + q + 1), *p = uri;

    if (!uri)
        return NULL;
    p += sprintf(p, "file:%s", path[0] == '/' ? "//" : "");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
            || strchr("/._-~", *c)) {
            *p++ = (char)*c;
        } else {
            *p++ = '%';
            *p++ = hex[*c >> 4];
            *p++ = hex[*c & 15];
        }
    }
    if (query)
        p += sprintf(p, "?%s", query);
    *p = '\0';
    return uri;
}

static int file_exists(const char *path, const char *suffix)
{
    char buf[PATH_MAX + 8];
    struct stat st;

    if (snprintf(buf, sizeof buf, "%s%s", path, suffix) >= (int)sizeof buf)
        return 1;   /* cannot tell: assume it does */
    return stat(buf, &st) == 0;
}

static int same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_size == b->st_size
        && a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec
        && a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Open a file read-only and classify it. A WAL-mode file with no -wal beside it is read as
 * immutable: a plain read-only connection would leave -wal and -shm files next to a file
 * that may turn out not to be ours. An immutable read takes no locks, so its refusal is
 * believed only when the file did not change under it and no -wal appeared; otherwise (a
 * redtune process was writing it meanwhile) the file is read again the ordinary way.
 */
static int inspect_sqlite(const char *path, int wal, int may_be_new, int *kind, int *version,
                          rt_err *e)
{
    struct stat before, after;
    int immutable = wal && !file_exists(path, "-wal") && stat(path, &before) == 0;
    int rc;

    for (;;) {
        sqlite3 *db = NULL;
        char *uri = make_uri(path, immutable ? "immutable=1" : NULL);
        if (!uri)
            return rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL)
            != SQLITE_OK) {
            rc = rt_seterr(e, RT_EDB, "%s: cannot open: %s", path,
                           db ? sqlite3_errmsg(db) : "out of memory");
        } else {
            sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
            rc = classify(db, path, may_be_new, kind, version, e);
        }
        sqlite3_close(db);
        free(uri);
        if (!immutable || (rc == RT_OK && *kind != DB_REFUSED))
            return rc;
        if (rc == RT_OK && !file_exists(path, "-wal") && stat(path, &after) == 0
            && same_file_state(&before, &after))
            return rc;
        immutable = 0;
    }
}

/* STORE_READ never writes, so it cannot migrate. */
static int refuse_older(const char *path, int version, rt_err *e)
{
    return rt_seterr(e, RT_EDB, "%s: schema version %d is older than this redtune (%d): "
                     "open it for writing once to migrate it", path, version,
                     STORE_SCHEMA_VERSION);
}

/*
 * Decide, touching nothing, what the existing regular file at 'path' is. Every refusal
 * returns RT_EDB with its reason.
 */
static int inspect(const char *path, int mode, int *kind, int *version, rt_err *e)
{
    int what = FILE_OTHER, rc;

    *version = 0;
    if ((rc = sniff(path, &what, e)) != RT_OK)
        return rc;
    switch (what) {
    case FILE_EMPTY:
        if (mode == STORE_READ)
            return rt_seterr(e, RT_EDB, "%s: not a redtune database (empty file)", path);
        *kind = DB_NEW;
        return RT_OK;
    case FILE_OTHER:
        return rt_seterr(e, RT_EDB, "%s: not a redtune database (file is not SQLite)", path);
    default:
        rc = inspect_sqlite(path, what == FILE_SQLITE_WAL, mode == STORE_WRITE, kind, version,
                            e);
        if (rc == RT_OK && *kind == DB_REFUSED)
            rc = RT_EDB;
        if (rc == RT_OK && *kind == DB_OLDER && mode == STORE_READ)
            rc = refuse_older(path, *version, e);
        return rc;
    }
}

/* A new file will be made at 'path': its directory must exist and be writable. */
static int check_dir(const char *path, rt_err *e)
{
    char *dir = strdup(path), *slash;
    struct stat st;
    int rc = RT_OK;

    if (!dir)
        return rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
    slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (stat(dir, &st) != 0)
        rc = rt_seterr(e, RT_EIO, "%s: cannot create: directory %s: %s", path, dir,
                       strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = rt_seterr(e, RT_EIO, "%s: cannot create: %s is not a directory", path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = rt_seterr(e, RT_EIO, "%s: cannot create: directory %s: %s", path, dir,
                       strerror(errno));
    free(dir);
    return rc;
}

/*
 * PRAGMA journal_mode=WAL, which answers with the mode now in force. While another process
 * switches a new file to WAL, SQLite may answer SQLITE_BUSY at once, without calling the busy
 * handler: that is retried here, for as long as the busy timeout.
 */
static int set_wal(sqlite3 *db, const char *path, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r, waited = 0;

    for (;;) {
        if (sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK) {
            rc = db_fail(db, path, "enable WAL mode", e);
            goto done;
        }
        if ((r = sqlite3_step(st)) == SQLITE_ROW)
            break;
        if ((r & 0xff) != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS) {
            rc = db_fail(db, path, "enable WAL mode", e);
            goto done;
        }
        sqlite3_finalize(st);
        st = NULL;
        waited += sqlite3_sleep(2);
    }
    if (strcmp(col_text(st, 0), "wal") != 0) {
        rc = rt_seterr(e, RT_EDB, "%s: cannot enable WAL mode (journal mode stays %s)", path,
                       col_text(st, 0));
        goto done;
    }
    while (sqlite3_step(st) == SQLITE_ROW)
        ;
done:
    sqlite3_finalize(st);
    return rc;
}

/* Bring a database from 'version' to STORE_SCHEMA_VERSION, inside the caller's transaction. */
static int migrate(sqlite3 *db, const char *path, int version, rt_err *e)
{
    char sql[64], what[64];

    for (int v = version; v < STORE_SCHEMA_VERSION; v++) {
        if (!migrations[v])
            return rt_seterr(e, RT_EDB, "%s: no migration from schema version %d to %d",
                             path, v, v + 1);
        snprintf(what, sizeof what, "migrate schema version %d to %d", v, v + 1);
        int rc = exec_sql(db, path, migrations[v], what, e);
        if (rc != RT_OK)
            return rc;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
        if ((rc = exec_sql(db, path, sql, what, e)) != RT_OK)
            return rc;
    }
    return RT_OK;
}

/*
 * Give a writable connection the current schema, atomically: under the write lock, look again
 * (another process may have made the schema since the file was inspected), then create it
 * whole from db/schema.sql, or migrate it, or leave it, in one transaction.
 */
static int setup_schema(sqlite3 *db, const char *path, rt_err *e)
{
    const rt_embedded *schema = embed_find("db/schema.sql");
    int kind, version, rc;
    long long v;

    if (!schema)
        return rt_seterr(e, RT_EDB, "%s: db/schema.sql is not built into this redtune", path);
    if ((rc = exec_sql(db, path, "BEGIN IMMEDIATE", "begin transaction", e)) != RT_OK)
        return rc;
    if ((rc = classify(db, path, 1, &kind, &version, e)) != RT_OK)
        goto done;
    switch (kind) {
    case DB_REFUSED:
        rc = RT_EDB;
        goto done;
    case DB_NEW:
        if ((rc = exec_sql(db, path, schema->text, "create schema", e)) != RT_OK)
            goto done;
        if ((rc = query_int(db, path, "PRAGMA user_version", NULL, &v, e)) != RT_OK)
            goto done;
        if (v != STORE_SCHEMA_VERSION) {
            rc = rt_seterr(e, RT_EDB, "%s: db/schema.sql sets user_version %lld, this "
                           "redtune expects %d", path, v, STORE_SCHEMA_VERSION);
            goto done;
        }
        break;
    case DB_OLDER:
        if ((rc = migrate(db, path, version, e)) != RT_OK)
            goto done;
        break;
    default:   /* DB_CURRENT: another process made the schema meanwhile */
        break;
    }
    rc = exec_sql(db, path, "COMMIT", "commit schema", e);
done:
    if (rc != RT_OK)
        tx_rollback(db);
    return rc;
}

int store_open(const char *path, int mode, store **out, rt_err *e)
{
    store *s = NULL;
    sqlite3 *db = NULL;
    char *uri = NULL;
    struct stat st;
    int kind = DB_NEW, version = 0, rc = RT_OK, flags;

    if (out)
        *out = NULL;
    if (!out || !path || !*path || (mode != STORE_READ && mode != STORE_WRITE))
        return rt_seterr(e, RT_EINVAL, "store_open: %s", !path || !*path ? "empty path"
                         : out ? "mode is neither STORE_READ nor STORE_WRITE" : "out is NULL");

    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a directory, not a database", path);
        if (!S_ISREG(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: not a regular file", path);
        if (mode == STORE_WRITE && access(path, R_OK | W_OK) != 0)
            return rt_seterr(e, RT_EIO, "%s: cannot write: %s", path, strerror(errno));
        if ((rc = inspect(path, mode, &kind, &version, e)) != RT_OK)
            return rc;
    } else if (errno == ENOENT && mode == STORE_WRITE) {
        if ((rc = check_dir(path, e)) != RT_OK)
            return rc;
    } else {
        return rt_seterr(e, errno == ENOENT ? RT_EDB : RT_EIO, "%s: %s", path,
                         strerror(errno));
    }

    if (!(uri = make_uri(path, NULL)) || !(s = calloc(1, sizeof *s))
        || !(s->path = strdup(path))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    flags = SQLITE_OPEN_URI
          | (mode == STORE_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                 : SQLITE_OPEN_READONLY);
    if (sqlite3_open_v2(uri, &db, flags, NULL) != SQLITE_OK) {
        int err = db ? sqlite3_system_errno(db) : 0;
        rc = rt_seterr(e, mode == STORE_WRITE ? RT_EIO : RT_EDB, "%s: cannot open: %s%s%s%s",
                       path, db ? sqlite3_errmsg(db) : "out of memory", err ? " (" : "",
                       err ? strerror(err) : "", err ? ")" : "");
        goto done;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);

    if (mode == STORE_WRITE) {
        if (sqlite3_db_readonly(db, "main") == 1) {
            rc = rt_seterr(e, RT_EIO, "%s: cannot write: opened read-only", path);
            goto done;
        }
        if ((rc = exec_sql(db, path, "PRAGMA foreign_keys = ON", "enable foreign keys", e))
            || (rc = set_wal(db, path, e)))
            goto done;
        if (kind != DB_CURRENT && (rc = setup_schema(db, path, e)) != RT_OK)
            goto done;
    } else {
        /* Look again on this connection: the file may have changed since inspect(). */
        if ((rc = exec_sql(db, path, "PRAGMA query_only = ON", "set query_only", e))
            || (rc = classify(db, path, 0, &kind, &version, e)))
            goto done;
        if (kind != DB_CURRENT) {
            rc = kind == DB_OLDER ? refuse_older(path, version, e) : RT_EDB;
            goto done;
        }
    }
    s->db = db;
    db = NULL;
    *out = s;
    s = NULL;
done:
    sqlite3_close(db);
    if (s)
        free(s->path);
    free(s);
    free(uri);
    return rc;
}

void store_close(store *s)
{
    if (!s)
        return;
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

const char *store_path(const store *s)
{
    return s->path;
}

/* The connection, for tests that inspect it. */
sqlite3 *store_db(store *s)
{
    return s->db;
}

/* ---------------------------------------------------------------- devices and runs */

#define DEVICE_COLUMNS \
    "name, uuid, ordinal, cc_major, cc_minor, sm_count, warp_size, max_threads_per_block, " \
    "max_threads_per_sm, max_blocks_per_sm, smem_per_block, smem_per_block_optin, " \
    "smem_per_sm, regs_per_block, regs_per_sm, l2_bytes, mem_clock_khz, bus_width_bits, " \
    "driver_version, total_mem"

/* Bind ?1..?20 in the order of DEVICE_COLUMNS and ?21, the read bandwidth. */
static int bind_device(sqlite3_stmt *st, const rt_device *d, double read_gbps)
{
    const int ints[] = {
        d->ordinal, d->cc_major, d->cc_minor, d->sm_count, d->warp_size,
        d->max_threads_per_block, d->max_threads_per_sm, d->max_blocks_per_sm,
        d->smem_per_block, d->smem_per_block_optin, d->smem_per_sm, d->regs_per_block,
        d->regs_per_sm, d->l2_bytes, d->mem_clock_khz, d->bus_width_bits, d->driver_version,
    };
    int r = bind_text(st, 1, d->name);

    if (r == SQLITE_OK)
        r = bind_text(st, 2, d->uuid[0] ? d->uuid : NULL);
    for (int i = 0; r == SQLITE_OK && i < (int)(sizeof ints / sizeof ints[0]); i++)
        r = sqlite3_bind_int(st, 3 + i, ints[i]);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int64(st, 20, d->total_mem);
    if (r == SQLITE_OK)
        r = sqlite3_bind_double(st, 21, read_gbps);
    return r;
}

/* The id of the device's row, keyed by uuid when it has one, else by name and ordinal. */
static int find_device(store *s, const rt_device *d, long long *id, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *id = 0;
    if (sqlite3_prepare_v2(s->db, d->uuid[0]
                           ? "SELECT id FROM devices WHERE uuid = ?1"
                           : "SELECT id FROM devices WHERE uuid IS NULL AND name = ?2 "
                             "AND ordinal = ?3", -1, &st, NULL) != SQLITE_OK) {
        rc = fail(s, "find device", e);
        goto done;
    }
    r = d->uuid[0] ? bind_text(st, 1, d->uuid) : bind_text(st, 2, d->name);
    if (r == SQLITE_OK && !d->uuid[0])
        r = sqlite3_bind_int(st, 3, d->ordinal);
    if (r != SQLITE_OK) {
        rc = fail(s, "find device", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    if (r != SQLITE_DONE)
        rc = fail(s, "find device", e);
done:
    sqlite3_finalize(st);
    return rc;
}

static int insert_device(store *s, const rt_device *d, double read_gbps, long long *id,
                         rt_err *e)
{
    static const char sql[] =
        "INSERT INTO devices (" DEVICE_COLUMNS ", read_gbps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
        "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
        "CASE WHEN ?21 > 0 THEN ?21 END)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_device(st, d, read_gbps) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
        rc = fail(s, "insert device", e);
        goto done;
    }
    *id = sqlite3_last_insert_rowid(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

/* Refresh what may change (driver, clocks, a new bandwidth measurement) and last_seen. */
static int update_device(store *s, long long id, const rt_device *d, double read_gbps,
                         rt_err *e)
{
    static const char sql[] =
        "UPDATE devices SET name = ?1, uuid = ?2, ordinal = ?3, cc_major = ?4, cc_minor = ?5, "
        "sm_count = ?6, warp_size = ?7, max_threads_per_block = ?8, max_threads_per_sm = ?9, "
        "max_blocks_per_sm = ?10, smem_per_block = ?11, smem_per_block_optin = ?12, "
        "smem_per_sm = ?13, regs_per_block = ?14, regs_per_sm = ?15, l2_bytes = ?16, "
        "mem_clock_khz = ?17, bus_width_bits = ?18, driver_version = ?19, total_mem = ?20, "
        "read_gbps = CASE WHEN ?21 > 0 THEN ?21 ELSE read_gbps END, last_seen = " NOW " "
        "WHERE id = ?22";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_device(st, d, read_gbps) != SQLITE_OK
        || sqlite3_bind_int64(st, 22, id) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
        rc = fail(s, "update device", e);
    sqlite3_finalize(st);
    return rc;
}

int store_put_device(store *s, const rt_device *d, double read_gbps, long long *id, rt_err *e)
{
    long long found;
    int rc;

    if ((rc = tx_begin(s, e)) != RT_OK)
        return rc;
    if ((rc = find_device(s, d, &found, e)) != RT_OK)
        goto done;
    if (found)
        rc = update_device(s, found, d, read_gbps, e);
    else
        rc = insert_device(s, d, read_gbps, &found, e);
    if (rc == RT_OK)
        rc = tx_commit(s, e);
    if (rc == RT_OK && id)
        *id = found;
done:
    if (rc != RT_OK)
        tx_rollback(s->db);
    return rc;
}

int store_begin_run(store *s, long long device_id, const char *cmdline, int nvrtc_version,
                    long long *run_id, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO runs (device_id, cmdline, redtune_version, nvrtc_version) "
        "VALUES (?1, ?2, ?3, ?4)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, device_id) != SQLITE_OK
        || bind_text(st, 2, cmdline ? cmdline : "") != SQLITE_OK
        || bind_text(st, 3, RT_VERSION_STRING) != SQLITE_OK
        || sqlite3_bind_int(st, 4, nvrtc_version) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = fail(s, "begin run", e);
        goto done;
    }
    if (run_id)
        *run_id = sqlite3_last_insert_rowid(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_end_run(store *s, long long run_id, rt_err *e)
{
    static const char sql[] = "UPDATE runs SET ended_at = " NOW " WHERE id = ?1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, run_id) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = fail(s, "end run", e);
        goto done;
    }
    if (sqlite3_changes(s->db) == 0)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: end run: no run %lld", s->path, run_id);
done:
    sqlite3_finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- kernels and binaries */

int store_put_kernel(store *s, const char *hash, const char *family, const char *params,
                     const char *source, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO kernels (hash, family, params, source) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (hash) DO NOTHING";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, family) != SQLITE_OK
        || bind_text(st, 3, params) != SQLITE_OK || bind_text(st, 4, source) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = fail(s, "put kernel", e);
    sqlite3_finalize(st);
    return rc;
}

int store_get_kernel_source(store *s, const char *hash, char **source, rt_err *e)
{
    static const char sql[] = "SELECT source FROM kernels WHERE hash = ?1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *source = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK) {
        rc = fail(s, "get kernel source", e);
        goto done;
    }
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no kernel %s", s->path, hash);
        goto done;
    }
    if (r != SQLITE_ROW) {
        rc = fail(s, "get kernel source", e);
        goto done;
    }
    const char *text = col_text(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    if (!(*source = malloc(len + 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: kernel %s: out of memory", s->path, hash);
        goto done;
    }
    memcpy(*source, text, len);
    (*source)[len] = '\0';
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        ;
    if (r != SQLITE_DONE) {
        rc = fail(s, "get kernel source", e);
        free(*source);
        *source = NULL;
    }
done:
    sqlite3_finalize(st);
    return rc;
}

/* Bind an int that uses -1 for unknown as NULL. */
static int bind_known(sqlite3_stmt *st, int i, int v)
{
    return v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int(st, i, v);
}

int store_put_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     const store_binary *b, rt_err *e)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO binaries (hash, arch, nvrtc_version, cubin, registers, "
        "smem_bytes, log) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (!b->cubin || b->size == 0)
        return rt_seterr(e, RT_EINVAL, "%s: put binary %s %s: empty cubin", s->path,
                         hash ? hash : "(null)", arch ? arch : "(null)");
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, arch) != SQLITE_OK
        || sqlite3_bind_int(st, 3, nvrtc_version) != SQLITE_OK
        || sqlite3_bind_blob64(st, 4, b->cubin, b->size, SQLITE_STATIC) != SQLITE_OK
        || bind_known(st, 5, b->registers) != SQLITE_OK
        || bind_known(st, 6, b->smem_bytes) != SQLITE_OK
        || bind_text(st, 7, b->log) != SQLITE_OK) {
        rc = fail(s, "put binary", e);
        goto done;
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
            rc = rt_seterr(e, RT_EDB, "%s: put binary: no kernel %s (put the kernel first)",
                           s->path, hash);
        else
            rc = fail(s, "put binary", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

/* The binary of 'hash' for 'arch' made by NVRTC 'version', or by the newest NVRTC when
 * version < 0; *made_by receives the version of the one found. */
static int get_binary(store *s, const char *hash, const char *arch, int version,
                      store_binary *b, int *made_by, rt_err *e)
{
    static const char sql[] =
        "SELECT cubin, registers, smem_bytes, log, nvrtc_version FROM binaries "
        "WHERE hash = ?1 AND arch = ?2 AND (?3 < 0 OR nvrtc_version = ?3) "
        "ORDER BY nvrtc_version DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    memset(b, 0, sizeof *b);
    *made_by = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, arch) != SQLITE_OK
        || sqlite3_bind_int(st, 3, version) != SQLITE_OK) {
        rc = fail(s, "get binary", e);
        goto done;
    }
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        if (version >= 0)
            rc = rt_seterr(e, RT_ENOTFOUND, "%s: no binary of kernel %s for %s with NVRTC %d",
                           s->path, hash, arch, version);
        else
            rc = rt_seterr(e, RT_ENOTFOUND, "%s: no binary of kernel %s for %s", s->path, hash,
                           arch);
        goto done;
    }
    if (r != SQLITE_ROW) {
        rc = fail(s, "get binary", e);
        goto done;
    }
    const void *blob = sqlite3_column_blob(st, 0);
    size_t size = (size_t)sqlite3_column_bytes(st, 0);
    b->registers = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
    b->smem_bytes = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
    *made_by = sqlite3_column_int(st, 4);
    if (!(b->cubin = malloc(size ? size : 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", s->path, hash);
        goto done;
    }
    if (size)
        memcpy(b->cubin, blob, size);
    b->size = size;
    if (sqlite3_column_type(st, 3) != SQLITE_NULL && !(b->log = strdup(col_text(st, 3)))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", s->path, hash);
        goto done;
    }
    if ((r = sqlite3_step(st)) != SQLITE_DONE)
        rc = fail(s, "get binary", e);
done:
    sqlite3_finalize(st);
    if (rc != RT_OK) {
        store_binary_free(b);
        *made_by = 0;
    }
    return rc;
}

int store_get_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     store_binary *b, rt_err *e)
{
    int made_by;
    if (nvrtc_version < 0) {
        memset(b, 0, sizeof *b);
        return rt_seterr(e, RT_EINVAL, "%s: get binary: NVRTC version %d", s->path, nvrtc_version);
    }
    return get_binary(s, hash, arch, nvrtc_version, b, &made_by, e);
}

void store_binary_free(store_binary *b)
{
    if (!b)
        return;
    free(b->cubin);
    free(b->log);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- measurements and best */

int store_put_measurement(store *s, const store_measurement *m, rt_err *e)
{
    /* One statement in autocommit mode: its own transaction, committed before it returns. */
    static const char sql[] =
        "INSERT OR REPLACE INTO measurements (device_id, run_id, kernel_hash, op, type, "
        "layout, n, hot, status, message, median_us, min_us, max_us, reps, gbps, frac_bw, "
        "verified, deterministic) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15, ?16, ?17, ?18)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, m->device_id) != SQLITE_OK
        || (m->run_id > 0 ? sqlite3_bind_int64(st, 2, m->run_id)
                          : sqlite3_bind_null(st, 2)) != SQLITE_OK
        || bind_text(st, 3, m->kernel_hash) != SQLITE_OK
        || bind_text(st, 4, m->op) != SQLITE_OK || bind_text(st, 5, m->type) != SQLITE_OK
        || bind_text(st, 6, m->layout) != SQLITE_OK
        || sqlite3_bind_int64(st, 7, m->n) != SQLITE_OK
        || sqlite3_bind_int(st, 8, m->hot) != SQLITE_OK
        || bind_text(st, 9, m->status) != SQLITE_OK
        || bind_text(st, 10, m->message ? m->message : "") != SQLITE_OK
        || sqlite3_bind_double(st, 11, m->median_us) != SQLITE_OK
        || sqlite3_bind_double(st, 12, m->min_us) != SQLITE_OK
        || sqlite3_bind_double(st, 13, m->max_us) != SQLITE_OK
        || sqlite3_bind_int(st, 14, m->reps) != SQLITE_OK
        || sqlite3_bind_double(st, 15, m->gbps) != SQLITE_OK
        || sqlite3_bind_double(st, 16, m->frac_bw) != SQLITE_OK
        || sqlite3_bind_int(st, 17, m->verified) != SQLITE_OK
        || sqlite3_bind_int(st, 18, m->deterministic) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = fail(s, "put measurement", e);
    sqlite3_finalize(st);
    return rc;
}

/* Bind the case (device, op, type, layout, n, hot) to ?1..?6. */
static int bind_case(sqlite3_stmt *st, long long device_id, const char *op, const char *type,
                     const char *layout, long long n, int hot)
{
    int r = sqlite3_bind_int64(st, 1, device_id);

    if (r == SQLITE_OK)
        r = bind_text(st, 2, op);
    if (r == SQLITE_OK)
        r = bind_text(st, 3, type);
    if (r == SQLITE_OK)
        r = bind_text(st, 4, layout);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int64(st, 5, n);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int(st, 6, hot);
    return r;
}

int store_has_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *layout, long long n,
                          int hot, int *found, rt_err *e)
{
    static const char sql[] =
        "SELECT 1 FROM measurements WHERE device_id = ?1 AND op = ?2 AND type = ?3 "
        "AND layout = ?4 AND n = ?5 AND hot = ?6 AND kernel_hash = ?7";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *found = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, layout, n, hot) != SQLITE_OK
        || bind_text(st, 7, kernel_hash) != SQLITE_OK) {
        rc = fail(s, "has measurement", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *found = 1;
    if (r != SQLITE_DONE) {
        *found = 0;
        rc = fail(s, "has measurement", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

int store_op_kernel_without(store *s, const char *op, const char *marker,
                            char hash[RT_HASH_HEX], int *found, rt_err *e)
{
    static const char sql[] =
        "SELECT m.kernel_hash FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash "
        "WHERE m.op = ?1 AND instr(k.source, ?2) = 0 LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *found = 0;
    hash[0] = '\0';
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, op) != SQLITE_OK || bind_text(st, 2, marker) != SQLITE_OK) {
        rc = fail(s, "operator definitions", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(hash, RT_HASH_HEX, "%s", col_text(st, 0));
        *found = 1;
    }
    if (r != SQLITE_DONE) {
        *found = 0;
        rc = fail(s, "operator definitions", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

static int delete_best(store *s, long long device_id, const char *op, const char *type,
                       const char *layout, long long n, int hot, rt_err *e)
{
    static const char sql[] =
        "DELETE FROM best WHERE device_id = ?1 AND op = ?2 AND type = ?3 AND layout = ?4 "
        "AND n = ?5 AND hot = ?6";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, layout, n, hot) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = fail(s, "update best", e);
    sqlite3_finalize(st);
    return rc;
}

/* Copy the fastest verified "ok" measurement of the case into best; *found = rows copied. */
static int insert_best(store *s, long long device_id, const char *op, const char *type,
                       const char *layout, long long n, int hot, int *found, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO best (device_id, op, type, layout, n, hot, kernel_hash, median_us, "
        "min_us, max_us, reps, gbps, frac_bw, deterministic) "
        "SELECT device_id, op, type, layout, n, hot, kernel_hash, median_us, min_us, max_us, "
        "reps, gbps, frac_bw, deterministic FROM measurements "
        "WHERE device_id = ?1 AND op = ?2 AND type = ?3 AND layout = ?4 AND n = ?5 "
        "AND hot = ?6 AND status = 'ok' AND verified = 1 "
        "ORDER BY median_us, min_us, kernel_hash LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    *found = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, layout, n, hot) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = fail(s, "update best", e);
        goto done;
    }
    *found = sqlite3_changes(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

/*
 * The old winner is deleted and the new one copied in one transaction, so a case whose
 * measurements no longer hold a verified "ok" row loses its stale entry (and RT_ENOTFOUND
 * is returned) rather than keeping a winner that was measured wrong since.
 */
int store_update_best(store *s, long long device_id, const char *op, const char *type,
                      const char *layout, long long n, int hot, rt_err *e)
{
    int found = 0, rc;

    if ((rc = tx_begin(s, e)) != RT_OK)
        return rc;
    if ((rc = delete_best(s, device_id, op, type, layout, n, hot, e)) != RT_OK
        || (rc = insert_best(s, device_id, op, type, layout, n, hot, &found, e)) != RT_OK
        || (rc = tx_commit(s, e)) != RT_OK)
        goto done;
    if (!found)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no verified ok measurement of %s %s %s n=%lld "
                       "%s on device %lld", s->path, op, type, layout, n,
                       hot ? "hot" : "cold", device_id);
done:
    if (rc != RT_OK)
        tx_rollback(s->db);
    return rc;
}

/* Step a statement whose columns are those of store_best_row (in its order) and call 'cb'
 * for each row; a non-zero return from 'cb' stops the walk (not an error). */
static int walk_best_rows(store *s, sqlite3_stmt *st, const char *what,
                          int (*cb)(const store_best_row *row, void *arg), void *arg, rt_err *e)
{
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        store_best_row row = {
            .device_name = col_text(st, 0),
            .arch = col_text(st, 1),
            .op = col_text(st, 2),
            .type = col_text(st, 3),
            .layout = col_text(st, 4),
            .n = sqlite3_column_int64(st, 5),
            .hot = sqlite3_column_int(st, 6),
            .kernel_hash = col_text(st, 7),
            .family = col_text(st, 8),
            .params = col_text(st, 9),
            .median_us = sqlite3_column_double(st, 10),
            .min_us = sqlite3_column_double(st, 11),
            .max_us = sqlite3_column_double(st, 12),
            .gbps = sqlite3_column_double(st, 13),
            .frac_bw = sqlite3_column_double(st, 14),
            .deterministic = sqlite3_column_int(st, 15),
        };
        if (cb(&row, arg) != 0)
            return RT_OK;
    }
    return r == SQLITE_DONE ? RT_OK : fail(s, what, e);
}

int store_list_best(store *s, const char *device_match, const char *op, const char *type,
                    long long n, int (*cb)(const store_best_row *row, void *arg), void *arg,
                    rt_err *e)
{
    /* The device match is a substring, ignoring ASCII case ("h100" finds "NVIDIA H100"). */
    static const char sql[] =
        "SELECT d.name, 'sm_' || d.cc_major || d.cc_minor, b.op, b.type, b.layout, b.n, "
        "b.hot, b.kernel_hash, k.family, k.params, b.median_us, b.min_us, b.max_us, b.gbps, "
        "b.frac_bw, b.deterministic "
        "FROM best b JOIN kernels k ON k.hash = b.kernel_hash "
        "JOIN devices d ON d.id = b.device_id "
        "WHERE (?1 IS NULL OR instr(lower(d.name), lower(?1)) > 0) "
        "AND (?2 IS NULL OR b.op = ?2) AND (?3 IS NULL OR b.type = ?3) "
        "AND (?4 <= 0 OR b.n = ?4) "
        "ORDER BY d.name, d.ordinal, d.id, b.op, b.type, b.layout, b.hot, b.n";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (!cb)
        return rt_seterr(e, RT_EINVAL, "%s: list best: no callback", s->path);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, device_match) != SQLITE_OK || bind_text(st, 2, op) != SQLITE_OK
        || bind_text(st, 3, type) != SQLITE_OK || sqlite3_bind_int64(st, 4, n) != SQLITE_OK) {
        rc = fail(s, "list best", e);
        goto done;
    }
    rc = walk_best_rows(s, st, "list best", cb, arg, e);
done:
    sqlite3_finalize(st);
    return rc;
}

/* ---- the runtime lookup's read-only queries (runtime/api.c) ---- */

int store_find_device(store *s, const rt_device *d, const char *op, const char *type,
                      const char *layout, int hot, store_device_match *m, rt_err *e)
{
    /* Only rows of the same major architecture qualify; the level ranks them. */
    static const char sql[] =
        "SELECT d.id, d.name, d.cc_major, d.cc_minor, d.sm_count, count(*) AS nbest, "
        "CASE WHEN d.name = ?5 AND d.sm_count = ?6 AND d.cc_minor = ?8 THEN 1 "
        "     WHEN d.cc_minor = ?8 THEN 2 ELSE 3 END AS level "
        "FROM best b JOIN devices d ON d.id = b.device_id "
        "WHERE b.op = ?1 AND b.type = ?2 AND b.layout = ?3 AND b.hot = ?4 "
        "AND d.cc_major = ?7 "
        "GROUP BY d.id "
        "ORDER BY level, abs(d.sm_count - ?6), nbest DESC, d.last_seen DESC, d.id "
        "LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r, found = 0;

    memset(m, 0, sizeof *m);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, op) != SQLITE_OK || bind_text(st, 2, type) != SQLITE_OK
        || bind_text(st, 3, layout) != SQLITE_OK || sqlite3_bind_int(st, 4, hot) != SQLITE_OK
        || bind_text(st, 5, d->name) != SQLITE_OK
        || sqlite3_bind_int(st, 6, d->sm_count) != SQLITE_OK
        || sqlite3_bind_int(st, 7, d->cc_major) != SQLITE_OK
        || sqlite3_bind_int(st, 8, d->cc_minor) != SQLITE_OK) {
        rc = fail(s, "find device", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        found = 1;
        m->id = sqlite3_column_int64(st, 0);
        snprintf(m->name, sizeof m->name, "%s", col_text(st, 1));
        m->cc_major = sqlite3_column_int(st, 2);
        m->cc_minor = sqlite3_column_int(st, 3);
        m->sm_count = sqlite3_column_int(st, 4);
        m->nbest = sqlite3_column_int(st, 5);
        m->level = sqlite3_column_int(st, 6);
    }
    if (r != SQLITE_DONE) {
        rc = fail(s, "find device", e);
        goto done;
    }
    if (!found)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no device of compute capability %d.x has a "
                       "winner for %s %s %s %s", store_path(s), d->cc_major, op, type, layout,
                       hot ? "hot" : "cold");
done:
    sqlite3_finalize(st);
    if (rc != RT_OK)
        memset(m, 0, sizeof *m);
    return rc;
}

int store_list_best_for_device(store *s, long long device_id, const char *op,
                               const char *type, const char *layout, int hot,
                               int (*cb)(const store_best_row *row, void *arg), void *arg,
                               rt_err *e)
{
    static const char sql[] =
        "SELECT d.name, 'sm_' || d.cc_major || d.cc_minor, b.op, b.type, b.layout, b.n, "
        "b.hot, b.kernel_hash, k.family, k.params, b.median_us, b.min_us, b.max_us, b.gbps, "
        "b.frac_bw, b.deterministic "
        "FROM best b JOIN kernels k ON k.hash = b.kernel_hash "
        "JOIN devices d ON d.id = b.device_id "
        "WHERE b.device_id = ?1 AND b.op = ?2 AND b.type = ?3 AND b.layout = ?4 "
        "AND b.hot = ?5 "
        "ORDER BY b.n";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (!cb)
        return rt_seterr(e, RT_EINVAL, "%s: list best for device: no callback", store_path(s));
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, device_id) != SQLITE_OK
        || bind_text(st, 2, op) != SQLITE_OK || bind_text(st, 3, type) != SQLITE_OK
        || bind_text(st, 4, layout) != SQLITE_OK || sqlite3_bind_int(st, 5, hot) != SQLITE_OK) {
        rc = fail(s, "list best for device", e);
        goto done;
    }
    rc = walk_best_rows(s, st, "list best for device", cb, arg, e);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_get_binary_any(store *s, const char *hash, const char *arch, store_binary *b,
                         int *nvrtc_version, rt_err *e)
{
    return get_binary(s, hash, arch, -1, b, nvrtc_version, e);
}
