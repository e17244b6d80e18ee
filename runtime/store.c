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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "embed.h"
#include "family.h"
#include "store.h"

#define BUSY_TIMEOUT_MS 10000
#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

/* The busy timeout as a handler, so that a program can say that it waits (after a second)
 * rather than hang silently: 'arg' is the path, which outlives the connection. */
static void (*wait_notice)(const char *path, int timeout_ms);
void store_set_wait_notice(void (*fn)(const char *path, int timeout_ms))
{
    wait_notice = fn;
}
static int busy_wait(void *arg, int count)
{
    if (count * 10 >= BUSY_TIMEOUT_MS)
        return 0;
    if (count == 100 && wait_notice)
        wait_notice(arg, BUSY_TIMEOUT_MS);
    sqlite3_sleep(10);
    return 1;
}

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
    /* 1 -> 2: segmented layouts record their segmentation. */
    [1] = "ALTER TABLE measurements ADD COLUMN nseg INTEGER NOT NULL DEFAULT 0;"
          "ALTER TABLE measurements ADD COLUMN seg_mean REAL NOT NULL DEFAULT 0;"
          "ALTER TABLE measurements ADD COLUMN seg_spread REAL NOT NULL DEFAULT 0;"
          "ALTER TABLE best ADD COLUMN nseg INTEGER NOT NULL DEFAULT 0;"
          "ALTER TABLE best ADD COLUMN seg_mean REAL NOT NULL DEFAULT 0;"
          "ALTER TABLE best ADD COLUMN seg_spread REAL NOT NULL DEFAULT 0;",
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

/*
 * SQL functions of every connection, for the checks of shipped databases (check_db):
 *   rt_sha256(text)          the SHA-256 of the text's bytes, 64 lower-case hex digits;
 *   rt_plan(family, source)  'segmented' or 'flat': the launch plan the source declares
 *                            ("// @plan ..."), else its family's; NULL when neither says.
 */
static void fn_sha256(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    char hex[RT_HASH_HEX];
    const unsigned char *t = sqlite3_value_text(argv[0]);
    (void)argc;
    if (!t) {
        sqlite3_result_null(cx);
        return;
    }
    hash_hex(t, (size_t)sqlite3_value_bytes(argv[0]), hex);
    sqlite3_result_text(cx, hex, -1, SQLITE_TRANSIENT);
}

static void fn_plan(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const char *fam = (const char *)sqlite3_value_text(argv[0]);
    const char *src = (const char *)sqlite3_value_text(argv[1]);
    const char *p = src ? strstr(src, "// @plan") : NULL;
    const rt_family *f = fam ? family_find(fam) : NULL;
    int seg = -1;
    (void)argc;
    if (p) {
        p += strlen("// @plan");
        p += strspn(p, " \t");
        if (!strncmp(p, "segmented", 9))
            seg = 1;
        else if (!strncmp(p, "onelaunch", 9) || !strncmp(p, "multipass", 9))
            seg = 0;
    }
    if (seg < 0 && f)
        seg = f->plan == PLAN_SEGMENTED;
    if (seg < 0)
        sqlite3_result_null(cx);
    else
        sqlite3_result_text(cx, seg ? "segmented" : "flat", -1, SQLITE_STATIC);
}

static void add_functions(sqlite3 *db)
{
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    sqlite3_create_function(db, "rt_sha256", 1, flags, NULL, fn_sha256, NULL, NULL);
    sqlite3_create_function(db, "rt_plan", 2, flags, NULL, fn_plan, NULL, NULL);
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
 * How a reader opens a file without making anything beside it. An ordinary read-only
 * connection to a WAL-mode database makes a -shm (and a -wal) next to it when they are not
 * there, and may not remove them; so:
 *   READ_PLAIN      a rollback-journal file, or a WAL file whose -wal and -shm both exist (a
 *                   writer has it open, or left them): the ordinary way, which then makes
 *                   nothing new;
 *   READ_IMMUTABLE  a WAL file with no -wal: no writer has it open and every committed page
 *                   is in the file itself: immutable=1 (no locks, no side files);
 *   READ_PRIVATE    a WAL file with a -wal but no -shm (a killed writer's, or a copy of a
 *                   database with its -wal): its committed content is partly in the -wal, and
 *                   reading that needs a -shm. The file and its -wal are copied into a private
 *                   directory and read there, into memory; the copies are removed at once.
 *                   Nothing is written beside the input and no lock is taken on it, so a
 *                   writer that opens it meanwhile is never disturbed; a copy made while one
 *                   did (the files changed, or a -shm appeared) is thrown away and the file
 *                   looked at again (it is then READ_PLAIN or READ_IMMUTABLE).
 * immutable=1 and the private copy take no locks: their result is believed only when the
 * files did not change under them (same_file_state), else the file is read again.
 */
enum { READ_PLAIN, READ_IMMUTABLE, READ_PRIVATE };

static int read_how(const char *path)
{
    int what = FILE_OTHER;

    if (sniff(path, &what, NULL) != RT_OK || what != FILE_SQLITE_WAL)
        return READ_PLAIN;
    if (!file_exists(path, "-wal"))
        return READ_IMMUTABLE;
    return file_exists(path, "-shm") ? READ_PLAIN : READ_PRIVATE;
}

/* The state of path and of path-wal, to see whether either changed while it was read. */
typedef struct file_states {
    struct stat db, wal;
    int have_db, have_wal, have_shm;
} file_states;

static void get_states(const char *path, file_states *f)
{
    char side[PATH_MAX + 8];
    memset(f, 0, sizeof *f);
    f->have_db = stat(path, &f->db) == 0;
    snprintf(side, sizeof side, "%s-wal", path);
    f->have_wal = stat(side, &f->wal) == 0;
    f->have_shm = file_exists(path, "-shm");
}

static int same_states(const file_states *a, const file_states *b)
{
    return a->have_db == b->have_db && a->have_wal == b->have_wal
        && a->have_shm == b->have_shm
        && (!a->have_db || same_file_state(&a->db, &b->db))
        && (!a->have_wal || same_file_state(&a->wal, &b->wal));
}

/* Copy the file 'from' to the new file 'to'. */
static int copy_to(const char *from, const char *to, const char *path, rt_err *e)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = RT_OK;
    ssize_t r;

    if (in < 0)
        return rt_seterr(e, RT_EIO, "%s: %s", from, strerror(errno));
    if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
        rc = rt_seterr(e, RT_EIO, "%s: cannot make a private copy in %s: %s", path, to,
                       strerror(errno));
        goto done;
    }
    while ((r = read(in, buf, sizeof buf)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = rt_seterr(e, RT_EIO, "%s: %s", from, strerror(errno));
            goto done;
        }
        for (ssize_t w, done = 0; done < r; done += w)
            if ((w = write(out, buf + done, (size_t)(r - done))) < 0) {
                if (errno == EINTR) {
                    w = 0;
                    continue;
                }
                rc = rt_seterr(e, RT_EIO, "%s: private copy %s: %s", path, to,
                               strerror(errno));
                goto done;
            }
    }
done:
    if (out >= 0)
        close(out);
    close(in);
    return rc;
}

/*
 * READ_PRIVATE: the database of 'path' with its -wal, read through copies in a private
 * directory into an in-memory, read-only connection *out. *changed = 1 (and *out NULL) when
 * the input changed while it was copied.
 */
