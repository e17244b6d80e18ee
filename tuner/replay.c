/*
 * replay.c - `redtune replay` (replay.h): a strategy driven through its seam (strategy.h)
 * with stored measurements for answers, as sweep.c drives it with the GPU's.
 *
 * The rows come from a database (every measurement, in the order of its id: the order the
 * run timed them, which for an exhaustive run is the space's) or from the CSV of `redtune
 * measurements --format csv` (the order of the file: that command sorts a case's rows by
 * family and parameters, so the candidates' order, which exhaustive with a budget and local's
 * restarts follow, is not the space's). A case is one device (name and uuid), operator, type
 * spec, layout, size and L2 regime. Its candidates are its distinct configs (family and
 * parameters, parsed against this build's families; rows of a family or parameter it does
 * not know are left out and counted); a config measured twice keeps the row of more
 * repetitions (a full timing over a brief one).
 *
 * Cases are replayed in the order of their first row. Local search starts, as in a tuning
 * run, from the config the replay chose for the nearest size already replayed of the same
 * device, operator, type spec, layout and regime (a run's database holds those winners);
 * where there is none, from the --prior database's winner of the same kind at the nearest
 * size (its rows of a GPU of the case's name first), as a run into a copy of that database
 * would start from a similar GPU's winners (sweep.c, known_best); else from a similar case.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "../runtime/family.h"
#include "../runtime/optype.h"
#include "../runtime/store_int.h"
#include "csv.h"
#include "segdata.h"
#include "replay.h"
#include "store_tune.h"

typedef struct rcand {
    rt_config cfg;
    char params[256];
    char status[16];
    double median, lo;   /* the median and the fastest run, µs */
    long reps;
} rcand;

typedef struct rcase {
    char dev[160], op[64], type[16], acc[16], result[16], layout[96];
    long long n;
    int hot;
    double seg_mean;     /* segdata_layout_mean: 0 for a flat or axis layout */
    rcand *c;
    int nc, cap;
    int chosen;          /* the candidate the replay chose, or -1 */
} rcase;

typedef struct rows {
    rcase *v;
    int n, cap;
    long skipped;        /* rows of configs this build does not know */
    char skipped_eg[320];
} rows;

/* A winner of the --prior database: the device's name, the case but for the size, the
 * size, the config. */
typedef struct pwin {
    rcase kind;          /* dev is the GPU's name alone; no candidates */
    rt_config cfg;
} pwin;

typedef struct prior {
    pwin *v;
    int n, cap;
} prior;

/* Same case but for device and size: operator, type spec, layout and regime. */
static int same_kind(const rcase *a, const rcase *b)
{
    return a->hot == b->hot && !strcmp(a->op, b->op) && !strcmp(a->type, b->type)
           && !strcmp(a->acc, b->acc) && !strcmp(a->result, b->result)
           && !strcmp(a->layout, b->layout);
}

static int same_cfg(const rt_config *a, const rt_config *b)
{
    return !memcmp(a, b, sizeof *a);   /* config_default zeroes every byte first */
}

static void rows_free(rows *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->v[i].c);
    free(r->v);
}

/* One text column of the row: "" for NULL. */
static const char *txt(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "";
}

typedef struct rrow {
    const char *dev, *op, *type, *acc, *result, *layout, *family, *params, *status;
    long long n;
    int hot;
    double median, lo;
    long reps;
} rrow;

/* Room for one more of 'n' elements of 'size' bytes in *v (capacity *cap): 0, or -1 (out of
 * memory, *v unchanged). */
static int grow(void *v, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 0;
    int want = *cap ? 2 * *cap : 64;
    void *p = realloc(*(void **)v, (size_t)want * size);
    if (!p)
        return -1;
    *(void **)v = p;
    *cap = want;
    return 0;
}

