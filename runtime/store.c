/*
 * store.c - opening a redtune database read-only, and closing it: the file is classified
 * (its header by hand, then its schema through a read-only connection) and refused whole
 * when it is not a current redtune database; a WAL file is read without making anything
 * beside it (read_how). libredtune never writes a database: opening for writing, the
 * tuning writes and shipping are the tuner's (tuner/store_open.c, tuner/store_tune.c,
 * tuner/ship*.c), which share this file's helpers through store_int.h.
 *
 * Statements are prepared, bound, stepped until SQLITE_DONE and finalized on every path; an
 * error names the database's path, what was being done and SQLite's own message.
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

#include "store_int.h"

/* The busy timeout as a handler, so that a program can say that it waits (after a second)
 * rather than hang silently: 'arg' is the path, which outlives the connection. */
static void (*wait_notice)(const char *path, int timeout_ms);
void store_set_wait_notice(void (*fn)(const char *path, int timeout_ms))
{
    wait_notice = fn;
}
int store_busy_wait(void *arg, int count)
{
    if (count * 10 >= STORE_BUSY_TIMEOUT_MS)
        return 0;
    if (count == 100 && wait_notice)
        wait_notice(arg, STORE_BUSY_TIMEOUT_MS);
    sqlite3_sleep(10);
    return 1;
}

const char *const store_tables[STORE_NTABLES] = {
    "devices", "runs", "kernels", "binaries", "measurements", "best",
};


const char *store_type_text(const char *type, const char *acc, const char *result, char *buf,
                            size_t len)
{
    acc = acc ? acc : type;
    result = result ? result : type;
    if (!strcmp(acc, type) && !strcmp(result, type))
        snprintf(buf, len, "%s", type);
    else
        snprintf(buf, len, "%s acc=%s result=%s", type, acc, result);
    return buf;
}

int store_db_fail(sqlite3 *db, const char *path, const char *what, rt_err *e)
{
    return rt_seterr(e, RT_EDB, "%s: %s: %s", path, what, sqlite3_errmsg(db));
}

int store_fail(store *s, const char *what, rt_err *e)
{
    return store_db_fail(s->db, s->path, what, e);
}

/* Run SQL text without results (transaction control, pragmas, the schema). */
int store_exec(sqlite3 *db, const char *path, const char *sql, const char *what, rt_err *e)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_db_fail(db, path, what, e);
    return RT_OK;
}