static int open_private(const char *path, sqlite3 **out, int *changed, rt_err *e)
{
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], db_copy[PATH_MAX + 8], side[PATH_MAX + 8], wal_copy[PATH_MAX + 8];
    sqlite3 *db = NULL;
    unsigned char *img = NULL;
    sqlite3_int64 size = 0;
    file_states before, after;
    int rc = RT_OK;

    *out = NULL;
    *changed = 0;
    if (snprintf(dir, sizeof dir, "%s/redtune-read-XXXXXX", tmp && *tmp ? tmp : "/tmp")
        >= (int)sizeof dir || !mkdtemp(dir))
        return rt_seterr(e, RT_EIO, "%s: cannot make a private directory to read its -wal "
                         "in: %s", path, strerror(errno));
    snprintf(db_copy, sizeof db_copy, "%s/db", dir);
    snprintf(wal_copy, sizeof wal_copy, "%s/db-wal", dir);
    snprintf(side, sizeof side, "%s-wal", path);
    get_states(path, &before);
    if ((rc = copy_to(path, db_copy, path, e)) || (rc = copy_to(side, wal_copy, path, e)))
        goto done;
    get_states(path, &after);
    if (!same_states(&before, &after)) {
        *changed = 1;
        goto done;
    }
    char *uri = make_uri(db_copy, NULL);
    if (!uri) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK
        || !(img = sqlite3_serialize(db, "main", &size, 0)))
        rc = rt_seterr(e, RT_EDB, "%s: cannot read it with its -wal: %s", path,
                       db ? sqlite3_errmsg(db) : "out of memory");
    free(uri);
    sqlite3_close(db);
    db = NULL;
    if (rc != RT_OK)
        goto done;
    if (size >= 100)
        img[18] = img[19] = 1;   /* the image holds every committed page: rollback mode */
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: cannot open an in-memory database", path);
        goto done;
    }
    /* Taken over by the connection, and freed by SQLite when this fails too. */
    int r = sqlite3_deserialize(db, "main", img, size, size, SQLITE_DESERIALIZE_FREEONCLOSE
                                | SQLITE_DESERIALIZE_READONLY);
    img = NULL;
    if (r != SQLITE_OK) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: cannot read it into memory: %s", path,
                       sqlite3_errmsg(db));
        goto done;
    }
    *out = db;
    db = NULL;
done:
    sqlite3_free(img);
    sqlite3_close(db);
    unlink(db_copy);
    unlink(wal_copy);
    snprintf(side, sizeof side, "%s/db-shm", dir);
    unlink(side);
    rmdir(dir);
    return rc;
}

/*
 * A read-only connection to 'path' that makes nothing beside it (read_how). *how receives
 * the way chosen and 'before' the state of the files before the open (for the caller's
 * same_states check of an immutable read). Errors are RT_EDB naming the path.
 */
static int open_reader(const char *path, sqlite3 **out, int *how, file_states *before,
                       rt_err *e)
{
    for (int tries = 0;; tries++) {
        sqlite3 *db = NULL;
        int changed = 0, rc = RT_OK;

        *out = NULL;
        *how = read_how(path);
        get_states(path, before);
        if (*how == READ_PRIVATE) {
            if ((rc = open_private(path, &db, &changed, e)) != RT_OK)
                return rc;
            if (changed) {
                if (tries < 20) {
                    sqlite3_sleep(5);
                    continue;
                }
                return rt_seterr(e, RT_EDB, "%s: it kept changing while it was read", path);
            }
        } else {
            char *uri = make_uri(path, *how == READ_IMMUTABLE ? "immutable=1" : NULL);
            if (!uri)
                return rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
            if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL)
                != SQLITE_OK) {
                int err = db ? sqlite3_system_errno(db) : 0;
                rc = rt_seterr(e, RT_EDB, "%s: cannot open: %s%s%s%s", path,
                               db ? sqlite3_errmsg(db) : "out of memory", err ? " (" : "",
                               err ? strerror(err) : "", err ? ")" : "");
                sqlite3_close(db);
                db = NULL;
            }
            free(uri);
            if (rc != RT_OK)
                return rc;
        }
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_handler(db, busy_wait, (void *)path);
        add_functions(db);
        *out = db;
        return RT_OK;
    }
}

/*
 * Open a file read-only and classify it, making nothing beside it (open_reader): the file
 * may turn out not to be ours. A refusal made without locks (immutable or private) is
 * believed only when the files did not change under it; otherwise (a redtune process was
 * writing it meanwhile) the file is read again.
 */
