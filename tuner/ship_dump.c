/*
 * ship_dump.c - a redtune database as SQL text that diffs, and back (redtune dump | load):
 * one INSERT a row, tables in dependency order, rows by key; a load runs those INSERTs
 * (nothing else: an authorizer refuses the rest) into the in-memory output of ship.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "../runtime/store_int.h"
#include "ship_int.h"
#include "store_tune.h"

#define DUMP_HEADER "-- redtune dump: schema version "

/* Append one value of a result column as an SQL literal that reads back the same. */
static void sb_literal(sbuf *b, sqlite3_stmt *st, int i)
{
    static const char hex[] = "0123456789abcdef";
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        ship_sb_add(b, "%lld", (long long)sqlite3_column_int64(st, i));
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
        ship_sb_add(b, "%s", num);
        break;
    }
    case SQLITE_TEXT: {
        const char *t = (const char *)sqlite3_column_text(st, i), *q;
        size_t len = (size_t)sqlite3_column_bytes(st, i);
        ship_sb_raw(b, "'", 1);
        while ((q = memchr(t, '\'', len)) != NULL) {
            ship_sb_raw(b, t, (size_t)(q - t) + 1);
            ship_sb_raw(b, "'", 1);
            len -= (size_t)(q - t) + 1;
            t = q + 1;
        }
        ship_sb_raw(b, t, len);
        ship_sb_raw(b, "'", 1);
        break;
    }
    case SQLITE_BLOB: {
        const unsigned char *p = sqlite3_column_blob(st, i);
        int len = sqlite3_column_bytes(st, i);
        char chunk[256];
        ship_sb_raw(b, "X'", 2);
        for (int k = 0; k < len;) {
            int c = 0;
            for (; k < len && c < (int)sizeof chunk; k++) {
                chunk[c++] = hex[p[k] >> 4];
                chunk[c++] = hex[p[k] & 15];
            }
            ship_sb_raw(b, chunk, (size_t)c);
        }
        ship_sb_raw(b, "'", 1);
        break;
    }
    default:
        ship_sb_raw(b, "NULL", 4);
    }
}

/* One table as INSERT statements, ordered by its key. */
static int dump_table(sqlite3 *db, const char *path, const char *table, sbuf *out, rt_err *e)
{
    cols c, key;
    sbuf q = {0}, head = {0};
    sqlite3_stmt *st = NULL;
    int rc, r;

    if ((rc = ship_table_cols(db, path, "main", table, &c, e))
        || (rc = ship_key_cols(db, path, table, !strcmp(table, "measurements"), &key, e)))
        return rc;
    ship_sb_add(&q, "SELECT ");
    ship_sb_cols(&q, &c, "", NULL, NULL);
    ship_sb_add(&q, " FROM main.\"%s\" ORDER BY ", table);
    ship_sb_cols(&q, &key, "", NULL, NULL);
    ship_sb_add(&head, "INSERT INTO %s (", table);
    ship_sb_cols(&head, &c, "", NULL, NULL);
    ship_sb_add(&head, ") VALUES (");
    if (q.oom || head.oom) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: dump: out of memory", path);
        goto done;
    }
    if (sqlite3_prepare_v2(db, q.p, -1, &st, NULL) != SQLITE_OK) {
        rc = store_db_fail(db, path, "dump", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        ship_sb_raw(out, head.p, head.len);
        for (int i = 0; i < c.n; i++) {
            if (i)
                ship_sb_raw(out, ", ", 2);
            sb_literal(out, st, i);
        }
        ship_sb_raw(out, ");\n", 3);
    }
    if (r != SQLITE_DONE)
        rc = store_db_fail(db, path, "dump", e);
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
        || (rc = ship_check_db(s->db, "main", in, e)) != RT_OK) {
        st->refused = in;
        goto done;
    }
    ship_sb_add(&out, DUMP_HEADER "%d\n"
                "-- The rows of a redtune database, ordered by key, one INSERT a row: the "
                "schema is\n"
                "-- db/schema.sql. `redtune load FILE -o DB` makes the database again.\n",
                store_version(s));   /* an older file's rows as they are: load migrates */
    for (int i = 0; rc == RT_OK && i < STORE_NTABLES; i++)
        rc = dump_table(s->db, in, store_tables[i], &out, e);
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

/* The authorizer of a load: INSERT into redtune's tables, nothing else; 'arg' non-NULL: an
 * older dump's rows of measurements and best go into the temp tables that stand for them
 * (older_begin). */
