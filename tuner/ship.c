/*
 * ship.c - shipping databases: export and merge (redtune export | merge), and what dump and
 * load (ship_dump.c) share with them: the in-memory output, the checks of every database
 * read or written, the copy of rows between databases.
 *
 * The output is built in an in-memory database with the schema of db/schema.sql, then
 * written whole (sqlite3_serialize) into a file of the output's directory that has no name
 * until it is complete (ship_out.c) and linked or renamed into place: a killed command never
 * leaves a half file under the output's name, and the output is in rollback-journal mode, so
 * its readers create no -wal or -shm. Inputs are opened with STORE_READ (no side files, never
 * written), checked (ship_check_db), read whole into memory and attached as schema "src".
 *
 * Column lists come from the output's schema (pragma_table_info), and rows are matched by
 * their tables' own keys (the primary key; for measurements its UNIQUE constraint), so a
 * column added to db/schema.sql travels through export, merge, dump and load unchanged.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "embed.h"
#include "../runtime/family.h"
#include "../runtime/store_int.h"
#include "ship_int.h"
#include "store_tune.h"

/*
 * SQL functions of the connections that check_db checks:
 *   rt_sha256(text)          the SHA-256 of the text's bytes, 64 lower-case hex digits;
 *   rt_plan(family, source)  'segmented', 'axis' or 'flat': the launch plan the source declares
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
    const char *plan = NULL;
    (void)argc;
    if (p) {
        p += strlen("// @plan");
        p += strspn(p, " \t");
        if (!strncmp(p, "segmented", 9))
            plan = "segmented";
        else if (!strncmp(p, "axis", 4))
            plan = "axis";
        else if (!strncmp(p, "onelaunch", 9) || !strncmp(p, "multipass", 9))
            plan = "flat";
    }
    if (!plan && f)
        plan = f->plan == PLAN_SEGMENTED ? "segmented" : f->plan == PLAN_AXIS ? "axis" : "flat";
    if (!plan)
        sqlite3_result_null(cx);
    else
        sqlite3_result_text(cx, plan, -1, SQLITE_STATIC);
}

static void add_functions(sqlite3 *db)
{
    int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    sqlite3_create_function(db, "rt_sha256", 1, flags, NULL, fn_sha256, NULL, NULL);
    sqlite3_create_function(db, "rt_plan", 2, flags, NULL, fn_plan, NULL, NULL);
}

void ship_sb_raw(sbuf *b, const char *s, size_t n)
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

void ship_sb_add(sbuf *b, const char *fmt, ...)
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
        ship_sb_raw(b, small, (size_t)n);
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
    ship_sb_raw(b, big, (size_t)n);
    free(big);
}

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
    return r == SQLITE_DONE ? RT_OK : store_db_fail(db, path, "read the columns", e);
}

/* The columns of 'table' in schema 'schema' of 'db'. */
int ship_table_cols(sqlite3 *db, const char *path, const char *schema, const char *table,
                    cols *c, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, "SELECT name, pk FROM pragma_table_info(?1, ?2) ORDER BY cid",
                           -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, table) != SQLITE_OK || bind_text(st, 2, schema) != SQLITE_OK)
        rc = store_db_fail(db, path, "read the columns", e);
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
int ship_key_cols(sqlite3 *db, const char *path, const char *table, int unique, cols *c,
                  rt_err *e)
{
    static const char by_unique[] =
        "SELECT ii.name FROM pragma_index_list(?1, 'main') AS il, "
        "pragma_index_info(il.name, 'main') AS ii "
        "WHERE il.origin = 'u' AND il.seq = (SELECT min(seq) FROM pragma_index_list(?1, 'main') "
        "WHERE origin = 'u') ORDER BY ii.seqno";
    static const char by_pk[] =
        "SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk";
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(db, unique ? by_unique : by_pk, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, table) != SQLITE_OK)
        rc = store_db_fail(db, path, "read the keys", e);
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
void ship_sb_cols(sbuf *b, const cols *c, const char *prefix, const char *skip,
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
            ship_sb_add(b, "%s%s", first ? "" : ", ", expr);
        else
            ship_sb_add(b, plain ? "%s%s%s" : "%s%s\"%s\"", first ? "" : ", ", prefix, c->name[i]);
        first = 0;
    }
}