/* Undo an open transaction, if any; for error paths, whose message is already set. */
void store_tx_rollback(sqlite3 *db)
{
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- opening and the schema */

/*
 * A single-integer query on a connection that is not yet a store: PRAGMA user_version or a
 * count over sqlite_master, with an optional text argument ?1. *out is 0 when no row.
 */
int store_query_int(sqlite3 *db, const char *path, const char *sql, const char *arg,
                    long long *out, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *out = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = store_db_fail(db, path, "read schema", e);
        goto done;
    }
    if (arg && bind_text(st, 1, arg) != SQLITE_OK) {
        rc = store_db_fail(db, path, "read schema", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    if (r != SQLITE_DONE)
        rc = store_db_fail(db, path, "read schema", e);
done:
    sqlite3_finalize(st);
    return rc;
}

/*
 * Say what the database on 'db' is (DB_*). 'may_be_new': a file with no tables is acceptable
 * (STORE_WRITE). Returns RT_EDB only when SQLite fails; a refusal is *kind = DB_REFUSED with
 * its reason in 'e'.
 */
int store_classify(sqlite3 *db, const char *path, int may_be_new, int *kind, int *version,
                   rt_err *e)
{
    long long v = 0, objects = 0, one;
    int present = 0, rc, own_tx = sqlite3_get_autocommit(db);
    const char *missing = NULL;

    *kind = DB_REFUSED;
    /* One read transaction, so that every answer describes the same state of the file. */
    if (own_tx && (rc = store_exec(db, path, "BEGIN", "read schema", e)) != RT_OK)
        return rc;
    if ((rc = store_query_int(db, path, "PRAGMA user_version", NULL, &v, e)) != RT_OK
        || (rc = store_query_int(db, path, "SELECT count(*) FROM sqlite_master", NULL,
                                 &objects, e)))
        goto done;
    for (int i = 0; i < STORE_NTABLES; i++) {
        rc = store_query_int(db, path, "SELECT count(*) FROM sqlite_master "
                                       "WHERE type = 'table' AND name = ?1",
                             store_tables[i], &one, e);
        if (rc != RT_OK)
            goto done;
        if (one)
            present++;
        else if (!missing)
            missing = store_tables[i];
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
        store_tx_rollback(db);   /* ends the read transaction */
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
char *store_make_uri(const char *path, const char *query)
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
    rc = copy_to(path, db_copy, path, e);
    if (rc == RT_OK)
        rc = copy_to(side, wal_copy, path, e);
    get_states(path, &after);
    if (!same_states(&before, &after)) {
        /* A writer came or went meanwhile (its -wal may be gone: a copy that failed for it
         * is no error): the file is looked at again. */
        *changed = 1;
        if (rc != RT_OK)
            rt_clearerr(e);
        rc = RT_OK;
        goto done;
    }
    if (rc != RT_OK)
        goto done;
    char *uri = store_make_uri(db_copy, NULL);
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
            char *uri = store_make_uri(path, *how == READ_IMMUTABLE ? "immutable=1" : NULL);
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
        sqlite3_busy_handler(db, store_busy_wait, (void *)path);
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
        rc = store_classify(db, path, may_be_new, kind, version, e);
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
int store_inspect(const char *path, int mode, int *kind, int *version, rt_err *e)
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
        if (rc == RT_OK && *kind == DB_OLDER && mode == STORE_READ
            && *version < STORE_READ_MIN_VERSION)
            rc = refuse_older(path, *version, e);
        return rc;
    }
}


/* store_open's argument checks, shared with the tuner's store_open. */
int store_open_args(const char *path, int mode, store **out, rt_err *e)
{
    if (out)
        *out = NULL;
    if (!out || !path || !*path || (mode != STORE_READ && mode != STORE_WRITE))
        return rt_seterr(e, RT_EINVAL, "store_open: %s", !path || !*path ? "empty path"
                         : out ? "mode is neither STORE_READ nor STORE_WRITE" : "out is NULL");
    return RT_OK;
}

int store_open_read(const char *path, store **out, rt_err *e)
{
    store *s = NULL;
    sqlite3 *db = NULL;
    struct stat st;
    file_states before;
    int kind = DB_NEW, version = 0, rc = store_open_args(path, STORE_READ, out, e), how;

    if (rc != RT_OK)
        return rc;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a directory, not a database", path);
        if (!S_ISREG(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: not a regular file", path);
        if ((rc = store_inspect(path, STORE_READ, &kind, &version, e)) != RT_OK)
            return rc;
    } else {
        return rt_seterr(e, errno == ENOENT ? RT_EDB : RT_EIO, "%s: %s", path,
                         strerror(errno));
    }

    if (!(s = calloc(1, sizeof *s)) || !(s->path = strdup(path))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if ((rc = open_reader(path, &db, &how, &before, e)) != RT_OK)
        goto done;
    /* Look again on this connection: the file may have changed since store_inspect(). */
    if ((rc = store_classify(db, path, 0, &kind, &version, e)))
        goto done;
    if (kind != DB_CURRENT && !(kind == DB_OLDER && version >= STORE_READ_MIN_VERSION)) {
        rc = kind == DB_OLDER ? refuse_older(path, version, e) : RT_EDB;
        goto done;
    }
    /* A version 2 file is read as it is: the lookup's queries have a form for it
     * (store_lookup.c), and the tuner's readers give it views (tuner/store_open.c). */
    if ((rc = store_exec(db, path, "PRAGMA query_only = ON", "set query_only", e)))
        goto done;
    s->version = version;
    s->db = db;
    db = NULL;
    *out = s;
    s = NULL;
done:
    sqlite3_close(db);
    if (s)
        free(s->path);
    free(s);
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

int store_version(const store *s)
{
    return s->version;
}

/* The connection, for tests that inspect it. */
sqlite3 *store_db(store *s)
{
    return s->db;
}

/* PRAGMA quick_check of schema 'schema': "ok", else RT_EDB "corrupt database". */
int store_quick_check_schema(sqlite3 *db, const char *schema, const char *path, rt_err *e)
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
    return store_quick_check_schema(s->db, "main", s->path, e);
}