static int add_row(rows *r, const rrow *w, rt_err *e)
{
    rt_config cfg;
    rt_err ce;
    const rt_family *f = family_find(w->family);
    if (!f || config_parse(f, w->params, &cfg, &ce)) {
        if (!r->skipped++)
            snprintf(r->skipped_eg, sizeof r->skipped_eg, "%s %s", w->family, w->params);
        return RT_OK;
    }
    rcase key;
    memset(&key, 0, sizeof key);
    snprintf(key.dev, sizeof key.dev, "%s", w->dev);
    snprintf(key.op, sizeof key.op, "%s", w->op);
    snprintf(key.type, sizeof key.type, "%s", w->type);
    snprintf(key.acc, sizeof key.acc, "%s", *w->acc ? w->acc : w->type);
    snprintf(key.result, sizeof key.result, "%s", *w->result ? w->result : w->type);
    snprintf(key.layout, sizeof key.layout, "%s", w->layout);
    key.n = w->n;
    key.hot = w->hot;
    key.chosen = -1;
    rcase *k = NULL;
    for (int i = r->n - 1; i >= 0 && !k; i--)
        if (r->v[i].n == key.n && same_kind(&r->v[i], &key) && !strcmp(r->v[i].dev, key.dev))
            k = &r->v[i];
    if (!k) {
        if (grow(&r->v, &r->cap, r->n, sizeof *r->v))
            return rt_seterr(e, RT_ENOMEM, "replay: out of memory");
        k = &r->v[r->n++];
        key.seg_mean = segdata_layout_mean(key.layout, (unsigned long long)key.n);
        *k = key;
    }
    rcand *c = NULL;
    for (int i = 0; i < k->nc && !c; i++)
        if (same_cfg(&k->c[i].cfg, &cfg))
            c = &k->c[i];
    if (c && c->reps >= w->reps)
        return RT_OK;   /* measured again with fewer repetitions: keep the fuller one */
    if (!c) {
        if (grow(&k->c, &k->cap, k->nc, sizeof *k->c))
            return rt_seterr(e, RT_ENOMEM, "replay: out of memory");
        c = &k->c[k->nc++];
    }
    c->cfg = cfg;
    snprintf(c->params, sizeof c->params, "%s", w->params);
    snprintf(c->status, sizeof c->status, "%s", w->status);
    c->median = w->median;
    c->lo = w->lo;
    c->reps = w->reps;
    return RT_OK;
}

/* Each row of query q (table 'what', for messages) in the database at 'path', to fn; ?1 and
 * ?2, where q has them, bound to op and type (NULL: any). */
typedef int (*row_fn)(sqlite3_stmt *st, void *arg, rt_err *e);
static int each_row(const char *path, const char *q, const char *what, const char *op,
                    const char *type, row_fn fn, void *arg, int *refused, rt_err *e)
{
    store *s = NULL;
    sqlite3_stmt *st = NULL;
    int rc = store_open(path, STORE_READ, &s, e), x;
    if (rc) {
        *refused = rc == RT_EDB;
        return rc;
    }
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK
        || (sqlite3_bind_parameter_count(st) >= 2
            && (sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC) != SQLITE_OK
                || sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC) != SQLITE_OK))) {
        rc = store_fail(s, what, e);
        goto done;
    }
    while ((x = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = fn(st, arg, e)))
            goto done;
    if (x != SQLITE_DONE)
        rc = store_fail(s, what, e);
done:
    sqlite3_finalize(st);
    store_close(s);
    return rc;
}

static int measurement_row(sqlite3_stmt *st, void *arg, rt_err *e)
{
    rrow w = {txt(st, 0), txt(st, 1), txt(st, 2), txt(st, 3), txt(st, 4), txt(st, 5),
              txt(st, 8), txt(st, 9), txt(st, 10), sqlite3_column_int64(st, 6),
              sqlite3_column_int(st, 7), sqlite3_column_double(st, 11),
              sqlite3_column_double(st, 13), (long)sqlite3_column_int64(st, 12)};
    return add_row(arg, &w, e);
}

