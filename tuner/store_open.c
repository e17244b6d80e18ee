/*
 * store_open.c - opening a redtune database for writing (STORE_WRITE): created with the
 * schema of db/schema.sql when absent, migrated when older, in WAL mode with a busy timeout
 * so that several tuner processes may share one file. The redtune program's store_open,
 * which takes the place of libredtune's read-only one (runtime/store.c) and reads through it.
 *
 * Opening never modifies a file that is not already a redtune database: an existing file is
 * first inspected read-only (store_inspect), and only a file that is redtune's, or empty, is
 * then opened for writing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "embed.h"
#include "../runtime/store_int.h"
#include "store_tune.h"

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
    /* 2 -> 3: the type spec resolved, acc and result, joins the key of measurements and
     * best. A key cannot be altered, so both tables are made again as db/schema.sql has them
     * (same columns, same order: a migrated file and a new one are alike) and their rows
     * copied with acc = result = type, what every version 2 row measured. Nothing refers to
     * either table, so dropping the old ones checks no foreign key. */
    [2] = "CREATE TABLE measurements_v3 ("
          " id INTEGER PRIMARY KEY,"
          " device_id INTEGER NOT NULL REFERENCES devices (id),"
          " run_id INTEGER REFERENCES runs (id),"
          " kernel_hash TEXT NOT NULL REFERENCES kernels (hash),"
          " op TEXT NOT NULL, type TEXT NOT NULL, acc TEXT NOT NULL, result TEXT NOT NULL,"
          " layout TEXT NOT NULL,"
          " n INTEGER NOT NULL CHECK (n > 0),"
          " hot INTEGER NOT NULL CHECK (hot IN (0, 1)),"
          " status TEXT NOT NULL CONSTRAINT status_valid"
          "  CHECK (status IN ('ok', 'wrong', 'fault', 'timeout', 'error')),"
          " message TEXT NOT NULL DEFAULT '',"
          " median_us REAL NOT NULL, min_us REAL NOT NULL, max_us REAL NOT NULL,"
          " reps INTEGER NOT NULL CHECK (reps >= 0),"
          " gbps REAL NOT NULL, frac_bw REAL NOT NULL,"
          " verified INTEGER NOT NULL CHECK (verified IN (0, 1)),"
          " deterministic INTEGER NOT NULL CHECK (deterministic IN (-1, 0, 1)),"
          " measured_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
          " nseg INTEGER NOT NULL DEFAULT 0,"
          " seg_mean REAL NOT NULL DEFAULT 0,"
          " seg_spread REAL NOT NULL DEFAULT 0,"
          " UNIQUE (device_id, kernel_hash, op, type, acc, result, layout, n, hot));"
          "INSERT INTO measurements_v3 (id, device_id, run_id, kernel_hash, op, type, acc,"
          " result, layout, n, hot, status, message, median_us, min_us, max_us, reps, gbps,"
          " frac_bw, verified, deterministic, measured_at, nseg, seg_mean, seg_spread)"
          " SELECT id, device_id, run_id, kernel_hash, op, type, type, type, layout, n, hot,"
          " status, message, median_us, min_us, max_us, reps, gbps, frac_bw, verified,"
          " deterministic, measured_at, nseg, seg_mean, seg_spread FROM measurements;"
          "DROP TABLE measurements;"
          "ALTER TABLE measurements_v3 RENAME TO measurements;"
          "CREATE INDEX measurements_case ON measurements (device_id, op, type, acc, result,"
          " layout, n, hot, median_us) WHERE status = 'ok' AND verified = 1;"
          "CREATE INDEX measurements_kernel ON measurements (kernel_hash);"
          "CREATE INDEX measurements_run ON measurements (run_id);"
          "CREATE TABLE best_v3 ("
          " device_id INTEGER NOT NULL REFERENCES devices (id),"
          " op TEXT NOT NULL, type TEXT NOT NULL, acc TEXT NOT NULL, result TEXT NOT NULL,"
          " layout TEXT NOT NULL,"
          " n INTEGER NOT NULL CHECK (n > 0),"
          " hot INTEGER NOT NULL CHECK (hot IN (0, 1)),"
          " kernel_hash TEXT NOT NULL REFERENCES kernels (hash),"
          " median_us REAL NOT NULL, min_us REAL NOT NULL, max_us REAL NOT NULL,"
          " reps INTEGER NOT NULL, gbps REAL NOT NULL, frac_bw REAL NOT NULL,"
          " deterministic INTEGER NOT NULL CHECK (deterministic IN (-1, 0, 1)),"
          " updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
          " nseg INTEGER NOT NULL DEFAULT 0,"
          " seg_mean REAL NOT NULL DEFAULT 0,"
          " seg_spread REAL NOT NULL DEFAULT 0,"
          " PRIMARY KEY (device_id, op, type, acc, result, layout, n, hot));"
          "INSERT INTO best_v3 (device_id, op, type, acc, result, layout, n, hot, kernel_hash,"
          " median_us, min_us, max_us, reps, gbps, frac_bw, deterministic, updated_at, nseg,"
          " seg_mean, seg_spread)"
          " SELECT device_id, op, type, type, type, layout, n, hot, kernel_hash, median_us,"
          " min_us, max_us, reps, gbps, frac_bw, deterministic, updated_at, nseg, seg_mean,"
          " seg_spread FROM best;"
          "DROP TABLE best;"
          "ALTER TABLE best_v3 RENAME TO best;"
          "CREATE INDEX best_kernel ON best (kernel_hash);",
};

