/*
 * report_html.c - `redtune report`: a database's results as one self-contained HTML file.
 * SQL gives the numbers (a query per device, per case, per chart layer); C draws them as
 * inline SVG. Nothing is fetched: no script, no external style sheet, font or image. The
 * file is also well-formed XML (every element closed, only XML's own entities, no
 * namespace URI), so that a test can check it with any XML parser.
 *
 * Per device, per case (op, type, acc, result, layout, L2): a chart of GB/s against n on a log2 axis with
 * the device's measured read bandwidth as a dashed line, each family's configs as a band from
 * the slowest to the fastest at each n (with the fastest as a line), and the winners labelled
 * by family; then the winners as a table, and per family how much each parameter matters.
 * Given the benches' CSV files (--peers, tuner/peers.c), the other libraries' times for the
 * same device and case are drawn too, each peer as a dashed line of open squares, and listed
 * against the winner at the same n.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "../runtime/store_int.h"
#include "results.h"
#include "ship.h"
#include "peers.h"
#include "report_int.h"
#include "store_tune.h"

/* ---------------------------------------------------------------- the output text */

void report_put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (int tries = 0; tries < 2 && !t->oom; tries++) {
        size_t room = t->cap - t->len;
        va_start(ap, fmt);
        int n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap - t->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
}

/* Text from the database, escaped for XML (element text and quoted attributes). */
void report_put_esc(text *t, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': report_put(t, "&amp;"); break;
        case '<': report_put(t, "&lt;"); break;
        case '>': report_put(t, "&gt;"); break;
        case '"': report_put(t, "&quot;"); break;
        case '\'': report_put(t, "&#39;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                report_put(t, "?");   /* control characters are not XML */
            else
                report_put(t, "%c", *s);
        }
    }
}

/* ---------------------------------------------------------------- the data of one chart */

static void chart_free(chart *c)
{
    free(c->bands);
    free(c->wins);
    free(c->peers);
    memset(c, 0, sizeof *c);
}

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

#define CASE_WHERE " WHERE m.device_id = ?1 AND m.op = ?2 AND m.type = ?3 AND m.layout = ?4 " \
                   "AND m.hot = ?5 AND m.acc = ?6 AND m.result = ?7"

/* A case of a device: the operator, the types (element, accumulator, result), the layout and
 * the L2 treatment. */
typedef struct rcase {
    char op[64], type[16], acc[16], result[16], layout[96];
    int hot;
} rcase;

/* Bind a case (device, op, type, layout, hot, acc, result) as ?1..?7. */
static int bind_case(sqlite3_stmt *st, long long dev, const rcase *k)
{
    return sqlite3_bind_int64(st, 1, dev) != SQLITE_OK || bind_text(st, 2, k->op) != SQLITE_OK
           || bind_text(st, 3, k->type) != SQLITE_OK || bind_text(st, 4, k->layout) != SQLITE_OK
           || sqlite3_bind_int(st, 5, k->hot) != SQLITE_OK
           || bind_text(st, 6, k->acc) != SQLITE_OK || bind_text(st, 7, k->result) != SQLITE_OK;
}