static int load_db(rows *r, const replay_opts *o, const char *path, int *refused, rt_err *e)
{
    static const char q[] =
        "SELECT d.name || ' ' || d.uuid, m.op, m.type, m.acc, m.result, m.layout, m.n, m.hot, "
        "k.family, k.params, m.status, m.median_us, m.reps, m.min_us FROM measurements m "
        "JOIN devices d ON d.id = m.device_id JOIN kernels k ON k.hash = m.kernel_hash "
        "WHERE (?1 IS NULL OR m.op = ?1) AND (?2 IS NULL OR m.type = ?2) ORDER BY m.id";
    return each_row(path, q, "measurements", o->op, o->type, measurement_row, r, refused, e);
}

/* One winner of the --prior database; a family or parameter this build does not know is
 * left out. */
static int prior_row(sqlite3_stmt *st, void *arg, rt_err *e)
{
    prior *pr = arg;
    const rt_family *f = family_find(txt(st, 8));
    rt_err ce;
    pwin w;
    memset(&w, 0, sizeof w);
    if (!f || config_parse(f, txt(st, 9), &w.cfg, &ce))
        return RT_OK;
    snprintf(w.kind.dev, sizeof w.kind.dev, "%s", txt(st, 0));
    snprintf(w.kind.op, sizeof w.kind.op, "%s", txt(st, 1));
    snprintf(w.kind.type, sizeof w.kind.type, "%s", txt(st, 2));
    snprintf(w.kind.acc, sizeof w.kind.acc, "%s", txt(st, 3));
    snprintf(w.kind.result, sizeof w.kind.result, "%s", txt(st, 4));
    snprintf(w.kind.layout, sizeof w.kind.layout, "%s", txt(st, 5));
    w.kind.n = sqlite3_column_int64(st, 6);
    w.kind.hot = sqlite3_column_int(st, 7);
    if (grow(&pr->v, &pr->cap, pr->n, sizeof *pr->v))
        return rt_seterr(e, RT_ENOMEM, "replay: out of memory");
    pr->v[pr->n++] = w;
    return RT_OK;
}

/* The winners of the --prior database (its `best` rows of configs this build knows). */
static int load_prior(prior *pr, const char *path, int *refused, rt_err *e)
{
    static const char q[] =
        "SELECT d.name, b.op, b.type, COALESCE(b.acc, b.type), COALESCE(b.result, b.type), "
        "b.layout, b.n, b.hot, k.family, k.params FROM best b "
        "JOIN devices d ON d.id = b.device_id JOIN kernels k ON k.hash = b.kernel_hash "
        "ORDER BY b.rowid";
    return each_row(path, q, "best", NULL, NULL, prior_row, pr, refused, e);
}

/* A number of column 'col' of the CSV record: RT_EINVAL naming FILE:LINE when it is none. */
static int csv_num(const csv *c, int i, const char *col, double lo, double *out, rt_err *e)
{
    char *end;
    const char *v = i >= 0 ? c->f[i] : "";
    double x = strtod(v, &end);
    if (!*v || *end || !(x >= lo) || !isfinite(x))
        return rt_seterr(e, RT_EINVAL, "replay %s:%d: column %s: '%s' is not a number of at "
                         "least %g", c->path, c->line, col, v, lo);
    *out = x;
    return RT_OK;
}

enum { C_OP, C_TYPE, C_LAYOUT, C_N, C_FAMILY, C_PARAMS, C_STATUS, C_MEDIAN, C_NEED,
       C_DEVICE = C_NEED, C_UUID, C_ACC, C_RESULT, C_HOT, C_REPS, C_MIN, C_ALL };
static const char *const csv_cols[C_ALL] = {
    "op", "type", "layout", "n", "family", "params", "status", "median_us",
    "device", "uuid", "acc", "result", "hot", "reps", "min_us"};