static int inspect_sqlite(const char *path, int may_be_new, int *kind, int *version,
                          rt_err *e)
{
    for (int tries = 0;; tries++) {
        sqlite3 *db = NULL;
        file_states before, after;
        int how, rc = open_reader(path, &db, &how, &before, e);
        if (rc != RT_OK)
            return rc;
        rc = classify(db, path, may_be_new, kind, version, e);
        sqlite3_close(db);
        if (how == READ_PLAIN || (rc == RT_OK && *kind != DB_REFUSED) || tries >= 20)
            return rc;
        get_states(path, &after);
        if (rc == RT_OK && same_states(&before, &after))
            return rc;
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
        rc = inspect_sqlite(path, mode == STORE_WRITE, kind, version, e);
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

    if (!(s = calloc(1, sizeof *s)) || !(s->path = strdup(path))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (mode == STORE_READ) {
        file_states before;
        int how;
        if ((rc = open_reader(path, &db, &how, &before, e)) != RT_OK)
            goto done;
        /* Look again on this connection: the file may have changed since inspect(). */
        if ((rc = exec_sql(db, path, "PRAGMA query_only = ON", "set query_only", e))
            || (rc = classify(db, path, 0, &kind, &version, e)))
            goto done;
        if (kind != DB_CURRENT) {
            rc = kind == DB_OLDER ? refuse_older(path, version, e) : RT_EDB;
            goto done;
        }
    } else {
        if (!(uri = make_uri(path, NULL))) {
            rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
            goto done;
        }
        flags = SQLITE_OPEN_URI | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        if (sqlite3_open_v2(uri, &db, flags, NULL) != SQLITE_OK) {
            int err = db ? sqlite3_system_errno(db) : 0;
            rc = rt_seterr(e, RT_EIO, "%s: cannot open: %s%s%s%s", path,
                           db ? sqlite3_errmsg(db) : "out of memory", err ? " (" : "",
                           err ? strerror(err) : "", err ? ")" : "");
            goto done;
        }
        sqlite3_extended_result_codes(db, 1);
        sqlite3_busy_handler(db, busy_wait, (void *)path);
        add_functions(db);
        if (sqlite3_db_readonly(db, "main") == 1) {
            rc = rt_seterr(e, RT_EIO, "%s: cannot write: opened read-only", path);
            goto done;
        }
        if ((rc = exec_sql(db, path, "PRAGMA foreign_keys = ON", "enable foreign keys", e))
            || (rc = set_wal(db, path, e)))
            goto done;
        if (kind != DB_CURRENT && (rc = setup_schema(db, path, e)) != RT_OK)
            goto done;
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

int store_get_checked_source(store *s, const char *hash, char **source, rt_err *e)
{
    char sum[RT_HASH_HEX];
    int rc = store_get_kernel_source(s, hash, source, e);

    if (rc != RT_OK)
        return rc;
    hash_hex(*source, strlen(*source), sum);
    if (strcmp(sum, hash) != 0) {
        free(*source);
        *source = NULL;
        return rt_seterr(e, RT_EDB, "%s: kernel %s: the SHA-256 of its source is %s, not its "
                         "hash: the database was altered after the kernel was stored; it is "
                         "not run", s->path, hash, sum);
    }
    return RT_OK;
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
        "verified, deterministic, nseg, seg_mean, seg_spread) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
        "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)";
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
        || sqlite3_bind_int64(st, 19, m->nseg) != SQLITE_OK
        || sqlite3_bind_double(st, 20, m->seg_mean) != SQLITE_OK
        || sqlite3_bind_double(st, 21, m->seg_spread) != SQLITE_OK
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
        "min_us, max_us, reps, gbps, frac_bw, deterministic, nseg, seg_mean, seg_spread) "
        "SELECT device_id, op, type, layout, n, hot, kernel_hash, median_us, min_us, max_us, "
        "reps, gbps, frac_bw, deterministic, nseg, seg_mean, seg_spread FROM measurements "
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
            .nseg = sqlite3_column_int64(st, 16),
            .seg_mean = sqlite3_column_double(st, 17),
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
        "b.frac_bw, b.deterministic, b.nseg, b.seg_mean "
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
        "WHERE b.op = ?1 AND b.type = ?2 AND (b.layout = ?3 OR b.layout LIKE ?3 || ':%') AND b.hot = ?4 "
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
        "b.frac_bw, b.deterministic, b.nseg, b.seg_mean "
        "FROM best b JOIN kernels k ON k.hash = b.kernel_hash "
        "JOIN devices d ON d.id = b.device_id "
        "WHERE b.device_id = ?1 AND b.op = ?2 AND b.type = ?3 AND (b.layout = ?4 OR b.layout LIKE ?4 || ':%') "
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

/* ---------------------------------------------------------------- shipping: export, merge,
 * dump, load (redtune export | merge | dump | load)
 *
 * The output is built in an in-memory database with the schema of db/schema.sql, then
 * written whole (sqlite3_serialize) into a file of the output's directory that has no name
 * until it is complete (O_TMPFILE; a dot-named temporary file where the filesystem has none)
 * and linked or renamed into place: a killed command never leaves a half file under the
 * output's name, and the output is in rollback-journal mode, so its readers create no -wal
 * or -shm. Inputs are opened with STORE_READ (no side files, never written), checked
 * (PRAGMA quick_check), read whole into memory and attached as schema "src".
 *
 * Column lists come from the output's schema (pragma_table_info), and rows are matched by
 * their tables' own keys (the primary key; for measurements its UNIQUE constraint), so a
 * column added to db/schema.sql travels through export, merge, dump and load unchanged.
 */

/* A growing text buffer; 'oom' is set (and the text left as it was) once an append fails. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_raw(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        sb_raw(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_raw(b, big, (size_t)n);
    free(big);
}

/* The columns of one table, in their order; pk: position in the primary key (0: none). */
#define SHIP_MAX_COLS 64
typedef struct cols {
    int n;
    char name[SHIP_MAX_COLS][64];
    int pk[SHIP_MAX_COLS];
} cols;

/* Step a statement whose rows are (name [, pk]) into 'c'. */
static int read_cols(sqlite3 *db, const char *path, sqlite3_stmt *st, const char *table,
                     cols *c, rt_err *e)
{
    int r;
    c->n = 0;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (c->n == SHIP_MAX_COLS)
            return rt_seterr(e, RT_EDB, "%s: table %s has more than %d columns", path, table,
                             SHIP_MAX_COLS);
        snprintf(c->name[c->n], sizeof c->name[0], "%s", col_text(st, 0));
        c->pk[c->n] = sqlite3_column_count(st) > 1 ? sqlite3_column_int(st, 1) : 0;
        c->n++;
    }
    return r == SQLITE_DONE ? RT_OK : db_fail(db, path, "read the columns", e);
}

/* The columns of 'table' in schema 'schema' of 'db'. */
static int table_cols(sqlite3 *db, const char *path, const char *schema, const char *table,
                      cols *c, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, "SELECT name, pk FROM pragma_table_info(?1, ?2) ORDER BY cid",
                           -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, table) != SQLITE_OK || bind_text(st, 2, schema) != SQLITE_OK)
        rc = db_fail(db, path, "read the columns", e);
    else
        rc = read_cols(db, path, st, table, c, e);
    sqlite3_finalize(st);
    if (rc == RT_OK && c->n == 0)
        rc = rt_seterr(e, RT_EDB, "%s: no table %s", path, table);
    return rc;
}

/*
 * The columns that identify a row of 'table' of the main schema across databases, in key
 * order: its first UNIQUE constraint's when 'unique' (measurements: its id is a row number
 * only), else its primary key's.
 */
static int key_cols(sqlite3 *db, const char *path, const char *table, int unique, cols *c,
                    rt_err *e)
{
    static const char by_unique[] =
        "SELECT ii.name FROM pragma_index_list(?1) AS il, pragma_index_info(il.name) AS ii "
        "WHERE il.origin = 'u' AND il.seq = (SELECT min(seq) FROM pragma_index_list(?1) "
        "WHERE origin = 'u') ORDER BY ii.seqno";
    static const char by_pk[] =
        "SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk";
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, unique ? by_unique : by_pk, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, table) != SQLITE_OK)
        rc = db_fail(db, path, "read the keys", e);
    else
        rc = read_cols(db, path, st, table, c, e);
    sqlite3_finalize(st);
    if (rc == RT_OK && c->n == 0)
        rc = rt_seterr(e, RT_EDB, "%s: table %s has no %s", path, table,
                       unique ? "UNIQUE constraint" : "primary key");
    return rc;
}

static int in_cols(const cols *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name))
            return 1;
    return 0;
}

/*
 * Append the columns of 'c' but 'skip' (NULL: none) as a comma list: each as
 * prefix"name", or as the expression that 'map' gives for it (pairs {name, expr}, ending
 * with {NULL}).
 */
static void sb_cols(sbuf *b, const cols *c, const char *prefix, const char *skip,
                    const char *const (*map)[2])
{
    int first = 1;
    for (int i = 0; i < c->n; i++) {
        const char *expr = NULL;
        if (skip && !strcmp(c->name[i], skip))
            continue;
        for (int k = 0; map && map[k][0]; k++)
            if (!strcmp(map[k][0], c->name[i]))
                expr = map[k][1];
        int plain = strspn(c->name[i], "abcdefghijklmnopqrstuvwxyz_0123456789")
                    == strlen(c->name[i]);
        if (expr)
            sb_add(b, "%s%s", first ? "" : ", ", expr);
        else
            sb_add(b, plain ? "%s%s%s" : "%s%s\"%s\"", first ? "" : ", ", prefix, c->name[i]);
        first = 0;
    }
}

/* Append "t.c = x.c AND ..." over the columns of 'c'. */
static void sb_equal(sbuf *b, const cols *c, const char *t, const char *x)
{
    for (int i = 0; i < c->n; i++)
        sb_add(b, "%s%s.\"%s\" = %s.\"%s\"", i ? " AND " : "", t, c->name[i], x, c->name[i]);
}

/* Append "c = excluded.c, ..." over the columns of 'all' that are not in 'key' or 'skip'. */
static void sb_update(sbuf *b, const cols *all, const cols *key, const char *skip)
{
    int first = 1;
    for (int i = 0; i < all->n; i++) {
        if (in_cols(key, all->name[i]) || (skip && !strcmp(all->name[i], skip)))
            continue;
        sb_add(b, "%s\"%s\" = excluded.\"%s\"", first ? "" : ", ", all->name[i],
               all->name[i]);
        first = 0;
    }
}

/* Run the text of 'b' (one or more statements, no results) on 'db'. */
static int run_sb(sqlite3 *db, const char *path, sbuf *b, const char *what, rt_err *e)
{
    if (b->oom)
        return rt_seterr(e, RT_ENOMEM, "%s: %s: out of memory", path, what);
    return exec_sql(db, path, b->p, what, e);
}

/* A new in-memory database with the schema: the output under construction. */
static int mem_new(const char *label, sqlite3 **out, rt_err *e)
{
    const rt_embedded *schema = embed_find("db/schema.sql");
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if (!schema)
        return rt_seterr(e, RT_EDB, "%s: db/schema.sql is not built into this redtune", label);
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
        != SQLITE_OK) {
        sqlite3_close(db);
        return rt_seterr(e, RT_ENOMEM, "%s: cannot open an in-memory database", label);
    }
    sqlite3_extended_result_codes(db, 1);
    add_functions(db);
    if ((rc = exec_sql(db, label, schema->text, "create schema", e)) != RT_OK) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return RT_OK;
}

/* PRAGMA quick_check of schema 'schema': "ok", else RT_EDB "corrupt database". */
static int quick_check(sqlite3 *db, const char *schema, const char *path, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    char sql[64];
    int rc = RT_OK;

    snprintf(sql, sizeof sql, "PRAGMA %s.quick_check(1)", schema);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_ROW)
        rc = rt_seterr(e, RT_EDB, "%s: corrupt database (PRAGMA quick_check): %s", path,
                       sqlite3_errmsg(db));
    else if (strcmp(col_text(st, 0), "ok") != 0) {
        rc = rt_seterr(e, RT_EDB, "%s: corrupt database (PRAGMA quick_check): %s", path,
                       col_text(st, 0));
        for (char *c = e ? e->msg : NULL; c && *c; c++)
            if (*c == '\n')
                *c = ' ';   /* one line: SQLite's answer spans several */
    }
    sqlite3_finalize(st);
    return rc;
}