static int load_chart(store *s, long long dev, const rcase *k, chart *c, rt_err *e)
{
    static const char bands_sql[] =
        "SELECT k.family, m.n, min(m.gbps), max(m.gbps), count(*) FROM measurements m "
        "JOIN kernels k ON k.hash = m.kernel_hash" CASE_WHERE
        " AND m.status = 'ok' AND m.verified = 1 GROUP BY k.family, m.n ORDER BY k.family, m.n";
    static const char wins_sql[] =
        "SELECT m.n, m.gbps, m.median_us, 100 * m.frac_bw, m.nseg, m.seg_mean, k.family, "
        "k.params FROM best m JOIN kernels k ON k.hash = m.kernel_hash" CASE_WHERE
        " ORDER BY m.n";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    memset(c, 0, sizeof *c);
    for (int pass = 0; pass < 2; pass++) {
        if (sqlite3_prepare_v2(s->db, pass ? wins_sql : bands_sql, -1, &st, NULL) != SQLITE_OK
            || bind_case(st, dev, k)) {
            rc = store_fail(s, "report", e);
            goto done;
        }
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            int *count = pass ? &c->nwins : &c->nbands;
            size_t size = pass ? sizeof *c->wins : sizeof *c->bands;
            void **arr = pass ? (void **)&c->wins : (void **)&c->bands;
            void *grown = realloc(*arr, ((size_t)*count + 1) * size);
            if (!grown) {
                rc = rt_seterr(e, RT_ENOMEM, "report: out of memory");
                goto done;
            }
            *arr = grown;
            if (pass) {
                winner *w = &c->wins[c->nwins];
                w->n = sqlite3_column_int64(st, 0);
                w->gbps = sqlite3_column_double(st, 1);
                w->us = sqlite3_column_double(st, 2);
                w->pct = sqlite3_column_double(st, 3);
                w->nseg = sqlite3_column_int64(st, 4);
                w->seg_mean = sqlite3_column_double(st, 5);
                copy(w->family, sizeof w->family, col_text(st, 6));
                copy(w->params, sizeof w->params, col_text(st, 7));
            } else {
                band *b = &c->bands[c->nbands];
                copy(b->family, sizeof b->family, col_text(st, 0));
                b->n = sqlite3_column_int64(st, 1);
                b->lo = sqlite3_column_double(st, 2);
                b->hi = sqlite3_column_double(st, 3);
                b->configs = sqlite3_column_int64(st, 4);
            }
            (*count)++;
        }
        if (r != SQLITE_DONE) {
            rc = store_fail(s, "report", e);
            goto done;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
done:
    sqlite3_finalize(st);
    if (rc)
        chart_free(c);
    return rc;
}

static int peer_order(const void *a, const void *b)
{
    const peer_row *x = *(const peer_row *const *)a, *y = *(const peer_row *const *)b;
    int c = strcmp(x->who, y->who);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The peers' rows of device 'name' and case 'k': op, type, layout and L2 alike, the result
 * too where the file says it. One row per peer and n: of two, the one read later (a later
 * --peers file, a later line) stands. */
static int load_peers(chart *c, peer_set *ps, const char *name, const rcase *k, rt_err *e)
{
    for (int i = 0; ps && i < ps->n; i++) {
        peer_row *r = &ps->v[i];
        if (strcmp(r->device, name) || strcmp(r->op, k->op) || strcmp(r->type, k->type)
            || strcmp(r->layout, k->layout) || r->hot != k->hot
            || (r->result[0] && strcmp(r->result, k->result)))
            continue;
        r->used = 1;
        int j = 0;
        while (j < c->npeers && (c->peers[j]->n != r->n || strcmp(c->peers[j]->who, r->who)))
            j++;
        if (j == c->npeers) {
            const peer_row **v = realloc(c->peers, ((size_t)c->npeers + 1) * sizeof *v);
            if (!v)
                return rt_seterr(e, RT_ENOMEM, "report: out of memory");
            c->peers = v;
            c->npeers++;
        }
        c->peers[j] = r;
    }
    if (c->npeers > 1)
        qsort(c->peers, (size_t)c->npeers, sizeof *c->peers, peer_order);
    return RT_OK;
}

/* ---------------------------------------------------------------- the sections */

/* How much each parameter matters per family: at the family's largest n, the fastest config
 * with each value of the parameter; a wide range says the value matters. */
static int put_params(text *t, store *s, long long dev, const rcase *k, rt_err *e)
{
    static const char sql[] =
        "WITH RECURSIVE m AS (SELECT k.family, k.params, m.n, m.gbps FROM measurements m "
        "JOIN kernels k ON k.hash = m.kernel_hash" CASE_WHERE
        " AND m.status = 'ok' AND m.verified = 1), "
        "top AS (SELECT family, max(n) AS n FROM m GROUP BY family), "
        "c AS (SELECT m.family, m.params, m.n, m.gbps FROM m JOIN top USING (family, n)), "
        "sp(family, params, gbps, tok, rest) AS (SELECT family, params, gbps, '', params || ' ' "
        "  FROM c UNION ALL SELECT family, params, gbps, substr(rest, 1, instr(rest, ' ') - 1), "
        "  substr(rest, instr(rest, ' ') + 1) FROM sp WHERE rest <> ''), "
        "pv AS (SELECT family, substr(tok, 1, instr(tok, '=') - 1) AS k, "
        "  substr(tok, instr(tok, '=') + 1) AS v, max(gbps) AS g FROM sp "
        "  WHERE instr(tok, '=') > 1 GROUP BY 1, 2, 3) "
        "SELECT p.family, top.n, p.k, count(*), min(p.g), max(p.g), "
        "(SELECT q.v FROM pv q WHERE q.family = p.family AND q.k = p.k ORDER BY q.g DESC "
        " LIMIT 1) FROM pv p JOIN top USING (family) GROUP BY p.family, p.k "
        "ORDER BY p.family, max(p.g) - min(p.g) DESC, p.k";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r, rows = 0;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, dev, k)) {
        rc = store_fail(s, "report", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (!rows++)
            report_put(t, "<details><summary>which parameters matter</summary>\n<table>\n<tr>"
                "<th>family</th><th>at n</th><th>parameter</th><th>values</th>"
                "<th>GB/s of the fastest config per value</th><th>best value</th></tr>\n");
        report_put(t, "<tr><td>");
        report_put_esc(t, col_text(st, 0));
        report_put(t, "</td><td>%lld</td><td>", sqlite3_column_int64(st, 1));
        report_put_esc(t, col_text(st, 2));
        report_put(t, "</td><td>%d</td><td>%.1f to %.1f</td><td>", sqlite3_column_int(st, 3),
            sqlite3_column_double(st, 4), sqlite3_column_double(st, 5));
        report_put_esc(t, col_text(st, 6));
        report_put(t, "</td></tr>\n");
    }
    if (r != SQLITE_DONE)
        rc = store_fail(s, "report", e);
    else if (rows)
        report_put(t, "</table>\n</details>\n");
done:
    sqlite3_finalize(st);
    return rc;
}

static void put_winners(text *t, const chart *c)
{
    if (!c->nwins)
        return;
    report_put(t, "<details><summary>winners</summary>\n<table>\n<tr><th>n</th><th>family</th>"
        "<th>parameters</th><th>median us</th><th>GB/s</th><th>%% read</th>"
        "<th>segments</th><th>mean length</th></tr>\n");
    for (int i = 0; i < c->nwins; i++) {
        const winner *w = &c->wins[i];
        report_put(t, "<tr><td>%lld</td><td>", w->n);
        report_put_esc(t, w->family);
        report_put(t, "</td><td>");
        report_put_esc(t, w->params);
        report_put(t, "</td><td>%.2f</td><td>%.1f</td><td>%.1f</td><td>%lld</td><td>%.1f</td></tr>\n",
            w->us, w->gbps, w->pct, w->nseg, w->seg_mean);
    }
    report_put(t, "</table>\n</details>\n");
}

/* The peers against the winner at the same n: redtune / peer below 1 is redtune faster. */
static void put_peers(text *t, const chart *c)
{
    if (!c->npeers)
        return;
    report_put(t, "<details open=\"open\"><summary>against other libraries</summary>\n<table>\n<tr>"
        "<th>n</th><th>peer</th><th>call</th><th>median us</th><th>GB/s</th>"
        "<th>winner us</th><th>winner / peer</th><th>from</th></tr>\n");
    for (int i = 0; i < c->npeers; i++) {
        const peer_row *r = c->peers[i];
        const winner *w = NULL;
        for (int k = 0; k < c->nwins && !w; k++)
            if (c->wins[k].n == r->n)
                w = &c->wins[k];
        report_put(t, "<tr><td>%lld</td><td>", r->n);
        report_put_esc(t, r->who);
        report_put(t, "</td><td>");
        report_put_esc(t, r->call);
        report_put(t, "</td><td>%.2f</td><td>%.1f</td>", r->us, r->gbps);
        if (w)
            report_put(t, "<td>%.2f</td><td>%.3f</td>", w->us, w->us / r->us);
        else
            report_put(t, "<td>-</td><td>-</td>");
        report_put(t, "<td>");
        report_put_esc(t, r->file);
        report_put(t, ":%d</td></tr>\n", r->line);
    }
    report_put(t, "</table>\n<p>The winner's time is the tuner's measurement; the peer's is the "
        "bench's, in another process: compare them as two runs, not as one.</p>\n"
        "</details>\n");
}

/* One case: its heading, chart and tables. A case whose accumulator or result is not its
 * element type says so: data-case "sum bf16:acc=f32:result=f32 flat flush", heading
 * "sum bf16 (f32 accumulator, f32 result)". */
static int put_case(text *t, store *s, long long dev, const char *name, double read_gbps,
                    const rcase *k, peer_set *ps, rt_err *e)
{
    chart c;
    const char *layout = k->layout;
    int hot = k->hot, plain = !strcmp(k->acc, k->type) && !strcmp(k->result, k->type);
    int rc = load_chart(s, dev, k, &c, e);
    if (rc)
        return rc;
    if ((rc = load_peers(&c, ps, name, k, e))) {
        chart_free(&c);
        return rc;
    }
    const char *colon = strchr(layout, ':');
    report_put(t, "<section class=\"case\" data-case=\"");
    report_put_esc(t, k->op);
    report_put(t, " ");
    report_put_esc(t, k->type);
    if (!plain) {
        report_put(t, ":acc=");
        report_put_esc(t, k->acc);
        report_put(t, ":result=");
        report_put_esc(t, k->result);
    }
    report_put(t, " ");
    report_put_esc(t, layout);
    report_put(t, " %s\">\n<h3>", hot ? "hot" : "flush");
    report_put_esc(t, k->op);
    report_put(t, " ");
    report_put_esc(t, k->type);
    if (!plain) {
        report_put(t, " (");
        report_put_esc(t, k->acc);
        report_put(t, " accumulator, ");
        report_put_esc(t, k->result);
        report_put(t, " result)");
    }
    report_put(t, ", ");
    if (colon && !strncmp(layout, "axis:", 5)) {
        report_put(t, "along an axis, shape ");
        report_put_esc(t, colon + 1);
        report_put(t, " (outer x len x inner)");
    } else if (colon) {
        report_put(t, "segmented by %.*s, profile ", (int)(colon - layout), layout);
        report_put_esc(t, colon + 1);
    } else {
        report_put_esc(t, layout);
    }
    report_put(t, ", L2 %s</h3>\n", hot ? "warm" : "flushed");
    report_chart_svg(t, &c, read_gbps);
    put_winners(t, &c);
    put_peers(t, &c);
    rc = put_params(t, s, dev, k, e);
    report_put(t, "</section>\n");
    chart_free(&c);
    return rc;
}

/* One device: its heading and every case it has results for. */
static int put_device(text *t, store *s, sqlite3_stmt *d, peer_set *ps, rt_err *e)
{
    static const char sql[] =
        "SELECT op, type, layout, hot, acc, result FROM (SELECT op, type, layout, hot, acc, "
        "result FROM best WHERE device_id = ?1 UNION SELECT op, type, layout, hot, acc, result "
        "FROM measurements WHERE device_id = ?1 AND status = 'ok' AND verified = 1) "
        "ORDER BY op, type, acc, result, layout, hot";
    sqlite3_stmt *st = NULL;
    long long dev = sqlite3_column_int64(d, 0);
    double read_gbps = sqlite3_column_double(d, 4);
    int rc = RT_OK, r;
    char name[128];

    copy(name, sizeof name, col_text(d, 1));

    report_put(t, "<section class=\"device\">\n<h2>");
    report_put_esc(t, col_text(d, 1));
    report_put(t, "</h2>\n<p>%s, %d SMs, measured read bandwidth ", col_text(d, 2),
        sqlite3_column_int(d, 3));
    if (read_gbps > 0)
        report_put(t, "%.1f GB/s", read_gbps);
    else
        report_put(t, "not measured");
    report_put(t, "; last seen %s.</p>\n", col_text(d, 5));
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, dev) != SQLITE_OK) {
        rc = store_fail(s, "report", e);
        goto done;
    }
    while (rc == RT_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
        /* The case's text is copied: put_case runs other statements meanwhile. */
        rcase k;
        copy(k.op, sizeof k.op, col_text(st, 0));
        copy(k.type, sizeof k.type, col_text(st, 1));
        copy(k.layout, sizeof k.layout, col_text(st, 2));
        k.hot = sqlite3_column_int(st, 3);
        copy(k.acc, sizeof k.acc, col_text(st, 4));
        copy(k.result, sizeof k.result, col_text(st, 5));
        rc = put_case(t, s, dev, name, read_gbps, &k, ps, e);
    }
    if (rc == RT_OK && r != SQLITE_DONE)
        rc = store_fail(s, "report", e);
    report_put(t, "</section>\n");