static int load_csv(rows *r, const replay_opts *o, const char *path, int *refused, rt_err *e)
{
    csv c;
    int idx[C_ALL], rc, width;
    if ((rc = csv_open(&c, "replay", path, e)))
        goto done;
    if ((rc = csv_next(&c, e)) <= 0) {
        if (rc == 0)
            rc = rt_seterr(e, RT_EINVAL, "replay %s: empty: no header row", path);
        goto done;
    }
    for (int i = 0; i < C_ALL; i++)
        if ((idx[i] = csv_column(&c, csv_cols[i])) < 0 && i < C_NEED) {
            rc = rt_seterr(e, RT_EINVAL, "replay %s:%d: no column %s: not the CSV of `redtune "
                           "measurements --format csv`", path, c.line, csv_cols[i]);
            goto done;
        }
    width = c.nf;
    while ((rc = csv_next(&c, e)) == 1) {
        if (c.nf != width) {
            rc = rt_seterr(e, RT_EINVAL, "replay %s:%d: %d fields, the header has %d", path,
                           c.line, c.nf, width);
            goto done;
        }
        double n, med, lo = -1, hot = 0, reps = STRATEGY_FULL_MIN;
        if ((rc = csv_num(&c, idx[C_N], "n", 1, &n, e))
            || (rc = csv_num(&c, idx[C_MEDIAN], "median_us", 0, &med, e))
            || (idx[C_MIN] >= 0 && (rc = csv_num(&c, idx[C_MIN], "min_us", 0, &lo, e)))
            || (idx[C_HOT] >= 0 && (rc = csv_num(&c, idx[C_HOT], "hot", 0, &hot, e)))
            || (idx[C_REPS] >= 0 && (rc = csv_num(&c, idx[C_REPS], "reps", 0, &reps, e))))
            goto done;
#define F(k) (idx[k] >= 0 ? c.f[idx[k]] : "")
        if ((o->op && strcmp(o->op, F(C_OP))) || (o->type && strcmp(o->type, F(C_TYPE))))
            continue;
        char dev[160];
        snprintf(dev, sizeof dev, "%s %s", F(C_DEVICE), F(C_UUID));
        rrow w = {dev, F(C_OP), F(C_TYPE), F(C_ACC), F(C_RESULT), F(C_LAYOUT), F(C_FAMILY),
                  F(C_PARAMS), F(C_STATUS), (long long)n, hot != 0, med,
                  lo >= 0 ? lo : med, (long)reps};
#undef F
        if ((rc = add_row(r, &w, e)))
            goto done;
    }
done:
    if (rc == RT_EINVAL || rc == RT_EIO)
        *refused = 2;
    csv_close(&c);
    return rc < 0 ? rc : RT_OK;
}

/* A file is a database when it starts as SQLite's do; anything else is read as a CSV. */
static int is_sqlite(const char *path)
{
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    return got == sizeof head && !memcmp(head, "SQLite format 3", 16);
}

/* The candidate of k whose config is that of the case w chose, or -1. */
static int same_config(const rcase *k, const rcase *w)
{
    if (w->chosen < 0)
        return -1;
    for (int i = 0; i < k->nc; i++)
        if (same_cfg(&k->c[i].cfg, &w->c[w->chosen].cfg))
            return i;
    return -1;
}

/* The bytes of a case's input, for the distance between cases of other element types. */
static double case_bytes(const rcase *k)
{
    int t = optype_parse_type(k->type);
    return (double)k->n * (double)(t < 0 ? 4 : optype_size((rt_type)t));
}

/* 1 when a and b are the same operator and types of one device and regime, segmented the
 * same way (keys or offsets) over different profiles. */
static int other_profile(const rcase *a, const rcase *b)
{
    return a->seg_mean > 0 && b->seg_mean > 0 && segdata_other_profile(a->layout, b->layout)
           && a->hot == b->hot && !strcmp(a->dev, b->dev) && !strcmp(a->op, b->op)
           && !strcmp(a->type, b->type) && !strcmp(a->acc, b->acc)
           && !strcmp(a->result, b->result);
}

