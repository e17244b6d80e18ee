/*
 * results.c - rows of table best or table measurements as a table, CSV or JSON (`redtune best
 * --format`, `redtune measurements`). One query gives every format its columns; the JSON
 * document is built by SQLite itself (json_object, json_group_array), so that quoting and
 * number forms are SQLite's, not printf's. docs/results-format.md is the schema.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "../runtime/family.h"
#include "../runtime/store_int.h"
#include "csv.h"
#include "results.h"
#include "store_tune.h"

int results_parse_format(const char *name)
{
    static const char *const names[] = {"table", "csv", "json"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

/* The parameters text of each kernel ("B=256 V=4") as a JSON object ({"B":256,"V":4}),
 * split by a recursive CTE; and the families' declared determinism from ?5, a JSON object
 * {"family": 1 or 0} made here from the templates' headers (what `redtune families` says). */
#define RESULTS_CTES                                                                          \
    "WITH RECURSIVE fam(name, det) AS (SELECT key, value FROM json_each(?5)), "               \
    "sp(hash, tok, rest) AS (SELECT hash, '', params || ' ' FROM kernels UNION ALL "          \
    "  SELECT hash, substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1) " \
    "  FROM sp WHERE rest <> ''), "                                                           \
    "kv(hash, k, v) AS (SELECT hash, substr(tok, 1, instr(tok, '=') - 1), "                   \
    "  substr(tok, instr(tok, '=') + 1) FROM sp WHERE instr(tok, '=') > 1), "                 \
    "kp(hash, obj) AS (SELECT hash, json_group_object(k, CASE WHEN CAST(v AS INTEGER) || '' = v " \
    "  THEN CAST(v AS INTEGER) ELSE v END) FROM kv GROUP BY hash), "

/* The row sources: every measurement, or each winner with its measurement's run. */
#define RESULTS_MEASUREMENTS                                                                  \
    "SELECT device_id AS dev, op, type, acc, result, layout, n, hot, kernel_hash AS hash, "  \
    "status, message, "                                                                       \
    "median_us, min_us, max_us, reps, gbps, frac_bw, verified, deterministic AS det_checked, "  \
    "nseg, seg_mean, seg_spread, run_id, measured_at AS at FROM measurements"
#define RESULTS_BEST                                                                          \
    "SELECT b.device_id AS dev, b.op, b.type, b.acc, b.result, b.layout, b.n, b.hot, "        \
    "b.kernel_hash AS hash, "                                                                 \
    "'ok' AS status, '' AS message, b.median_us, b.min_us, b.max_us, b.reps, b.gbps, "        \
    "b.frac_bw, 1 AS verified, b.deterministic AS det_checked, b.nseg, b.seg_mean, "          \
    "b.seg_spread, m.run_id, coalesce(m.measured_at, b.updated_at) AS at FROM best b "        \
    "LEFT JOIN measurements m ON m.device_id = b.device_id AND m.kernel_hash = b.kernel_hash " \
    "AND m.op = b.op AND m.type = b.type AND m.acc = b.acc AND m.result = b.result "          \
    "AND m.layout = b.layout AND m.n = b.n AND m.hot = b.hot"

/* The rows, filtered and ordered; the columns of the CSV header below, in its order. */
#define RESULTS_ROWS(source)                                                                  \
    "x AS (SELECT d.name AS device, 'sm_' || d.cc_major || d.cc_minor AS arch, d.uuid, "      \
    "d.read_gbps, r.op, r.type, r.acc, r.result, r.n, r.layout, r.hot, r.nseg, r.seg_mean, "  \
    "r.seg_spread, "                                                                          \
    "k.family, k.params, r.hash, r.median_us, r.min_us, r.max_us, r.reps, r.gbps, "           \
    "100 * r.frac_bw AS read_pct, r.status, r.message, r.verified, fam.det, "                 \
    "nullif(r.det_checked, -1) AS det_checked, r.run_id, ru.started_at, ru.ended_at, r.at, "  \
    "coalesce(kp.obj, '{}') AS pobj "                                                         \
    "FROM (" source ") r JOIN devices d ON d.id = r.dev JOIN kernels k ON k.hash = r.hash "   \
    "LEFT JOIN kp ON kp.hash = r.hash LEFT JOIN fam ON fam.name = k.family "                  \
    "LEFT JOIN runs ru ON ru.id = r.run_id "                                                  \
    "WHERE (?1 IS NULL OR instr(lower(d.name), lower(?1)) > 0) "                              \
    "AND (?2 IS NULL OR r.op = ?2) AND (?3 IS NULL OR r.type = ?3) AND (?4 <= 0 OR r.n = ?4) " \
    "AND (?7 IS NULL OR r.acc = ?7) "                                                         \
    "ORDER BY d.name, d.ordinal, d.id, r.op, r.type, r.acc, r.result, r.layout, r.hot, r.n, " \
    "k.family, "                                                                              \
    "k.params, r.hash) "