int store_quick_check(store *s, rt_err *e)
{
    return quick_check(s->db, "main", s->path, e);
}

/* The first row of a query whose one column says what is wrong: RT_EDB "path: check: it";
 * RT_OK when there is no row. */
static int refuse_first(sqlite3 *db, const char *path, const char *check, const char *sql,
                        rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = rt_seterr(e, RT_EDB, "%s: %s: %s", path, check, sqlite3_errmsg(db));
        goto done;
    }
    if ((r = sqlite3_step(st)) == SQLITE_ROW)
        rc = rt_seterr(e, RT_EDB, "%s: %s: %s", path, check, col_text(st, 0));
    else if (r != SQLITE_DONE)
        rc = rt_seterr(e, RT_EDB, "%s: %s: %s", path, check, sqlite3_errmsg(db));
done:
    sqlite3_finalize(st);
    return rc;
}

/* No text value of 'schema' holds a NUL byte: a dump could not carry it (SQL text ends at
 * the NUL), and no redtune row has one. */
static int check_no_nul(sqlite3 *db, const char *schema, const char *path, rt_err *e)
{
    int rc = RT_OK;
    for (int i = 0; rc == RT_OK && i < N_TABLES; i++) {
        cols c;
        sbuf q = {0};
        if ((rc = table_cols(db, path, schema, redtune_tables[i], &c, e)) != RT_OK)
            return rc;
        sb_add(&q, "SELECT printf('table %s, row %%d, column %%s: text holding a NUL byte', "
               "r, bad) FROM (SELECT rowid AS r, CASE", redtune_tables[i]);
        for (int k = 0; k < c.n; k++)
            sb_add(&q, " WHEN typeof(\"%s\") = 'text' AND instr(CAST(\"%s\" AS BLOB), X'00') "
                   "THEN '%s'", c.name[k], c.name[k], c.name[k]);
        sb_add(&q, " END AS bad FROM %s.\"%s\") WHERE bad IS NOT NULL LIMIT 1", schema,
               redtune_tables[i]);
        rc = q.oom ? rt_seterr(e, RT_ENOMEM, "%s: out of memory", path)
                   : refuse_first(db, path, "text check", q.p, e);
        free(q.p);
    }
    return rc;
}

/*
 * The checks of every database a shipping command reads or writes (schema 'schema' of 'db',
 * named 'path' in the messages); the first that fails refuses it whole, RT_EDB:
 *   PRAGMA quick_check and PRAGMA foreign_key_check;
 *   each kernel's hash is the SHA-256 of its source (an edited source is not taken);
 *   no text value holds a NUL byte (check_no_nul);
 *   the median of each "ok" measurement and of each best row is a positive, finite number;
 *   each best row's kernel has the launch plan of its layout (a segmented kernel for
 *   keys:/offsets: layouts, a flat one for "flat").
 * These check that a database is consistent, not that its numbers are true: a database is
 * trusted for its timings (docs/api.md, "What the library trusts").
 */