/* Local's start, as sweep.c's known_best finds it in a run's database: the nearest in size
 * of the choices replayed before of the same case (device, operator, type spec, layout,
 * regime) and of the prior's winners of the same kind on a GPU of the case's name; else the
 * prior's of another GPU, the nearest in size; else the nearest in input bytes of a similar
 * case (another operator or type of the same device, regime and layout) whose choice is a
 * candidate here; else, for a segmented case, the choice of another profile of the same
 * operator and layout kind whose mean segment length is within SEG_LIKE times the case's, the
 * nearest (segdata_layout_mean). *start2: the nearest of the same two sources on the other
 * side of the case's size (strategy.h), or -1. */
static int start_of(const rows *r, const prior *pr, int ki, int *start2)
{
    const rcase *k = &r->v[ki];
    int start = -1, similar = -1, profile = -1, other = -1;
    double dist = 0, sdist = 0, pfdist = 0, odist = 0;
    strategy_side sd = STRATEGY_SIDE_NONE;
    for (int i = 0; i < ki; i++) {
        const rcase *w = &r->v[i];
        int j;
        if (other_profile(w, k)) {
            double d = fabs(log(w->seg_mean) - log(k->seg_mean));
            if (d <= log(SEG_LIKE) && (j = same_config(k, w)) >= 0 && (profile < 0 || d < pfdist))
                profile = j, pfdist = d;
            continue;
        }
        if (w->hot != k->hot || strcmp(w->dev, k->dev) || strcmp(w->layout, k->layout))
            continue;
        if ((j = same_config(k, w)) < 0)
            continue;
        if (same_kind(w, k)) {
            double d = fabs(log((double)w->n) - log((double)k->n));
            if (start < 0 || d < dist)
                start = j, dist = d;
            strategy_side_add(&sd, j, w->n, k->n);
        } else {
            double d = fabs(log(case_bytes(w)) - log(case_bytes(k)));
            if (similar < 0 || d < sdist)
                similar = j, sdist = d;
        }
    }
    /* The prior's winners of the same kind that are candidates here: of a GPU of the case's
     * name (k->dev is "name uuid") as the replay's own, of another GPU apart. */
    for (int i = 0; pr && i < pr->n; i++) {
        const pwin *w = &pr->v[i];
        size_t nl = strlen(w->kind.dev);
        int named = !strncmp(k->dev, w->kind.dev, nl) && k->dev[nl] == ' ';
        if (!same_kind(&w->kind, k))
            continue;
        int j = -1;
        for (int c = 0; c < k->nc && j < 0; c++)
            if (same_cfg(&k->c[c].cfg, &w->cfg))
                j = c;
        if (j < 0)
            continue;
        double d = fabs(log((double)w->kind.n) - log((double)k->n));
        if (named) {
            if (start < 0 || d < dist)
                start = j, dist = d;
            strategy_side_add(&sd, j, w->kind.n, k->n);
        } else if (other < 0 || d < odist) {
            other = j, odist = d;
        }
    }
    *start2 = strategy_side_other(&sd, start);
    return start >= 0 ? start : other >= 0 ? other : similar >= 0 ? similar : profile;
}

typedef struct outcome {
    double best, chosen;   /* medians, µs: all candidates', the chosen one's (INFINITY: none) */
    int distinct, picks;   /* configs timed, picks made (halving times some again) */
} outcome;