/* Append "t.c = x.c AND ..." over the columns of 'c'. */
static void sb_equal(sbuf *b, const cols *c, const char *t, const char *x)
{
    for (int i = 0; i < c->n; i++)
        ship_sb_add(b, "%s%s.\"%s\" = %s.\"%s\"", i ? " AND " : "", t, c->name[i], x, c->name[i]);
}

/* Append "c = excluded.c, ..." over the columns of 'all' that are not in 'key' or 'skip'. */
static void sb_update(sbuf *b, const cols *all, const cols *key, const char *skip)
{
    int first = 1;
    for (int i = 0; i < all->n; i++) {
        if (in_cols(key, all->name[i]) || (skip && !strcmp(all->name[i], skip)))
            continue;
        ship_sb_add(b, "%s\"%s\" = excluded.\"%s\"", first ? "" : ", ", all->name[i],
                    all->name[i]);
        first = 0;
    }
}

/* Run the text of 'b' (one or more statements, no results) on 'db'. */
static int run_sb(sqlite3 *db, const char *path, sbuf *b, const char *what, rt_err *e)
{
    if (b->oom)
        return rt_seterr(e, RT_ENOMEM, "%s: %s: out of memory", path, what);
    return store_exec(db, path, b->p, what, e);
}

/* A new in-memory database with the schema: the output under construction. */
int ship_mem_new(const char *label, sqlite3 **out, rt_err *e)
{
    const rt_embedded *schema = embed_find_tuner("db/schema.sql");
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
    if ((rc = store_exec(db, label, schema->text, "create schema", e)) != RT_OK) {
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return RT_OK;
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
    for (int i = 0; rc == RT_OK && i < STORE_NTABLES; i++) {
        cols c;
        sbuf q = {0};
        if ((rc = ship_table_cols(db, path, schema, store_tables[i], &c, e)) != RT_OK)
            return rc;
        ship_sb_add(&q, "SELECT printf('table %s, row %%d, column %%s: text holding a NUL byte', "
                    "r, bad) FROM (SELECT rowid AS r, CASE", store_tables[i]);
        for (int k = 0; k < c.n; k++)
            ship_sb_add(&q, " WHEN typeof(\"%s\") = 'text' AND instr(CAST(\"%s\" AS BLOB), X'00') "
                        "THEN '%s'", c.name[k], c.name[k], c.name[k]);
        ship_sb_add(&q, " END AS bad FROM %s.\"%s\") WHERE bad IS NOT NULL LIMIT 1", schema,
                    store_tables[i]);
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
 *   keys:/offsets: layouts, an axis kernel for axis: ones, a flat one for "flat").
 * These check that a database is consistent, not that its numbers are true: a database is
 * trusted for its timings (docs/api.md, "What the library trusts").
 */
int ship_check_db(sqlite3 *db, const char *schema, const char *path, rt_err *e)
{
    char sql[1024];
    int rc;

    add_functions(db);
    if ((rc = store_quick_check_schema(db, schema, path, e)) != RT_OK)
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
             "kernel %%.12s is of the %%s plan', device_id, op, type, layout, n, kernel_hash, "
             "plan) FROM (SELECT b.*, rt_plan(k.family, k.source) AS plan FROM %s.best b "
             "JOIN %s.kernels k ON k.hash = b.kernel_hash) WHERE plan IS NOT NULL AND "
             "plan <> CASE WHEN layout = 'flat' THEN 'flat' WHEN layout LIKE 'axis:%%' "
             "THEN 'axis' ELSE 'segmented' END LIMIT 1", schema, schema);
    return refuse_first(db, path, "layout check", sql, e);
}

/*
 * Attach an image of a database (sqlite3_malloc'd; taken over, freed here on failure) to
 * 'dst' as schema "src", read-only. A WAL-mode image is marked rollback-mode first: the
 * in-memory reader does not do WAL, and the image holds every committed page already.
 */
int ship_attach_image(sqlite3 *dst, const char *path, unsigned char *img,
                      sqlite3_int64 size, rt_err *e)
{
    int rc;
    if (size >= 100)
        img[18] = img[19] = 1;
    if ((rc = store_exec(dst, path, "ATTACH ':memory:' AS src", "attach", e)) != RT_OK) {
        sqlite3_free(img);
        return rc;
    }
    if (sqlite3_deserialize(dst, "src", img, size, size,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY)
        != SQLITE_OK) {
        rc = store_db_fail(dst, path, "read whole", e);
        sqlite3_exec(dst, "DETACH src", NULL, NULL, NULL);
    }
    return rc;
}

/* An image of a database of schema 'version' (older than this redtune's) migrated in
 * memory, as store_open would migrate the file: *img (sqlite3_malloc'd) is replaced. The
 * input file is not touched. */
static int upgrade_image(const char *path, int version, unsigned char **img,
                         sqlite3_int64 *size, rt_err *e)
{
    sqlite3 *m = NULL;
    int rc = RT_OK;

    if (*size >= 100)
        (*img)[18] = (*img)[19] = 1;   /* rollback mode: the in-memory reader does no WAL */
    if (sqlite3_open_v2(":memory:", &m, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_free(*img);
        *img = NULL;
        rc = rt_seterr(e, RT_ENOMEM, "%s: cannot open an in-memory database", path);
        goto done;
    }
    int r = sqlite3_deserialize(m, "main", *img, *size, *size,
                                SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    *img = NULL;   /* the connection's now, freed by SQLite when this fails too */
    if (r != SQLITE_OK) {
        rc = store_db_fail(m, path, "read whole", e);
        goto done;
    }
    if ((rc = store_migrate_db(m, path, version, e)) != RT_OK)
        goto done;
    if (!(*img = sqlite3_serialize(m, "main", size, 0)))
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory migrating it", path);
done:
    sqlite3_close(m);
    return rc;
}

/* Open the redtune database 'path' read-only, check it and attach it whole as "src"; a
 * refused input (missing, foreign, corrupt, newer) is named in st->refused. An older one
 * (store_open reads version 2) is migrated in memory first. */
static int attach_db(sqlite3 *dst, const char *path, store_ship_stats *st, rt_err *e)
{
    store *s = NULL;
    sqlite3_int64 size = 0;
    unsigned char *img;
    int rc;

    if ((rc = store_open(path, STORE_READ, &s, e)) != RT_OK
        || (rc = ship_check_db(s->db, "main", path, e)) != RT_OK) {
        st->refused = path;
        store_close(s);
        return rc;
    }
    if (!(img = sqlite3_serialize(s->db, "main", &size, 0))) {
        rc = rt_seterr(e, RT_EDB, "%s: corrupt database or out of memory reading it whole: %s",
                       path, sqlite3_errmsg(s->db));
        st->refused = path;
    } else if (store_version(s) < STORE_SCHEMA_VERSION
               && (rc = upgrade_image(path, store_version(s), &img, &size, e)) != RT_OK) {
        st->refused = path;
    } else {
        rc = ship_attach_image(dst, path, img, size, e);
    }
    store_close(s);
    return rc;
}

#define DEVICE_MATCH \
    "((s.uuid IS NOT NULL AND d.uuid = s.uuid) OR (s.uuid IS NULL AND d.uuid IS NULL " \
    "AND d.name = s.name AND d.ordinal = s.ordinal))"

/* temp.ship_pick: the ids of the devices of "src" to copy. */
static int pick_devices(sqlite3 *db, const char *path, const copy_opts *o, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = store_exec(db, path, "CREATE TEMP TABLE ship_pick (id INTEGER PRIMARY KEY)",
                        "pick devices", e);
    if (rc != RT_OK)
        return rc;
    if (!o->match)
        return store_exec(db, path, "INSERT INTO temp.ship_pick SELECT id FROM src.devices",
                          "pick devices", e);
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO temp.ship_pick SELECT id FROM "
                           "src.devices WHERE instr(lower(name), lower(?1)) > 0", -1, &st,
                           NULL) != SQLITE_OK)
        rc = store_db_fail(db, path, "pick devices", e);
    for (int i = 0; rc == RT_OK && i < o->nmatch; i++) {
        if (bind_text(st, 1, o->match[i]) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE
            || sqlite3_reset(st) != SQLITE_OK)
            rc = store_db_fail(db, path, "pick devices", e);
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
        ship_sb_add(&want, "%s'%s'", i ? " or " : "", o->match[i]);
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
    return store_query_int(db, path, sql, NULL, n, e);
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

    if ((rc = ship_table_cols(db, path, "main", "devices", &dev, e))
        || (rc = ship_table_cols(db, path, "main", "runs", &run, e))
        || (rc = ship_table_cols(db, path, "main", "kernels", &kern, e))
        || (rc = ship_table_cols(db, path, "main", "binaries", &bin, e))
        || (rc = ship_table_cols(db, path, "main", "measurements", &meas, e))
        || (rc = ship_table_cols(db, path, "main", "best", &best, e))
        || (rc = ship_key_cols(db, path, "measurements", 1, &mkey, e))
        || (rc = ship_key_cols(db, path, "best", 0, &bkey, e)))
        return rc;
    if ((rc = store_exec(db, path, "BEGIN", "begin transaction", e)) != RT_OK)
        return rc;
    if ((rc = pick_devices(db, path, o, e)) != RT_OK
        || (rc = count_rows(db, path, "SELECT count(*) FROM temp.ship_pick", &picked, e)))
        goto done;
    if (picked == 0 && o->match) {
        rc = no_match(db, path, o, e);
        goto done;
    }

    /* Devices, and the map of their ids. */
    ship_sb_add(&b, "INSERT INTO main.devices (");
    ship_sb_cols(&b, &dev, "", "id", NULL);
    ship_sb_add(&b, ") SELECT ");
    ship_sb_cols(&b, &dev, "s.", "id", NULL);
    ship_sb_add(&b, " FROM src.devices s WHERE s.id IN (SELECT id FROM temp.ship_pick) AND NOT "
                "EXISTS (SELECT 1 FROM main.devices d WHERE " DEVICE_MATCH ") ORDER BY s.id;\n"
                "CREATE TEMP TABLE ship_devmap AS SELECT s.id AS src, min(d.id) AS dst FROM "
                "src.devices s JOIN main.devices d ON " DEVICE_MATCH " WHERE s.id IN "
                "(SELECT id FROM temp.ship_pick) GROUP BY s.id;\n");

    /* Kernels: every one, or those of the rows copied. */
    ship_sb_add(&b, "CREATE TEMP TABLE ship_need (hash TEXT PRIMARY KEY);\n");
    if (o->everything)
        ship_sb_add(&b, "INSERT INTO temp.ship_need SELECT hash FROM src.kernels;\n");
    else
        ship_sb_add(&b, "INSERT OR IGNORE INTO temp.ship_need SELECT kernel_hash FROM src.best "
                    "WHERE device_id IN (SELECT id FROM temp.ship_pick);\n");
    if (!o->everything && o->measurements)
        ship_sb_add(&b, "INSERT OR IGNORE INTO temp.ship_need SELECT kernel_hash FROM "
                    "src.measurements WHERE device_id IN (SELECT id FROM temp.ship_pick);\n");
    ship_sb_add(&b, "INSERT OR IGNORE INTO main.kernels (");
    ship_sb_cols(&b, &kern, "", NULL, NULL);
    ship_sb_add(&b, ") SELECT ");
    ship_sb_cols(&b, &kern, "", NULL, NULL);
    ship_sb_add(&b, " FROM src.kernels WHERE hash IN (SELECT hash FROM temp.ship_need) "
                "ORDER BY hash;\n");

    /* CUBINs: every one, or those of the best kernels for the copied devices' arches. */
    ship_sb_add(&b, "INSERT OR IGNORE INTO main.binaries (");
    ship_sb_cols(&b, &bin, "", NULL, NULL);
    ship_sb_add(&b, ") SELECT ");
    ship_sb_cols(&b, &bin, "", NULL, NULL);
    if (o->everything)
        ship_sb_add(&b, " FROM src.binaries WHERE true");
    else
        ship_sb_add(&b, " FROM src.binaries WHERE hash IN (SELECT kernel_hash FROM src.best WHERE "
                    "device_id IN (SELECT id FROM temp.ship_pick)) AND arch IN (SELECT 'sm_' || "
                    "cc_major || cc_minor FROM src.devices WHERE id IN (SELECT id FROM "
                    "temp.ship_pick))");
    ship_sb_add(&b, " ORDER BY hash, arch, nvrtc_version;\n");

    if (o->measurements) {
        static const char *const run_map[][2] = {{"device_id", "m.dst"}, {NULL, NULL}};
        static const char *const meas_map[][2] = {
            {"device_id", "m.dst"}, {"run_id", "r.dst"}, {NULL, NULL}};
        /* Runs, and the map of their ids. */
        ship_sb_add(&b, "INSERT INTO main.runs (");
        ship_sb_cols(&b, &run, "", "id", NULL);
        ship_sb_add(&b, ") SELECT ");
        ship_sb_cols(&b, &run, "s.", "id", run_map);
        ship_sb_add(&b, " FROM src.runs s JOIN temp.ship_devmap m ON m.src = s.device_id WHERE NOT "
                    "EXISTS (SELECT 1 FROM main.runs x WHERE x.device_id = m.dst AND x.started_at "
                    "= s.started_at AND x.cmdline = s.cmdline) ORDER BY s.id;\n"
                    "CREATE TEMP TABLE ship_runmap AS SELECT s.id AS src, min(x.id) AS dst FROM "
                    "src.runs s JOIN temp.ship_devmap m ON m.src = s.device_id JOIN main.runs x ON "
                    "x.device_id = m.dst AND x.started_at = s.started_at AND x.cmdline = "
                    "s.cmdline GROUP BY s.id;\n");
        /* Measurements: a verified ok one replaces one that is not, or a slower one. */
        ship_sb_add(&b, "INSERT INTO main.measurements AS t (");
        ship_sb_cols(&b, &meas, "", "id", NULL);
        ship_sb_add(&b, ") SELECT ");
        ship_sb_cols(&b, &meas, "s.", "id", meas_map);
        ship_sb_add(&b, " FROM src.measurements s JOIN temp.ship_devmap m ON m.src = s.device_id "
                    "LEFT JOIN temp.ship_runmap r ON r.src = s.run_id WHERE true ORDER BY ");
        ship_sb_cols(&b, &mkey, "s.", NULL, NULL);
        ship_sb_add(&b, " ON CONFLICT (");
        ship_sb_cols(&b, &mkey, "", NULL, NULL);
        ship_sb_add(&b, ") DO UPDATE SET ");
        sb_update(&b, &meas, &mkey, "id");
        ship_sb_add(&b, " WHERE excluded.status = 'ok' AND excluded.verified = 1 AND NOT "
                    "(t.status = 'ok' AND t.verified = 1 AND t.median_us <= "
                    "excluded.median_us);\n");
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
        ship_sb_add(&backed, "(EXISTS (SELECT 1 FROM src.measurements x WHERE x.kernel_hash = "
                    "s.kernel_hash AND ");
        sb_equal(&backed, &both, "x", "s");
        ship_sb_add(&backed, " AND x.status = 'ok' AND x.verified = 1) OR NOT EXISTS (SELECT 1 "
                    "FROM src.measurements x WHERE x.device_id = s.device_id))");
        ship_sb_add(&count, "SELECT count(*) FROM src.best s JOIN temp.ship_devmap m ON m.src = "
                    "s.device_id WHERE NOT %s", backed.p ? backed.p : "");
        ship_sb_add(&b, "INSERT INTO main.best AS t (");
        ship_sb_cols(&b, &best, "", NULL, NULL);
        ship_sb_add(&b, ") SELECT ");
        ship_sb_cols(&b, &best, "s.", NULL, best_map);
        ship_sb_add(&b, " FROM src.best s JOIN temp.ship_devmap m ON m.src = s.device_id WHERE %s "
                    "ORDER BY ", backed.p ? backed.p : "");
        ship_sb_cols(&b, &bkey, "s.", NULL, NULL);
        ship_sb_add(&b, " ON CONFLICT (");
        ship_sb_cols(&b, &bkey, "", NULL, NULL);
        ship_sb_add(&b, ") DO UPDATE SET ");
        sb_update(&b, &best, &bkey, NULL);
        ship_sb_add(&b, " WHERE excluded.median_us < t.median_us;\n");
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
    rc = store_exec(db, path, "COMMIT", "commit", e);
done:
    if (rc != RT_OK)
        store_tx_rollback(db);
    sqlite3_exec(db, "DROP TABLE IF EXISTS temp.ship_pick; DROP TABLE IF EXISTS "
                 "temp.ship_devmap; DROP TABLE IF EXISTS temp.ship_need; DROP TABLE IF "
                 "EXISTS temp.ship_runmap", NULL, NULL, NULL);
    free(b.p);
    return rc;
}

/* copy_from, then let "src" go. */
int ship_copy_detach(sqlite3 *db, const char *path, const copy_opts *o,
                     store_ship_stats *st, rt_err *e)
{
    int rc = copy_from(db, path, o, st, e);
    return rc == RT_OK ? store_exec(db, path, "DETACH src", "detach", e) : rc;
}

/* Fill the row counts of 'st' from the output 'db'. */
int ship_counts(sqlite3 *db, const char *path, store_ship_stats *st, rt_err *e)
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

/* Check the in-memory output as its inputs were checked (an output that fails is refused,
 * named in st->refused), then write it whole into 'out'. */
int ship_write_db(sqlite3 *db, const char *out, int force, const char *const *in, int nin,
                  store_ship_stats *st, rt_err *e)
{
    sqlite3_int64 size = 0;
    unsigned char *img;
    int rc;

    if ((rc = ship_check_db(db, "main", out, e)) != RT_OK) {
        st->refused = out;
        return rc;
    }
    if ((rc = store_exec(db, out, "VACUUM", "compact", e)) != RT_OK)
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
    if ((rc = store_check_output(out, force, &in, 1, e)) || (rc = ship_mem_new(out, &db, e))
        || (rc = attach_db(db, in, st, e)))
        goto done;
    rc = ship_copy_detach(db, in, &o, st, e);
    if (rc == RT_OK && (rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = ship_write_db(db, out, force, &in, 1, st, e);
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
    if ((rc = store_check_output(out, force, in, nin, e)) || (rc = ship_mem_new(out, &db, e)))
        goto done;
    for (int i = 0; i < nin; i++)
        if ((rc = attach_db(db, in[i], st, e)) || (rc = ship_copy_detach(db, in[i], &o, st, e)))
            goto done;
    if ((rc = ship_counts(db, out, st, e)) == RT_OK)
        rc = ship_write_db(db, out, force, in, nin, st, e);
done:
    sqlite3_close(db);
    return rc;
}