static int load_auth(void *arg, int action, const char *a, const char *b, const char *db,
                     const char *trigger)
{
    (void)b, (void)trigger;
    if (action != SQLITE_INSERT || !db)
        return SQLITE_DENY;
    if (arg && !strcmp(db, "temp"))
        return !strcmp(a, "measurements") || !strcmp(a, "best") ? SQLITE_OK : SQLITE_DENY;
    if (!strcmp(db, "main"))
        for (int i = 0; i < STORE_NTABLES; i++)
            if (!strcmp(a, store_tables[i]) && !(arg && (!strcmp(a, "measurements")
                                                         || !strcmp(a, "best"))))
                return SQLITE_OK;
    return SQLITE_DENY;
}

/*
 * A dump of an older schema version names the columns it had: version 1 has no nseg,
 * seg_mean, seg_spread, version 2 no acc and result, which are keys now and have no default.
 * Its rows of measurements and best go first into temp tables of the same names, without
 * constraints (an unqualified name finds temp first), then into main with what the migration
 * steps give the missing columns: 0 for the segmentation, the type for acc and result.
 */
static int older_begin(sqlite3 *db, const char *path, rt_err *e)
{
    return store_exec(db, path, "CREATE TEMP TABLE measurements AS SELECT * FROM "
                      "main.measurements WHERE 0; CREATE TEMP TABLE best AS SELECT * FROM "
                      "main.best WHERE 0;", "load an older dump", e);
}

static int older_end(sqlite3 *db, const char *path, rt_err *e)
{
    static const char *const map[][2] = {
        {"acc", "coalesce(acc, type)"}, {"result", "coalesce(result, type)"},
        {"nseg", "coalesce(nseg, 0)"}, {"seg_mean", "coalesce(seg_mean, 0)"},
        {"seg_spread", "coalesce(seg_spread, 0)"}, {NULL, NULL}};
    static const char *const tables[] = {"measurements", "best"};
    int rc = RT_OK;

    for (int i = 0; rc == RT_OK && i < 2; i++) {
        cols c;
        sbuf q = {0};
        if ((rc = ship_table_cols(db, path, "main", tables[i], &c, e)) != RT_OK)
            break;
        ship_sb_add(&q, "INSERT INTO main.%s (", tables[i]);
        ship_sb_cols(&q, &c, "", NULL, NULL);
        ship_sb_add(&q, ") SELECT ");
        ship_sb_cols(&q, &c, "", NULL, map);
        ship_sb_add(&q, " FROM temp.%s ORDER BY rowid; DROP TABLE temp.%s;", tables[i],
                    tables[i]);
        rc = q.oom ? rt_seterr(e, RT_ENOMEM, "%s: out of memory", path)
                   : store_exec(db, path, q.p, "load an older dump", e);
        free(q.p);
    }
    return rc;
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
    int older = v < STORE_SCHEMA_VERSION;
    if ((rc = store_exec(db, path, "BEGIN", "begin transaction", e)) != RT_OK)
        return rc;
    if (older && (rc = older_begin(db, path, e)) != RT_OK) {
        store_tx_rollback(db);
        return rc;
    }
    sqlite3_set_authorizer(db, load_auth, older ? db : NULL);
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
    if (rc == RT_OK && older)
        rc = older_end(db, path, e);
    if (rc == RT_OK)
        rc = store_exec(db, path, "COMMIT", "commit", e);
    if (rc != RT_OK) {
        store_tx_rollback(db);
        if (older)   /* temp tables made in the transaction went with it; these are not */
            sqlite3_exec(db, "DROP TABLE IF EXISTS temp.measurements; DROP TABLE IF EXISTS "
                         "temp.best", NULL, NULL, NULL);
    }
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
        ship_sb_raw(&b, buf, (size_t)n);
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
    if ((rc = store_check_output(out, force, sql, nsql, e)) || (rc = ship_mem_new(out, &db, e)))
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
        if ((rc = i == 0 ? load_text(db, sql[i], text, e) : ship_mem_new(sql[i], &one, e)) != RT_OK
            || (i > 0 && (rc = load_text(one, sql[i], text, e)) != RT_OK)
            || (rc = ship_check_db(i == 0 ? db : one, "main", sql[i], e)) != RT_OK) {
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
        if ((rc = ship_attach_image(db, sql[i], img, size, e))
            || (rc = ship_copy_detach(db, sql[i], &o, st, e)))
            goto done;
    }
    if ((rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = ship_write_db(db, out, force, sql, nsql, st, e);
done:
    free(text);
    sqlite3_close(one);
    sqlite3_close(db);
    return rc;
}