static int replay_case(const replay_opts *o, rows *r, const prior *pr, int ki, outcome *out,
                       rt_err *e)
{
    rcase *k = &r->v[ki];
    cand *c = calloc((size_t)k->nc, sizeof *c);
    char *timed = calloc((size_t)k->nc, 1);
    double *full = malloc((size_t)k->nc * sizeof *full);   /* full-rule medians seen */
    strategy st = {o->strategy, NULL};
    int rc = RT_OK;
    if (!c || !timed || !full) {
        rc = rt_seterr(e, RT_ENOMEM, "replay: out of memory");
        goto done;
    }
    memset(out, 0, sizeof *out);
    out->best = out->chosen = INFINITY;
    for (int i = 0; i < k->nc; i++) {
        c[i].cfg = k->c[i].cfg;
        snprintf(c[i].params, sizeof c[i].params, "%s", k->c[i].params);
        c[i].rc = RT_OK;
        full[i] = INFINITY;
        if (!strcmp(k->c[i].status, "ok") && k->c[i].median < out->best)
            out->best = k->c[i].median;
    }
    long budget = strategy_budget_min(o->budget, o->budget_pct, o->budget_min, k->nc);
    int start2;
    int start = start_of(r, pr, ki, &start2);
    strategy_case sc = {c, k->nc, k->n, o->seed, budget, start, start2};
    if ((rc = st.ops->init(&st, &sc, e)))
        goto done;
    strategy_pick p;
    while (st.ops->next(&st, 0, &p)) {
        rcand *x = &k->c[p.cand];
        if (o->verbose)
            fprintf(stderr, "  %s %s n=%lld pick %d: %s %s %s %.2f us (%ld reps)\n", k->op,
                    k->layout, k->n, out->picks + 1, x->cfg.family->name, x->params, x->status,
                    x->median, (long)p.min_reps);
        out->picks++;
        out->distinct += !timed[p.cand];
        timed[p.cand] = 1;
        long reps = x->reps < p.min_reps ? p.min_reps : x->reps > p.max_reps ? p.max_reps
                                                                                : x->reps;
        store_measurement m = {.status = x->status, .message = "", .median_us = x->median,
                               .min_us = x->lo, .max_us = x->median, .reps = (int)reps};
        strategy_result res = {p.cand, STRATEGY_MEASURED, &m};
        st.ops->observe(&st, &res);
        if (!strcmp(x->status, "ok") && reps >= STRATEGY_FULL_MIN)
            full[p.cand] = x->median;
    }
    /* best's rule (store_tune.h): the fastest measurement of the full repetition rule. */
    for (int i = 0; i < k->nc; i++)
        if (full[i] < out->chosen) {
            out->chosen = full[i];
            k->chosen = i;
        }
done:
    st.ops->fini(&st);
    free(c);
    free(timed);
    free(full);
    return rc;
}

/* The chosen config of k timed in the judge's sweep of the same case, over that sweep's best
 * (the same device, else the same case of any device); NAN when it has no such case, or the
 * config did not run there. */
static double judged(const rows *j, const rcase *k)
{
    const rcase *w = NULL;
    for (int i = 0; i < j->n; i++) {
        const rcase *x = &j->v[i];
        if (x->n != k->n || !same_kind(x, k))
            continue;
        if (!w || !strcmp(x->dev, k->dev))
            w = x;
    }
    if (!w || k->chosen < 0)
        return NAN;
    double best = INFINITY, mine = NAN;
    for (int i = 0; i < w->nc; i++) {
        if (strcmp(w->c[i].status, "ok"))
            continue;
        if (w->c[i].median < best)
            best = w->c[i].median;
        if (same_cfg(&w->c[i].cfg, &k->c[k->chosen].cfg))
            mine = w->c[i].median;
    }
    return mine / best;
}

static int load_file(rows *r, const replay_opts *o, const char *path, int *refused, rt_err *e)
{
    return is_sqlite(path) ? load_db(r, o, path, refused, e) : load_csv(r, o, path, refused, e);
}