#define RESULTS_NCOLS 32
static const char *const csv_header[RESULTS_NCOLS] = {
    "device", "arch", "uuid", "read_gbps", "op", "type", "acc", "result", "n", "layout", "hot",
    "segments",
    "seg_mean", "seg_spread", "family", "params", "kernel", "median_us", "min_us", "max_us",
    "reps", "gbps", "read_pct", "status", "message", "verified", "deterministic",
    "deterministic_checked", "run_id", "run_started_at", "run_ended_at", "measured_at"};

/* A JSON boolean from 1 / 0 / anything else (null). */
#define JBOOL(x) "json(CASE " x " WHEN 1 THEN 'true' WHEN 0 THEN 'false' ELSE 'null' END)"

/* One row as a JSON object (docs/results-format.md). */
#define RESULTS_OBJECT                                                                        \
    "json_object('device', json_object('name', device, 'arch', arch, 'uuid', uuid, "          \
    "  'read_gbps', read_gbps), "                                                             \
    "'case', json_object('op', op, 'type', type, 'acc', acc, 'result', result, 'n', n, "      \
    "  'layout', layout, "                                                                    \
    "  'hot', " JBOOL("hot") ", 'segmentation', json(CASE WHEN instr(layout, ':') = 0 "       \
    "  THEN 'null' WHEN layout LIKE 'axis:%' THEN json_object('layout', 'axis', 'shape', "    \
    "  substr(layout, 6), 'outputs', nseg, 'len', CAST(seg_mean AS INTEGER)) "                \
    "  ELSE json_object('layout', substr(layout, 1, instr(layout, ':') - 1), "                \
    "  'profile', substr(layout, instr(layout, ':') + 1), 'segments', nseg, "                 \
    "  'mean_length', seg_mean, 'spread', seg_spread) END)), "                                \
    "'family', family, 'params', params, 'parameters', json(pobj), 'kernel', hash, "          \
    "'median_us', median_us, 'min_us', min_us, 'max_us', max_us, 'reps', reps, "              \
    "'gbps', gbps, 'read_pct', read_pct, 'status', status, 'message', message, "              \
    "'verified', " JBOOL("verified") ", 'deterministic', " JBOOL("det") ", "                  \
    "'deterministic_checked', " JBOOL("det_checked") ", "                                     \
    "'run', json(CASE WHEN run_id IS NULL THEN 'null' ELSE json_object('id', run_id, "        \
    "  'started_at', started_at, 'ended_at', ended_at) END), 'measured_at', at)"

/* The whole document: json_group_array keeps the order of x (SQLite keeps a subquery's
 * ORDER BY for an aggregate over it). */
#define RESULTS_DOCUMENT                                                                      \
    "SELECT json_object('format', 'redtune-results', 'version', 1, 'what', ?6, "              \
    "'rows', json_group_array(json(" RESULTS_OBJECT "))) FROM x"

static const char *const queries[2][2] = {
    /* [best][json] */
    {RESULTS_CTES RESULTS_ROWS(RESULTS_MEASUREMENTS) "SELECT * FROM x",
     RESULTS_CTES RESULTS_ROWS(RESULTS_MEASUREMENTS) RESULTS_DOCUMENT},
    {RESULTS_CTES RESULTS_ROWS(RESULTS_BEST) "SELECT * FROM x",
     RESULTS_CTES RESULTS_ROWS(RESULTS_BEST) RESULTS_DOCUMENT},
};