static int check_db(sqlite3 *db, const char *schema, const char *path, rt_err *e)
{
    char sql[1024];
    int rc;

    if ((rc = quick_check(db, schema, path, e)) != RT_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT printf('row %%d of table %%s refers to a row of table "
             "%%s that is not there', rowid, \"table\", parent) FROM "
             "pragma_foreign_key_check(NULL, '%s') LIMIT 1", schema);
    if ((rc = refuse_first(db, path, "inconsistent database (PRAGMA foreign_key_check)", sql,
                           e)) != RT_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT printf('kernel %%s: the SHA-256 of its source is %%s, "
             "not its hash (the kernel row was altered)', hash, rt_sha256(source)) FROM "
             "%s.kernels WHERE rt_sha256(source) IS NOT hash LIMIT 1", schema);
    if ((rc = refuse_first(db, path, "kernel hash check", sql, e)) != RT_OK
        || (rc = check_no_nul(db, schema, path, e)) != RT_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT printf('measurement %%d (kernel %%.12s, %%s %%s %%s n=%%d): "
             "median_us %%s is not a positive finite time', id, kernel_hash, op, type, layout, "
             "n, quote(median_us)) FROM %s.measurements WHERE status = 'ok' AND NOT "
             "(typeof(median_us) IN ('real', 'integer') AND median_us > 0 AND median_us < "
             "9e999) LIMIT 1", schema);
    if ((rc = refuse_first(db, path, "time check", sql, e)) != RT_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT printf('best row of device %%d, %%s %%s %%s n=%%d: "
             "median_us %%s is not a positive finite time', device_id, op, type, layout, n, "
             "quote(median_us)) FROM %s.best WHERE NOT (typeof(median_us) IN ('real', "
             "'integer') AND median_us > 0 AND median_us < 9e999) LIMIT 1", schema);
    if ((rc = refuse_first(db, path, "time check", sql, e)) != RT_OK)
        return rc;
    snprintf(sql, sizeof sql, "SELECT printf('best row of device %%d, %%s %%s %%s n=%%d: "
             "kernel %%.12s is a %%s kernel', device_id, op, type, layout, n, kernel_hash, "
             "plan) FROM (SELECT b.*, rt_plan(k.family, k.source) AS plan FROM %s.best b "
             "JOIN %s.kernels k ON k.hash = b.kernel_hash) WHERE plan IS NOT NULL AND "
             "(plan = 'segmented') <> (layout <> 'flat') LIMIT 1", schema, schema);
    return refuse_first(db, path, "layout check", sql, e);
}

/*
 * Attach an image of a database (sqlite3_malloc'd; taken over, freed here on failure) to
 * 'dst' as schema "src", read-only. A WAL-mode image is marked rollback-mode first: the
 * in-memory reader does not do WAL, and the image holds every committed page already.
 */
static int attach_image(sqlite3 *dst, const char *path, unsigned char *img,
                        sqlite3_int64 size, rt_err *e)
{
    int rc;
    if (size >= 100)
        img[18] = img[19] = 1;
    if ((rc = exec_sql(dst, path, "ATTACH ':memory:' AS src", "attach", e)) != RT_OK) {
        sqlite3_free(img);
        return rc;
    }
    if (sqlite3_deserialize(dst, "src", img, size, size,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY)
        != SQLITE_OK) {
        rc = db_fail(dst, path, "read whole", e);
        sqlite3_exec(dst, "DETACH src", NULL, NULL, NULL);
    }
    return rc;
}

/* Open the redtune database 'path' read-only, check it and attach it whole as "src"; a
 * refused input (missing, foreign, corrupt, newer) is named in st->refused. */
static int attach_db(sqlite3 *dst, const char *path, store_ship_stats *st, rt_err *e)
{
    store *s = NULL;
    sqlite3_int64 size = 0;
    unsigned char *img;
    int rc;

    if ((rc = store_open(path, STORE_READ, &s, e)) != RT_OK
        || (rc = check_db(s->db, "main", path, e)) != RT_OK) {
        st->refused = path;
        store_close(s);
        return rc;
    }
    if (!(img = sqlite3_serialize(s->db, "main", &size, 0))) {
        rc = rt_seterr(e, RT_EDB, "%s: corrupt database or out of memory reading it whole: %s",
                       path, sqlite3_errmsg(s->db));
        st->refused = path;
    } else {
        rc = attach_image(dst, path, img, size, e);
    }
    store_close(s);
    return rc;
}

/* What copy_from takes from "src". */
typedef struct copy_opts {
    const char *const *match;   /* export: device name substrings (any case); NULL: all */
    int nmatch;
    int measurements;           /* measurements and runs too */
    int everything;             /* merge, load: every kernel and binary; export: those the
                                 * copied rows need, CUBINs of the best kernels only */
} copy_opts;

#define DEVICE_MATCH \
    "((s.uuid IS NOT NULL AND d.uuid = s.uuid) OR (s.uuid IS NULL AND d.uuid IS NULL " \
    "AND d.name = s.name AND d.ordinal = s.ordinal))"

/* temp.ship_pick: the ids of the devices of "src" to copy. */
static int pick_devices(sqlite3 *db, const char *path, const copy_opts *o, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = exec_sql(db, path, "CREATE TEMP TABLE ship_pick (id INTEGER PRIMARY KEY)",
                      "pick devices", e);
    if (rc != RT_OK)
        return rc;
    if (!o->match)
        return exec_sql(db, path, "INSERT INTO temp.ship_pick SELECT id FROM src.devices",
                        "pick devices", e);
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO temp.ship_pick SELECT id FROM "
                           "src.devices WHERE instr(lower(name), lower(?1)) > 0", -1, &st,
                           NULL) != SQLITE_OK)
        rc = db_fail(db, path, "pick devices", e);
    for (int i = 0; rc == RT_OK && i < o->nmatch; i++) {
        if (bind_text(st, 1, o->match[i]) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE
            || sqlite3_reset(st) != SQLITE_OK)
            rc = db_fail(db, path, "pick devices", e);
    }
    sqlite3_finalize(st);
    return rc;
}

/* No device matched: say which ones the input holds. */
static int no_match(sqlite3 *db, const char *path, const copy_opts *o, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    sbuf want = {0};
    for (int i = 0; i < o->nmatch; i++)
        sb_add(&want, "%s'%s'", i ? " or " : "", o->match[i]);
    int ok = sqlite3_prepare_v2(db, "SELECT group_concat(name, ', ') FROM "
                                "(SELECT DISTINCT name FROM src.devices ORDER BY name)",
                                -1, &st, NULL) == SQLITE_OK
          && sqlite3_step(st) == SQLITE_ROW;
    const char *have = ok ? col_text(st, 0) : "?";
    int rc = rt_seterr(e, RT_ENOTFOUND, "%s: no device matches %s (it holds: %s)", path,
                       want.p ? want.p : "", *have ? have : "no devices");
    sqlite3_finalize(st);
    free(want.p);
    return rc;
}

/* How many rows a query counts. */
static int count_rows(sqlite3 *db, const char *path, const char *sql, long long *n, rt_err *e)
{
    return query_int(db, path, sql, NULL, n, e);
}

/*
 * Copy from the attached "src" into main what 'o' asks for: devices matched by uuid (else
 * name and ordinal) and given main's ids; kernels and binaries by their keys, a row main
 * has already kept; runs by (device, start, command line); measurements by their UNIQUE
 * key, the faster verified "ok" one kept on a conflict (an unverified one never replaces);
 * best by its key, the lower median kept on a conflict, a best row left out when its own
 * measurement in "src" is there and not a verified "ok" one.
 */
static int copy_from(sqlite3 *db, const char *path, const copy_opts *o,
                     store_ship_stats *st, rt_err *e)
{
    cols dev, run, kern, bin, meas, best, mkey, bkey;
    sbuf b = {0};
    long long picked = 0;
    int rc;

    if ((rc = table_cols(db, path, "main", "devices", &dev, e))
        || (rc = table_cols(db, path, "main", "runs", &run, e))
        || (rc = table_cols(db, path, "main", "kernels", &kern, e))
        || (rc = table_cols(db, path, "main", "binaries", &bin, e))
        || (rc = table_cols(db, path, "main", "measurements", &meas, e))
        || (rc = table_cols(db, path, "main", "best", &best, e))
        || (rc = key_cols(db, path, "measurements", 1, &mkey, e))
        || (rc = key_cols(db, path, "best", 0, &bkey, e)))
        return rc;
    if ((rc = exec_sql(db, path, "BEGIN", "begin transaction", e)) != RT_OK)
        return rc;
    if ((rc = pick_devices(db, path, o, e)) != RT_OK
        || (rc = count_rows(db, path, "SELECT count(*) FROM temp.ship_pick", &picked, e)))
        goto done;
    if (picked == 0 && o->match) {
        rc = no_match(db, path, o, e);
        goto done;
    }

    /* Devices, and the map of their ids. */
    sb_add(&b, "INSERT INTO main.devices (");
    sb_cols(&b, &dev, "", "id", NULL);
    sb_add(&b, ") SELECT ");
    sb_cols(&b, &dev, "s.", "id", NULL);
    sb_add(&b, " FROM src.devices s WHERE s.id IN (SELECT id FROM temp.ship_pick) AND NOT "
           "EXISTS (SELECT 1 FROM main.devices d WHERE " DEVICE_MATCH ") ORDER BY s.id;\n"
           "CREATE TEMP TABLE ship_devmap AS SELECT s.id AS src, min(d.id) AS dst FROM "
           "src.devices s JOIN main.devices d ON " DEVICE_MATCH " WHERE s.id IN "
           "(SELECT id FROM temp.ship_pick) GROUP BY s.id;\n");

    /* Kernels: every one, or those of the rows copied. */
    sb_add(&b, "CREATE TEMP TABLE ship_need (hash TEXT PRIMARY KEY);\n");
    if (o->everything)
        sb_add(&b, "INSERT INTO temp.ship_need SELECT hash FROM src.kernels;\n");
    else
        sb_add(&b, "INSERT OR IGNORE INTO temp.ship_need SELECT kernel_hash FROM src.best "
               "WHERE device_id IN (SELECT id FROM temp.ship_pick);\n");
    if (!o->everything && o->measurements)
        sb_add(&b, "INSERT OR IGNORE INTO temp.ship_need SELECT kernel_hash FROM "
               "src.measurements WHERE device_id IN (SELECT id FROM temp.ship_pick);\n");
    sb_add(&b, "INSERT OR IGNORE INTO main.kernels (");
    sb_cols(&b, &kern, "", NULL, NULL);
    sb_add(&b, ") SELECT ");
    sb_cols(&b, &kern, "", NULL, NULL);
    sb_add(&b, " FROM src.kernels WHERE hash IN (SELECT hash FROM temp.ship_need) "
           "ORDER BY hash;\n");

    /* CUBINs: every one, or those of the best kernels for the copied devices' arches. */
    sb_add(&b, "INSERT OR IGNORE INTO main.binaries (");
    sb_cols(&b, &bin, "", NULL, NULL);
    sb_add(&b, ") SELECT ");
    sb_cols(&b, &bin, "", NULL, NULL);
    if (o->everything)
        sb_add(&b, " FROM src.binaries WHERE true");
    else
        sb_add(&b, " FROM src.binaries WHERE hash IN (SELECT kernel_hash FROM src.best WHERE "
               "device_id IN (SELECT id FROM temp.ship_pick)) AND arch IN (SELECT 'sm_' || "
               "cc_major || cc_minor FROM src.devices WHERE id IN (SELECT id FROM "
               "temp.ship_pick))");
    sb_add(&b, " ORDER BY hash, arch, nvrtc_version;\n");

    if (o->measurements) {
        static const char *const run_map[][2] = {{"device_id", "m.dst"}, {NULL, NULL}};
        static const char *const meas_map[][2] = {
            {"device_id", "m.dst"}, {"run_id", "r.dst"}, {NULL, NULL}};
        /* Runs, and the map of their ids. */
        sb_add(&b, "INSERT INTO main.runs (");
        sb_cols(&b, &run, "", "id", NULL);
        sb_add(&b, ") SELECT ");
        sb_cols(&b, &run, "s.", "id", run_map);
        sb_add(&b, " FROM src.runs s JOIN temp.ship_devmap m ON m.src = s.device_id WHERE NOT "
               "EXISTS (SELECT 1 FROM main.runs x WHERE x.device_id = m.dst AND x.started_at "
               "= s.started_at AND x.cmdline = s.cmdline) ORDER BY s.id;\n"
               "CREATE TEMP TABLE ship_runmap AS SELECT s.id AS src, min(x.id) AS dst FROM "
               "src.runs s JOIN temp.ship_devmap m ON m.src = s.device_id JOIN main.runs x ON "
               "x.device_id = m.dst AND x.started_at = s.started_at AND x.cmdline = "
               "s.cmdline GROUP BY s.id;\n");
        /* Measurements: a verified ok one replaces one that is not, or a slower one. */
        sb_add(&b, "INSERT INTO main.measurements AS t (");
        sb_cols(&b, &meas, "", "id", NULL);
        sb_add(&b, ") SELECT ");
        sb_cols(&b, &meas, "s.", "id", meas_map);
        sb_add(&b, " FROM src.measurements s JOIN temp.ship_devmap m ON m.src = s.device_id "
               "LEFT JOIN temp.ship_runmap r ON r.src = s.run_id WHERE true ORDER BY ");
        sb_cols(&b, &mkey, "s.", NULL, NULL);
        sb_add(&b, " ON CONFLICT (");
        sb_cols(&b, &mkey, "", NULL, NULL);
        sb_add(&b, ") DO UPDATE SET ");
        sb_update(&b, &meas, &mkey, "id");
        sb_add(&b, " WHERE excluded.status = 'ok' AND excluded.verified = 1 AND NOT "
               "(t.status = 'ok' AND t.verified = 1 AND t.median_us <= excluded.median_us);\n");
    }

    /* Best: the lower median on a conflict, and only a row that a verified "ok"
     * measurement of the same kernel and case in the same input backs. An input with no
     * measurement of the device at all (an export made without --with-measurements) has
     * nothing to back its rows with: they are taken as they are, checked by check_db. */
    {
        static const char *const best_map[][2] = {{"device_id", "m.dst"}, {NULL, NULL}};
        cols both = {0};   /* best's key columns that measurements has too */
        sbuf backed = {0}, count = {0};
        for (int i = 0; i < bkey.n; i++)
            if (in_cols(&meas, bkey.name[i]))
                both.n++, memcpy(both.name[both.n - 1], bkey.name[i], sizeof both.name[0]);
        sb_add(&backed, "(EXISTS (SELECT 1 FROM src.measurements x WHERE x.kernel_hash = "
               "s.kernel_hash AND ");
        sb_equal(&backed, &both, "x", "s");
        sb_add(&backed, " AND x.status = 'ok' AND x.verified = 1) OR NOT EXISTS (SELECT 1 "
               "FROM src.measurements x WHERE x.device_id = s.device_id))");
        sb_add(&count, "SELECT count(*) FROM src.best s JOIN temp.ship_devmap m ON m.src = "
               "s.device_id WHERE NOT %s", backed.p ? backed.p : "");
        sb_add(&b, "INSERT INTO main.best AS t (");
        sb_cols(&b, &best, "", NULL, NULL);
        sb_add(&b, ") SELECT ");
        sb_cols(&b, &best, "s.", NULL, best_map);
        sb_add(&b, " FROM src.best s JOIN temp.ship_devmap m ON m.src = s.device_id WHERE %s "
               "ORDER BY ", backed.p ? backed.p : "");
        sb_cols(&b, &bkey, "s.", NULL, NULL);
        sb_add(&b, " ON CONFLICT (");
        sb_cols(&b, &bkey, "", NULL, NULL);
        sb_add(&b, ") DO UPDATE SET ");
        sb_update(&b, &best, &bkey, NULL);
        sb_add(&b, " WHERE excluded.median_us < t.median_us;\n");
        if (backed.oom || count.oom)
            b.oom = 1;
        long long n = 0;
        if (!b.oom && (rc = run_sb(db, path, &b, "copy", e)) == RT_OK
            && (rc = count_rows(db, path, count.p, &n, e)) == RT_OK)
            st->left_out += n;
        free(backed.p);
        free(count.p);
        if (b.oom)
            rc = rt_seterr(e, RT_ENOMEM, "%s: copy: out of memory", path);
        if (rc != RT_OK)
            goto done;
    }
    rc = exec_sql(db, path, "COMMIT", "commit", e);
done:
    if (rc != RT_OK)
        tx_rollback(db);
    sqlite3_exec(db, "DROP TABLE IF EXISTS temp.ship_pick; DROP TABLE IF EXISTS "
                 "temp.ship_devmap; DROP TABLE IF EXISTS temp.ship_need; DROP TABLE IF "
                 "EXISTS temp.ship_runmap", NULL, NULL, NULL);
    free(b.p);
    return rc;
}

/* copy_from, then let "src" go. */
static int copy_detach(sqlite3 *db, const char *path, const copy_opts *o,
                       store_ship_stats *st, rt_err *e)
{
    int rc = copy_from(db, path, o, st, e);
    return rc == RT_OK ? exec_sql(db, path, "DETACH src", "detach", e) : rc;
}

/* Fill the row counts of 'st' from the output 'db'. */
static int ship_counts(sqlite3 *db, const char *path, store_ship_stats *st, rt_err *e)
{
    long long n[6];
    static const char *const q[6] = {
        "SELECT count(*) FROM devices", "SELECT count(*) FROM best",
        "SELECT count(*) FROM kernels", "SELECT count(*) FROM binaries",
        "SELECT count(*) FROM measurements", "SELECT count(*) FROM runs"};
    for (int i = 0; i < 6; i++) {
        int rc = count_rows(db, path, q[i], &n[i], e);
        if (rc != RT_OK)
            return rc;
    }
    st->devices = n[0];
    st->best = n[1];
    st->kernels = n[2];
    st->binaries = n[3];
    st->measurements = n[4];
    st->runs = n[5];
    return RT_OK;
}

/* Write data[0..len) to a file of dir that has no name yet (O_TMPFILE), else to a new
 * dot-named one whose name goes into tmp; the open descriptor, or -1 with errno set. */
static int open_unnamed(const char *dir, const char *base, char *tmp, size_t tmplen)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    tmp[0] = '\0';
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    if (snprintf(tmp, tmplen, "%s/.%s.XXXXXX", dir, base) >= (int)tmplen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkstemp(tmp);
    if (fd < 0)
        tmp[0] = '\0';
    else
        fchmod(fd, 0644);
    return fd;
}

/*
 * The output 'path' may be written (store_check_output): a regular file, or none. A
 * symbolic link, even to a regular file, is refused rather than followed or replaced: the
 * output is renamed into place whole, which replaces the link itself, and writing through it
 * instead would give up writing whole (a FIFO or a terminal) or write outside the directory
 * named; the message says to name the target. The same goes for every other kind of file.
 */
int store_check_output(const char *path, int force, const char *const *in, int nin,
                       rt_err *e)
{
    struct stat out, st;

    if (!path || !*path)
        return rt_seterr(e, RT_EINVAL, "no output file");
    if (lstat(path, &out) == 0) {
        if (S_ISLNK(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a symbolic link: an output is not written "
                             "through one (name the file it points to, or remove the link)",
                             path);
        if (S_ISDIR(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a directory", path);
        if (!S_ISREG(out.st_mode))
            return rt_seterr(e, RT_EIO, "%s: not a regular file: an output is written whole "
                             "into a new file and renamed into place", path);
        for (int i = 0; i < nin; i++)
            if (in[i] && stat(in[i], &st) == 0 && st.st_dev == out.st_dev
                && st.st_ino == out.st_ino)
                return rt_seterr(e, RT_EIO, "%s: is the input %s (the same file): write the "
                                 "output elsewhere", path, in[i]);
        if (!force)
            return rt_seterr(e, RT_EIO, "%s: exists (--force overwrites it)", path);
    }
    return check_dir(path, e);
}

int store_write_file(const char *path, const void *data, size_t len, int force, rt_err *e)
{
    return store_write_output(path, data, len, force, NULL, 0, e);
}

int store_write_output(const char *path, const void *data, size_t len, int force,
                       const char *const *in, int nin, rt_err *e)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 32], via[64];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *p = data;
    int fd, rc = RT_OK;

    if (!*base)
        return rt_seterr(e, RT_EINVAL, "%s: not a file name", path);
    if (!slash)
        strcpy(dir, ".");
    else if (snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path)
             >= (int)sizeof dir)
        return rt_seterr(e, RT_EIO, "%s: path too long", path);
    if ((rc = store_check_output(path, force, in, nin, e)) != RT_OK)
        return rc;
    if ((fd = open_unnamed(dir, base, tmp, sizeof tmp)) < 0)
        return rt_seterr(e, RT_EIO, "%s: cannot create a file in %s: %s", path, dir,
                         strerror(errno));
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            rc = rt_seterr(e, RT_EIO, "%s: write: %s", path, strerror(errno));
            goto done;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) {
        rc = rt_seterr(e, RT_EIO, "%s: fsync: %s", path, strerror(errno));
        goto done;
    }
    if (!tmp[0]) {
        /* Give the unnamed file a name: the output's, or (to replace it) a temporary one. */
        snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
        if (!force) {
            if (linkat(AT_FDCWD, via, AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0)
                rc = rt_seterr(e, RT_EIO, "%s: %s", path, errno == EEXIST
                               ? "exists (--force overwrites it)" : strerror(errno));
            goto done;
        }
        snprintf(tmp, sizeof tmp, "%s/.%s.%ld", dir, base, (long)getpid());
        unlink(tmp);
        if (linkat(AT_FDCWD, via, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0) {
            rc = rt_seterr(e, RT_EIO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
            tmp[0] = '\0';
            goto done;
        }
    }
    if (force ? rename(tmp, path) != 0 : link(tmp, path) != 0)
        rc = rt_seterr(e, RT_EIO, "%s: %s", path, errno == EEXIST
                       ? "exists (--force overwrites it)" : strerror(errno));
    else if (force)
        tmp[0] = '\0';   /* renamed: nothing left to remove */
done:
    if (tmp[0])
        unlink(tmp);
    close(fd);
    if (rc == RT_OK && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        fsync(fd);   /* the new name, on disk */
        close(fd);
    }
    return rc;
}

/* Check the in-memory output as its inputs were checked (an output that fails is refused,
 * named in st->refused), then write it whole into 'out'. */
static int write_db(sqlite3 *db, const char *out, int force, const char *const *in, int nin,
                    store_ship_stats *st, rt_err *e)
{
    sqlite3_int64 size = 0;
    unsigned char *img;
    int rc;

    if ((rc = check_db(db, "main", out, e)) != RT_OK) {
        st->refused = out;
        return rc;
    }
    if ((rc = exec_sql(db, out, "VACUUM", "compact", e)) != RT_OK)
        return rc;
    if (!(img = sqlite3_serialize(db, "main", &size, 0)))
        return rt_seterr(e, RT_ENOMEM, "%s: out of memory", out);
    rc = store_write_output(out, img, (size_t)size, force, in, nin, e);
    sqlite3_free(img);
    return rc;
}

int store_export(const char *in, const char *const *match, int nmatch, int with_measurements,
                 const char *out, int force, store_ship_stats *st, rt_err *e)
{
    copy_opts o = {match, nmatch, with_measurements, 0};
    sqlite3 *db = NULL;
    int rc;

    memset(st, 0, sizeof *st);
    if (!match || nmatch < 1)
        return rt_seterr(e, RT_EINVAL, "export: no device name to match");
    if ((rc = store_check_output(out, force, &in, 1, e)) || (rc = mem_new(out, &db, e))
        || (rc = attach_db(db, in, st, e)))
        goto done;
    rc = copy_detach(db, in, &o, st, e);
    if (rc == RT_OK && (rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = write_db(db, out, force, &in, 1, st, e);
done:
    sqlite3_close(db);
    return rc;
}

int store_merge(const char *const *in, int nin, const char *out, int force,
                store_ship_stats *st, rt_err *e)
{
    copy_opts o = {NULL, 0, 1, 1};
    sqlite3 *db = NULL;
    int rc;

    memset(st, 0, sizeof *st);
    if ((rc = store_check_output(out, force, in, nin, e)) || (rc = mem_new(out, &db, e)))
        goto done;
    for (int i = 0; i < nin; i++)
        if ((rc = attach_db(db, in[i], st, e)) || (rc = copy_detach(db, in[i], &o, st, e)))
            goto done;
    if ((rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = write_db(db, out, force, in, nin, st, e);
done:
    sqlite3_close(db);
    return rc;
}

/* ---- dump and load ---- */

#define DUMP_HEADER "-- redtune dump: schema version "

/* Append one value of a result column as an SQL literal that reads back the same. */
static void sb_literal(sbuf *b, sqlite3_stmt *st, int i)
{
    static const char hex[] = "0123456789abcdef";
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        sb_add(b, "%lld", (long long)sqlite3_column_int64(st, i));
        break;
    case SQLITE_FLOAT: {
        double v = sqlite3_column_double(st, i);
        char num[40];
        if (v != v)
            snprintf(num, sizeof num, "NULL");
        else if (v > 1.7976931348623157e308 || v < -1.7976931348623157e308)
            snprintf(num, sizeof num, "%s9e999", v < 0 ? "-" : "");
        else {
            /* The shortest text that reads back as the same double, for the diffs. */
            for (int digits = 15; digits <= 17; digits++)
                if (snprintf(num, sizeof num, "%.*g", digits, v) > 0 && strtod(num, NULL) == v)
                    break;
            if (!strpbrk(num, ".en"))
                strcat(num, ".0");   /* stays REAL when read back */
        }
        sb_add(b, "%s", num);
        break;
    }
    case SQLITE_TEXT: {
        const char *t = (const char *)sqlite3_column_text(st, i), *q;
        size_t len = (size_t)sqlite3_column_bytes(st, i);
        sb_raw(b, "'", 1);
        while ((q = memchr(t, '\'', len)) != NULL) {
            sb_raw(b, t, (size_t)(q - t) + 1);
            sb_raw(b, "'", 1);
            len -= (size_t)(q - t) + 1;
            t = q + 1;
        }
        sb_raw(b, t, len);
        sb_raw(b, "'", 1);
        break;
    }
    case SQLITE_BLOB: {
        const unsigned char *p = sqlite3_column_blob(st, i);
        int len = sqlite3_column_bytes(st, i);
        char chunk[256];
        sb_raw(b, "X'", 2);
        for (int k = 0; k < len;) {
            int c = 0;
            for (; k < len && c < (int)sizeof chunk; k++) {
                chunk[c++] = hex[p[k] >> 4];
                chunk[c++] = hex[p[k] & 15];
            }
            sb_raw(b, chunk, (size_t)c);
        }
        sb_raw(b, "'", 1);
        break;
    }
    default:
        sb_raw(b, "NULL", 4);
    }
}

/* One table as INSERT statements, ordered by its key. */
static int dump_table(sqlite3 *db, const char *path, const char *table, sbuf *out, rt_err *e)
{
    cols c, key;
    sbuf q = {0}, head = {0};
    sqlite3_stmt *st = NULL;
    int rc, r;

    if ((rc = table_cols(db, path, "main", table, &c, e))
        || (rc = key_cols(db, path, table, !strcmp(table, "measurements"), &key, e)))
        return rc;
    sb_add(&q, "SELECT ");
    sb_cols(&q, &c, "", NULL, NULL);
    sb_add(&q, " FROM main.\"%s\" ORDER BY ", table);
    sb_cols(&q, &key, "", NULL, NULL);
    sb_add(&head, "INSERT INTO %s (", table);
    sb_cols(&head, &c, "", NULL, NULL);
    sb_add(&head, ") VALUES (");
    if (q.oom || head.oom) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: dump: out of memory", path);
        goto done;
    }
    if (sqlite3_prepare_v2(db, q.p, -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(db, path, "dump", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        sb_raw(out, head.p, head.len);
        for (int i = 0; i < c.n; i++) {
            if (i)
                sb_raw(out, ", ", 2);
            sb_literal(out, st, i);
        }
        sb_raw(out, ");\n", 3);
    }
    if (r != SQLITE_DONE)
        rc = db_fail(db, path, "dump", e);
    else if (out->oom)
        rc = rt_seterr(e, RT_ENOMEM, "%s: dump: out of memory", path);
done:
    sqlite3_finalize(st);
    free(q.p);
    free(head.p);
    return rc;
}

int store_dump(const char *in, char **text, size_t *len, store_ship_stats *st, rt_err *e)
{
    store *s = NULL;
    sbuf out = {0};
    int rc;

    memset(st, 0, sizeof *st);
    *text = NULL;
    *len = 0;
    if ((rc = store_open(in, STORE_READ, &s, e)) != RT_OK
        || (rc = check_db(s->db, "main", in, e)) != RT_OK) {
        st->refused = in;
        goto done;
    }
    sb_add(&out, DUMP_HEADER "%d\n"
           "-- The rows of a redtune database, ordered by key, one INSERT a row: the schema is\n"
           "-- db/schema.sql. `redtune load FILE -o DB` makes the database again.\n",
           STORE_SCHEMA_VERSION);
    for (int i = 0; rc == RT_OK && i < N_TABLES; i++)
        rc = dump_table(s->db, in, redtune_tables[i], &out, e);
    if (rc == RT_OK)
        rc = ship_counts(s->db, in, st, e);
    if (rc == RT_OK && out.oom)
        rc = rt_seterr(e, RT_ENOMEM, "%s: dump: out of memory", in);
    if (rc == RT_OK) {
        *text = out.p;
        *len = out.len;
        out.p = NULL;
    }
done:
    free(out.p);
    store_close(s);
    return rc;
}

/* The authorizer of a load: INSERT into redtune's tables, nothing else. */
static int load_auth(void *arg, int action, const char *a, const char *b, const char *db,
                     const char *trigger)
{
    (void)arg, (void)b, (void)trigger;
    if (action == SQLITE_INSERT && db && !strcmp(db, "main"))
        for (int i = 0; i < N_TABLES; i++)
            if (!strcmp(a, redtune_tables[i]))
                return SQLITE_OK;
    return SQLITE_DENY;
}

/* The line of text[off], from 1. */
static int line_of(const char *text, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off; i++)
        line += text[i] == '\n';
    return line;
}

/* Run the INSERT statements of a dump (path, text) into 'db', in one transaction. */
static int load_text(sqlite3 *db, const char *path, const char *text, rt_err *e)
{
    const char *p = text;
    size_t hl = strlen(DUMP_HEADER);
    long v;
    char *end;
    int rc;

    if (strncmp(text, DUMP_HEADER, hl) != 0 || (v = strtol(text + hl, &end, 10)) < 1
        || *end != '\n')
        return rt_seterr(e, RT_EDB, "%s: not a redtune dump (the first line is not \"%s"
                         "N\")", path, DUMP_HEADER);
    if (v > STORE_SCHEMA_VERSION)
        return rt_seterr(e, RT_EDB, "%s: schema version %ld is newer than this redtune (%d): "
                         "upgrade redtune", path, v, STORE_SCHEMA_VERSION);
    if ((rc = exec_sql(db, path, "BEGIN", "begin transaction", e)) != RT_OK)
        return rc;
    sqlite3_set_authorizer(db, load_auth, NULL);
    while (rc == RT_OK) {
        sqlite3_stmt *st = NULL;
        const char *tail = p;
        for (;;) {   /* white space and comment lines, for the line number */
            while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
                p++;
            if (p[0] != '-' || p[1] != '-')
                break;
            p += strcspn(p, "\n");
        }
        size_t at = (size_t)(p - text);
        if (sqlite3_prepare_v2(db, p, -1, &st, &tail) != SQLITE_OK) {
            rc = rt_seterr(e, RT_EDB, "%s:%d: %s%s", path, line_of(text, at),
                           sqlite3_errmsg(db), (sqlite3_errcode(db) & 0xff) == SQLITE_AUTH
                           ? " (a dump holds INSERT statements into redtune's tables only)"
                           : "");
        } else if (!st) {
            break;   /* only white space and comments left */
        } else if (sqlite3_step(st) != SQLITE_DONE) {
            rc = rt_seterr(e, RT_EDB, "%s:%d: %s", path, line_of(text, at),
                           sqlite3_errmsg(db));
        }
        sqlite3_finalize(st);
        p = tail;
    }
    sqlite3_set_authorizer(db, NULL, NULL);
    if (rc == RT_OK)
        rc = exec_sql(db, path, "COMMIT", "commit", e);
    if (rc != RT_OK)
        tx_rollback(db);
    return rc;
}

/*
 * Read a whole dump; *text malloc'd, NUL-terminated. Reading stops at the first failure: a
 * NUL byte (a dump is text: /dev/zero is refused at its first block), more than
 * STORE_DUMP_MAX bytes (a regular file by its size, before it is read), or no memory.
 */
static int slurp_text(const char *path, char **text, rt_err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = RT_OK;
    sbuf b = {0};
    char buf[65536];
    struct stat sb = {0};   /* zero when fstat fails: neither a directory nor regular */
    ssize_t n;

    *text = NULL;
    if (fd < 0)
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        rc = rt_seterr(e, RT_EIO, "%s: is a directory", path);
        goto done;
    }
    if (S_ISREG(sb.st_mode) && sb.st_size > STORE_DUMP_MAX)
        goto too_big;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = rt_seterr(e, RT_EIO, "%s: cannot read it: %s", path, strerror(errno));
            goto done;
        }
        if (memchr(buf, '\0', (size_t)n)) {
            rc = rt_seterr(e, RT_EDB, "%s: not a redtune dump (binary data: a NUL byte at "
                           "byte %zu)", path, b.len + (size_t)((char *)memchr(buf, '\0',
                           (size_t)n) - buf));
            goto done;
        }
        if (b.len + (size_t)n > STORE_DUMP_MAX)
            goto too_big;
        sb_raw(&b, buf, (size_t)n);
        if (b.oom) {
            rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory after reading %zu bytes of it",
                           path, b.len);
            goto done;
        }
    }
    if (!b.p && !(b.p = strdup("")))
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
    goto done;
too_big:
    rc = rt_seterr(e, RT_EDB, "%s: larger than a dump may be (%d MiB)", path,
                   STORE_DUMP_MAX >> 20);
done:
    close(fd);
    if (rc == RT_OK)
        *text = b.p;
    else
        free(b.p);
    return rc;
}

int store_load(const char *const *sql, int nsql, const char *out, int force,
               store_ship_stats *st, rt_err *e)
{
    copy_opts o = {NULL, 0, 1, 1};
    sqlite3 *db = NULL, *one = NULL;
    char *text = NULL;
    int rc;

    memset(st, 0, sizeof *st);
    if ((rc = store_check_output(out, force, sql, nsql, e)) || (rc = mem_new(out, &db, e)))
        goto done;
    for (int i = 0; i < nsql; i++) {
        sqlite3_int64 size = 0;
        unsigned char *img;
        if ((rc = slurp_text(sql[i], &text, e)) != RT_OK) {
            st->refused = sql[i];
            goto done;
        }
        /* The first dump goes in as it is (ids kept: load of dump is the identity); the
         * others into a database of their own, merged in. */
        if ((rc = i == 0 ? load_text(db, sql[i], text, e) : mem_new(sql[i], &one, e)) != RT_OK
            || (i > 0 && (rc = load_text(one, sql[i], text, e)) != RT_OK)
            || (rc = check_db(i == 0 ? db : one, "main", sql[i], e)) != RT_OK) {
            st->refused = sql[i];
            goto done;
        }
        free(text);
        text = NULL;
        if (i == 0)
            continue;
        if (!(img = sqlite3_serialize(one, "main", &size, 0))) {
            rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", sql[i]);
            goto done;
        }
        sqlite3_close(one);
        one = NULL;
        if ((rc = attach_image(db, sql[i], img, size, e))
            || (rc = copy_detach(db, sql[i], &o, st, e)))
            goto done;
    }
    if ((rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = write_db(db, out, force, sql, nsql, st, e);
done:
    free(text);
    sqlite3_close(one);
    sqlite3_close(db);
    return rc;
}