int replay_run(const replay_opts *o, FILE *out, int *refused, rt_err *e)
{
    rows r = {0}, jr = {0};
    prior pr = {0};
    double worst_j = 0;
    int rc = RT_OK, meets = 0, worst = -1, counted = 0;
    double worst_q = 0, max_share = 0, sum_share = 0;
    *refused = 0;
    for (int i = 0; i < o->nfiles && rc == RT_OK; i++)
        rc = load_file(&r, o, o->files[i], refused, e);
    if (rc == RT_OK && o->judge)
        rc = load_file(&jr, o, o->judge, refused, e);
    if (rc == RT_OK && o->prior)
        rc = load_prior(&pr, o->prior, refused, e);
    if (rc)
        goto done;
    if (r.skipped)
        fprintf(stderr, "redtune replay: %ld row%s left out: configs this build does not know "
                "(e.g. %s)\n", r.skipped, r.skipped == 1 ? "" : "s", r.skipped_eg);
    if (!r.n) {
        rc = rt_seterr(e, RT_ENOTFOUND, "replay: no measurement%s of a config this build knows",
                       o->op || o->type ? " for that filter" : "");
        goto done;
    }
    if (o->csv)
        fprintf(out, "device,op,type,acc,result,layout,n,hot,configs,timed,picks,share,"
                     "chosen_us,best_us,quality,chosen_family,chosen_params,meets%s\r\n",
                o->judge ? ",judged" : "");
    else
        fprintf(out, "%-6s %-5s %-22s %12s %7s %5s %6s %10s %10s %7s  %-22s%s\n", "op", "type",
                "layout", "n", "configs", "timed", "share", "chosen(us)", "best(us)",
                "quality", "goal (<=1.03, <=0.20)", o->judge ? " judged" : "");
    for (int i = 0; i < r.n; i++) {
        outcome oc;
        rcase *k = &r.v[i];
        if ((rc = replay_case(o, &r, &pr, i, &oc, e)))
            goto done;
        if (!isfinite(oc.best))
            continue;   /* no config of the case ran: nothing to judge */
        double q = isfinite(oc.chosen) ? oc.chosen / oc.best : INFINITY;
        double share = (double)oc.distinct / k->nc;
        int ok = q <= REPLAY_GOAL_QUALITY && share <= REPLAY_GOAL_SHARE;
        counted++;
        meets += ok;
        sum_share += share;
        if (share > max_share)
            max_share = share;
        if (worst < 0 || q > worst_q)
            worst = i, worst_q = q;
        const rcand *ch = k->chosen >= 0 ? &k->c[k->chosen] : NULL;
        double jq = o->judge ? judged(&jr, k) : NAN;
        char jt[32] = "";
        if (o->judge && isnan(jq))
            snprintf(jt, sizeof jt, "%s", o->csv ? "," : "      -");
        else if (o->judge && o->csv)
            snprintf(jt, sizeof jt, ",%.4f", jq);
        else if (o->judge)
            snprintf(jt, sizeof jt, " %6.3f", jq);
        if (!isnan(jq) && jq > worst_j)
            worst_j = jq;
        if (o->csv) {
            csv_put_field(out, k->dev);
            fprintf(out, ",%s,%s,%s,%s,", k->op, k->type, k->acc, k->result);
            csv_put_field(out, k->layout);
            fprintf(out, ",%lld,%d,%d,%d,%d,%.4f,%.3f,%.3f,%.4f,%s,", k->n, k->hot, k->nc,
                    oc.distinct, oc.picks, share, oc.chosen, oc.best, q,
                    ch ? ch->cfg.family->name : "");
            csv_put_field(out, ch ? ch->params : "");
            fprintf(out, ",%d%s\r\n", ok, jt);
        } else
            fprintf(out, "%-6s %-5s %-22s %12lld %7d %5d %6.3f %10.2f %10.2f %7.3f  %-22s%s\n",
                    k->op, k->type, k->layout, k->n, k->nc, oc.distinct, share, oc.chosen,
                    oc.best, q, ok ? "meets" : "misses", jt);
    }
    if (!o->csv) {
        fprintf(out, "%d cases, %d meet the goal; configs timed: %.1f%% on average, %.1f%% at "
                "most", counted, meets, counted ? 100 * sum_share / counted : 0,
                100 * max_share);
        if (worst >= 0)
            fprintf(out, "; worst quality %.3f (%s %s %s n=%lld)", worst_q, r.v[worst].op,
                    r.v[worst].type, r.v[worst].layout, r.v[worst].n);
        if (o->judge)
            fprintf(out, "; judged by %s: worst %.3f", o->judge, worst_j);
        fputc('\n', out);
    }
    if (fflush(out) != 0)
        rc = rt_seterr(e, RT_EIO, "stdout: cannot write");
done:
    rows_free(&r);
    rows_free(&jr);
    free(pr.v);
    return rc;
}