/* {"gridstride":1,...}: the families' own word on determinism, for the query's ?5. */
static char *families_json(void)
{
    size_t cap = 64, len;
    for (int i = 0; i < family_count(); i++)
        cap += strlen(family_at(i)->name) + 8;
    char *j = malloc(cap);
    if (!j)
        return NULL;
    strcpy(j, "{");
    for (int i = 0; i < family_count(); i++) {
        len = strlen(j);
        snprintf(j + len, cap - len, "%s\"%s\":%d", i ? "," : "", family_at(i)->name,
                 family_at(i)->deterministic ? 1 : 0);
    }
    strcat(j, "}");
    return j;
}

/* One row of the CSV (the header when st is NULL), each field as RFC 4180 wants it (csv.h). */
static void csv_row(FILE *out, sqlite3_stmt *st)
{
    for (int i = 0; i < RESULTS_NCOLS; i++) {
        if (i)
            fputc(',', out);
        csv_put_field(out, st ? (const char *)sqlite3_column_text(st, i) : csv_header[i]);
    }
    fputs("\r\n", out);
}

/* The measurements as aligned text, the columns of `redtune best` and the status. */
static void table_row(FILE *out, sqlite3_stmt *st, int first)
{
    if (first)
        fprintf(out, "%-28s %-6s %-8s %-4s %-4s %-6s %-17s %-5s %12s  %-18s %-30s %10s %9s %7s "
                "%-7s %3s\n", "device", "arch", "op", "type", "acc", "result", "layout", "L2",
                "n", "family", "params", "time(us)", "GB/s", "%read", "status", "det");
    int det = sqlite3_column_type(st, 27) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 27);
    fprintf(out, "%-28.28s %-6s %-8s %-4s %-4s %-6s %-17s %-5s %12lld  %-18s %-30s %10.2f %9.1f "
            "%6.1f%% %-7s %3s\n", col_text(st, 0), col_text(st, 1), col_text(st, 4),
            col_text(st, 5), col_text(st, 6), col_text(st, 7), col_text(st, 9),
            sqlite3_column_int(st, 10) ? "hot" : "flush", sqlite3_column_int64(st, 8),
            col_text(st, 14), col_text(st, 15), sqlite3_column_double(st, 17),
            sqlite3_column_double(st, 21), sqlite3_column_double(st, 22), col_text(st, 23),
            det < 0 ? "?" : det ? "yes" : "no");
}

int cmd_results(const char *db_path, int best, const results_filter *f, results_format fmt,
                FILE *out, int *refused, rt_err *e)
{
    store *s = NULL;
    sqlite3_stmt *st = NULL;
    char *fams = NULL;
    long long rows = 0;
    int rc = store_open(db_path, STORE_READ, &s, e), r;
    const char *what = best ? "best" : "measurements";

    *refused = rc == RT_EDB;
    if (rc)
        return rc;
    if (!(fams = families_json())) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    if (sqlite3_prepare_v2(s->db, queries[!!best][fmt == RESULTS_JSON], -1, &st, NULL)
            != SQLITE_OK
        || bind_text(st, 1, f->device_match) != SQLITE_OK || bind_text(st, 2, f->op) != SQLITE_OK
        || bind_text(st, 3, f->type) != SQLITE_OK || sqlite3_bind_int64(st, 4, f->n) != SQLITE_OK
        || bind_text(st, 5, fams) != SQLITE_OK
        || (fmt == RESULTS_JSON && bind_text(st, 6, what) != SQLITE_OK)
        || bind_text(st, 7, f->acc) != SQLITE_OK) {
        rc = store_fail(s, what, e);
        goto done;
    }
    if (fmt == RESULTS_CSV)
        csv_row(out, NULL);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (fmt == RESULTS_JSON)
            fprintf(out, "%s\n", col_text(st, 0));
        else if (fmt == RESULTS_CSV)
            csv_row(out, st);
        else
            table_row(out, st, rows == 0);
        rows++;
    }
    if (r != SQLITE_DONE) {
        rc = store_fail(s, what, e);
        goto done;
    }
    if (fmt == RESULTS_TABLE && rows == 0)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: nothing %s%s", db_path,
                       best ? "stored as best" : "measured",
                       f->op || f->type || f->acc || f->n > 0 || f->device_match
                       ? " for that filter" : "");
    if (fflush(out) != 0 && rc == RT_OK)
        rc = rt_seterr(e, RT_EIO, "stdout: cannot write");
done:
    sqlite3_finalize(st);
    free(fams);
    store_close(s);
    return rc;
}