done:
    sqlite3_finalize(st);
    return rc;
}

static const char style[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222}"
    "h2{border-bottom:1px solid #999}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
    "svg text{font-size:11px}"
    ".plot{fill:#fff;stroke:#999}.grid{stroke:#eee}"
    ".ytick{text-anchor:end}.xtick{text-anchor:middle}.xlabel{text-anchor:middle}"
    ".ylabel{text-anchor:middle}"
    ".read{stroke:#c00;stroke-dasharray:6 4;stroke-width:1.5}"
    ".readlabel{text-anchor:end;fill:#c00}"
    ".wlabel{font-size:9px}.legend{font-size:11px}";

int cmd_report(const char *db_path, const char *device_match, const char *out, int force,
               const char *const *peer_files, int npeer_files, int *refused, rt_err *e)
{
    static const char sql[] =
        "SELECT d.id, d.name, 'sm_' || d.cc_major || d.cc_minor, d.sm_count, d.read_gbps, "
        "d.last_seen FROM devices d WHERE (?1 IS NULL OR instr(lower(d.name), lower(?1)) > 0) "
        "AND (EXISTS (SELECT 1 FROM best b WHERE b.device_id = d.id) OR EXISTS (SELECT 1 "
        "FROM measurements m WHERE m.device_id = d.id AND m.status = 'ok' AND m.verified = 1)) "
        "ORDER BY d.name, d.ordinal, d.id";
    store *s = NULL;
    sqlite3_stmt *st = NULL;
    text t = {0};
    peer_set ps = {0};
    int rc, r = SQLITE_DONE, devices = 0;

    *refused = 0;
    if ((rc = store_check_output(out, force, &db_path, 1, e)))
        return rc;
    /* The peers' files first: one that cannot be read stops the report before anything. */
    for (int i = 0; i < npeer_files; i++)
        if ((rc = peers_load(&ps, peer_files[i], e))) {
            *refused = rc == RT_ENOMEM ? 0 : 2;
            goto done;
        }
    if ((rc = store_open(db_path, STORE_READ, &s, e))) {
        *refused = rc == RT_EDB;
        goto done;
    }
    report_put(&t, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        "<title>redtune report: ");
    report_put_esc(&t, db_path);
    report_put(&t, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>redtune report: ", style);
    report_put_esc(&t, db_path);
    report_put(&t, "</h1>\n<p>GB/s (bytes a reduction must read per second) against n for every "
        "tuned case. Black: the winner at each n, labelled by family. Shaded: each family's "
        "verified configs from the slowest to the fastest at each n (hover for the counts), "
        "its fastest as a line. Dashed red: the device's measured read bandwidth.%s</p>\n",
        npeer_files ? " Dashed lines of open squares: other libraries' times for the same "
        "device and case, from the benches' CSV files (--peers)." : "");
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, device_match) != SQLITE_OK) {
        rc = store_fail(s, "report", e);
        goto done;
    }
    while (rc == RT_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
        rc = put_device(&t, s, st, &ps, e);
        devices++;
    }
    if (rc)
        goto done;
    if (r != SQLITE_DONE) {
        rc = store_fail(s, "report", e);
        goto done;
    }
    if (!devices) {
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no results to report%s", db_path,
                       device_match ? " for that device" : "");
        goto done;
    }
    report_put(&t, "</body>\n</html>\n");
    if (t.oom) {
        rc = rt_seterr(e, RT_ENOMEM, "report: out of memory");
        goto done;
    }
    rc = store_write_output(out, t.p, t.len, force, &db_path, 1, e);
    /* Rows of a device or case this database has no results for: said, not fatal. */
    int unused = 0;
    for (int i = 0; rc == RT_OK && i < ps.n; i++)
        unused += !ps.v[i].used;
    if (unused)
        fprintf(stderr, "redtune report: %d row%s of --peers matched no case of %s (another "
                "GPU's name, or a case not tuned there)\n", unused, unused == 1 ? "" : "s",
                db_path);
done:
    sqlite3_finalize(st);
    store_close(s);
    peers_free(&ps);
    free(t.p);
    return rc;
}