/* A new file will be made at 'path': its directory must exist and be writable. */
int store_check_dir(const char *path, rt_err *e)
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
            rc = store_db_fail(db, path, "enable WAL mode", e);
            goto done;
        }
        if ((r = sqlite3_step(st)) == SQLITE_ROW)
            break;
        if ((r & 0xff) != SQLITE_BUSY || waited >= STORE_BUSY_TIMEOUT_MS) {
            rc = store_db_fail(db, path, "enable WAL mode", e);
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
        int rc = store_exec(db, path, migrations[v], what, e);
        if (rc != RT_OK)
            return rc;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
        if ((rc = store_exec(db, path, sql, what, e)) != RT_OK)
            return rc;
    }
    return RT_OK;
}

int store_migrate_db(sqlite3 *db, const char *path, int version, rt_err *e)
{
    int rc = store_exec(db, path, "BEGIN IMMEDIATE", "begin transaction", e);

    if (rc != RT_OK)
        return rc;
    if ((rc = migrate(db, path, version, e)) == RT_OK)
        rc = store_exec(db, path, "COMMIT", "commit schema", e);
    if (rc != RT_OK)
        store_tx_rollback(db);
    return rc;
}

/*
 * Give a writable connection the current schema, atomically: under the write lock, look again
 * (another process may have made the schema since the file was inspected), then create it
 * whole from db/schema.sql, or migrate it, or leave it, in one transaction.
 */
static int setup_schema(sqlite3 *db, const char *path, rt_err *e)
{
    const rt_embedded *schema = embed_find_tuner("db/schema.sql");
    int kind, version, rc;
    long long v;

    if (!schema)
        return rt_seterr(e, RT_EDB, "%s: db/schema.sql is not built into this redtune", path);
    if ((rc = store_exec(db, path, "BEGIN IMMEDIATE", "begin transaction", e)) != RT_OK)
        return rc;
    if ((rc = store_classify(db, path, 1, &kind, &version, e)) != RT_OK)
        goto done;
    switch (kind) {
    case DB_REFUSED:
        rc = RT_EDB;
        goto done;
    case DB_NEW:
        if ((rc = store_exec(db, path, schema->text, "create schema", e)) != RT_OK)
            goto done;
        if ((rc = store_query_int(db, path, "PRAGMA user_version", NULL, &v, e)) != RT_OK)
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
    rc = store_exec(db, path, "COMMIT", "commit schema", e);
done:
    if (rc != RT_OK)
        store_tx_rollback(db);
    return rc;
}

static int open_write(const char *path, store **out, rt_err *e)
{
    store *s = NULL;
    sqlite3 *db = NULL;
    char *uri = NULL;
    struct stat st;
    int kind = DB_NEW, version = 0, rc = RT_OK, flags;

    *out = NULL;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: is a directory, not a database", path);
        if (!S_ISREG(st.st_mode))
            return rt_seterr(e, RT_EIO, "%s: not a regular file", path);
        if (access(path, R_OK | W_OK) != 0)
            return rt_seterr(e, RT_EIO, "%s: cannot write: %s", path, strerror(errno));
        if ((rc = store_inspect(path, STORE_WRITE, &kind, &version, e)) != RT_OK)
            return rc;
    } else if (errno == ENOENT) {
        if ((rc = store_check_dir(path, e)) != RT_OK)
            return rc;
    } else {
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    }

    if (!(s = calloc(1, sizeof *s)) || !(s->path = strdup(path))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (!(uri = store_make_uri(path, NULL))) {
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
    sqlite3_busy_handler(db, store_busy_wait, (void *)path);
    if (sqlite3_db_readonly(db, "main") == 1) {
        rc = rt_seterr(e, RT_EIO, "%s: cannot write: opened read-only", path);
        goto done;
    }
    if ((rc = store_exec(db, path, "PRAGMA foreign_keys = ON", "enable foreign keys", e))
        || (rc = set_wal(db, path, e)))
        goto done;
    if (kind != DB_CURRENT && (rc = setup_schema(db, path, e)) != RT_OK)
        goto done;
    s->version = STORE_SCHEMA_VERSION;
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

/*
 * A version 2 file opened STORE_READ, read by the tuner's queries as version 3: temporary
 * views named as the two tables that gained acc and result shadow them (an unqualified name
 * finds temp first), with acc = result = type, what every row of a version 2 file measured.
 * They live in the connection's own temp schema: the file is not written. Queries that name
 * main's tables (shipping) see the file as it is.
 */
static int read_v2_as_v3(store *s, rt_err *e)
{
    return store_exec(s->db, s->path,
                      "PRAGMA query_only = OFF;"
                      "CREATE TEMP VIEW measurements AS SELECT *, type AS acc, type AS result "
                      "FROM main.measurements;"
                      "CREATE TEMP VIEW best AS SELECT *, type AS acc, type AS result "
                      "FROM main.best;"
                      "PRAGMA query_only = ON;", "read schema version 2", e);
}

/* STORE_READ as libredtune opens (store_open_read), STORE_WRITE here. */
int store_open(const char *path, int mode, store **out, rt_err *e)
{
    int rc = store_open_args(path, mode, out, e);

    if (rc != RT_OK)
        return rc;
    if (mode == STORE_WRITE)
        return open_write(path, out, e);
    if ((rc = store_open_read(path, out, e)) == RT_OK && store_version(*out) < 3
        && (rc = read_v2_as_v3(*out, e)) != RT_OK) {
        store_close(*out);
        *out = NULL;
    }
    return rc;
}
