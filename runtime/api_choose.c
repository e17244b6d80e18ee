/*
 * api_choose.c - libredtune's choice of a kernel for each (operator, type, size range) of
 * rt_reduce (under the context's mutex, once per (op, type, size slot of n)):
 *   1. the device row of the database nearest to this GPU that has winners for (op, type,
 *      layout "flat", cold L2): same name and SM count (among rows of as many winners this
 *      GPU's own, by UUID), else same compute capability, else same major architecture
 *      (store_find_device); else the built-in default (gridstride, B=256 V=16/size (at most
 *      4) U=4 G=4, generated from the embedded template). Its winners are completed by those
 *      of identical GPUs for the sizes it lacks (the shares of `redtune --split`;
 *      store_list_best_for_device_kind);
 *   2. among that device's winners, by size slot (api_size_slot: n = 2^k exactly, or n in
 *      (2^k, 2^(k+1))): for n = 2^k the tuned size m nearest to it in log2, the larger m on
 *      a tie; inside (2^k, 2^(k+1)) the smallest tuned m > 2^k when m <= 2^(k+2), else the
 *      m nearest to 2^(k+0.5); never an m below a quarter of the slot's largest n while a
 *      larger one is left. A config tuned for a larger n runs a smaller one with no more
 *      blocks than it was timed with; one tuned for a smaller n can need blocks, passes or
 *      tickets it never met (docs/api.md, "Choosing the kernel");
 *   3. the kernel loaded (api_kernel.c: a stored CUBIN, else NVRTC); a winner whose kernel
 *      cannot be made here gives way to the built-in default (api_builtin_instead), and the
 *      decision's level is then the built-in's.
 * The decision is then published in an array of atomic pointers, so a later call reads it
 * with no lock: a reduction is a table lookup and the launches.
 *
 * The database's answer per (layout, op, type) (api_get_choice) serves the segmented and axis
 * calls too (api_seg.c, api_axis.c). Also here: REDTUNE_LOG's line at a new decision and the
 * case each call met, for REDTUNE_CAPTURE (capture.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"
#include "capture.h"
#include "family.h"
#include "optype.h"
#include "store.h"

const char *const api_level_names[] = {
    "?", "exact device", "same compute capability", "same major architecture",
    "built-in default",
};

/* ---------------------------------------------------------------- choosing */

/* The row of ctx->cache / ctx->choices of a checked operator. */
static int op_index(rt_op op)
{
    return (int)op < RT_OP_COUNT ? (int)op : RT_OP_COUNT + ((int)op - RT_OP_USER_FIRST);
}

static int collect_row(const store_best_row *row, void *arg)
{
    choice *c = arg;
    if (c->nrows == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        best_entry *rows = realloc(c->rows, (size_t)cap * sizeof *rows);
        if (!rows) {
            c->oom = 1;
            return 1;   /* stops the walk */
        }
        c->rows = rows;
        c->cap = cap;
    }
    best_entry *b = &c->rows[c->nrows++];
    b->n = row->n;
    snprintf(b->hash, sizeof b->hash, "%s", row->kernel_hash);
    snprintf(b->family, sizeof b->family, "%s", row->family);
    snprintf(b->params, sizeof b->params, "%s", row->params);
    b->median_us = row->median_us;
    b->seg_mean = row->seg_mean;
    b->device_id = row->device_id;
    memset(b->axis, 0, sizeof b->axis);
    if (row->layout && !strncmp(row->layout, "axis:", 5)
        && sscanf(row->layout + 5, "%llux%llux%llu", &b->axis[0], &b->axis[1], &b->axis[2]) != 3)
        memset(b->axis, 0, sizeof b->axis);
    return 0;
}

/* The database's answer for (layout, op, type), read once; layout 0 is flat, 1 keys, 2
 * offsets (every profile of the layout), API_AXIS_ROWS / _COLS the `axis:OxLxI` rows of
 * inner == 1 / inner > 1. Caller holds ctx->lock. */
static const char *const layout_names[NLAYOUTS] = {LAYOUT, "keys", "offsets", "axis", "axis"};

/* The winners of built-in or user operator 'on' (its name) for the resolved spec 'ts' and
 * 'layout' into c->rows, from the device row nearest this GPU (c->dev, c->level); no row
 * anywhere leaves c->nrows 0. With 'known', rows of a family this library does not know are
 * dropped (a sibling's: their stored unit would be the sibling's own code). With 'band'
 * (segmented layouts), the device row is the nearest with a winner whose mean segment length
 * lies in [band[0], band[1]] (all its rows of the layout are read then). */
static int read_choice(rt_ctx *ctx, int layout, rt_op op, const char *on, const optype_ts *ts,
                       int known, const double *band, choice *c, rt_err *e)
{
    /* The database keys its winners by (op, element type, accumulator, result): schema
     * version 3; a version 2 file reads as accumulator = result = type. */
    const char *tn = rt_type_name(ts->elem), *an = rt_type_name(ts->acc),
               *rn = rt_type_name(ts->res);
    /* axis_kind: 1 rows of inner == 1, 0 of inner > 1, -1 any row of the layout */
    int axis_kind = layout == API_AXIS_ROWS ? 1 : layout == API_AXIS_COLS ? 0 : -1;
    c->nrows = 0;
    c->oom = 0;
    int rc = band ? store_find_device_mean(ctx->db, &ctx->dev, on, tn, an, rn,
                                           layout_names[layout], HOT, band[0], band[1], &c->dev, e)
                  : store_find_device_kind(ctx->db, &ctx->dev, on, tn, an, rn,
                                           layout_names[layout], axis_kind, HOT, &c->dev, e);
    if (rc == RT_ENOTFOUND) {
        rt_clearerr(e);
        return RT_OK;
    }
    if (rc == RT_OK)
        rc = store_list_best_for_device_kind(ctx->db, c->dev.id, on, tn, an, rn,
                                             layout_names[layout], axis_kind, HOT, collect_row,
                                             c, e);
    if (rc == RT_OK && c->oom)
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory reading the winners of %s %s",
                       store_path(ctx->db), on, tn);
    if (rc == RT_OK && api_user_of(ctx, op))
        rc = api_keep_definition(ctx, api_user_of(ctx, op), c, e);
    if (rc == RT_OK && known) {
        int k = 0;
        for (int i = 0; i < c->nrows; i++)
            if (family_find(c->rows[i].family))
                c->rows[k++] = c->rows[i];
        c->nrows = k;
    }
    return rc;
}

/* read_choice for built-in or user operator 'op' (named 'on') and the spec 'type'; for
 * RT_RESULT_INDEX (argmin/argmax, the index alone) with no winner of its own, the winners of
 * the {value, index} result (c->from_pair), run for the index: the same loads and combines,
 * half the stores, and the tuner keys them by the element type. */
static int read_choice_or_pair(rt_ctx *ctx, int layout, rt_op op, const char *on, rt_type type,
                               int known, choice *c, rt_err *e)
{
    optype_ts ts;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return RT_OK;   /* not defined for 'op' (a sibling): no rows */
    int rc = read_choice(ctx, layout, op, on, &ts, known, NULL, c, e);
    if (rc == RT_OK && !c->nrows && optype_index_result(ts.canon)
        && !optype_resolve(op, optype_elem(type), &ts, NULL, 0)) {
        rc = read_choice(ctx, layout, op, on, &ts, 1, NULL, c, e);
        c->from_pair = c->nrows > 0;
    }
    return rc;
}

int api_get_choice(rt_ctx *ctx, int layout, rt_op op, rt_type type, choice **out, rt_err *e)
{
    choice **row = &ctx->choices[layout][op_index(op)];
    optype_ts ts;
    int rc = RT_OK;

    *out = NULL;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return rt_seterr(e, RT_EINVAL, "api_get_choice: type spec 0x%x of %s does not "
                         "resolve", (unsigned)type, api_opname(ctx, op));
    if (!*row && !(*row = calloc(OPTYPE_SLOTS, sizeof **row)))
        return rt_seterr(e, RT_ENOMEM, "out of memory");
    choice *c = &(*row)[ts.slot];

    *out = c;
    if (c->resolved)
        return RT_OK;
    c->from_pair = 0;
    rc = read_choice_or_pair(ctx, layout, op, api_opname(ctx, op), type, 0, c, e);
    /* None of its own for this GPU or a similar one: a built-in operator takes the winners
     * of a sibling of the same cost (min those of max, argmin argmax's, asum sum's), of the
     * same types, at the nearest device level it has; else its own winners of a type of the
     * same width (min i64 those of min u64, then of min f64: optype_type_kin); else the
     * built-in default. */
    rt_op kin[4];
    int nkin = rc == RT_OK && !c->nrows && !api_user_of(ctx, op) ? optype_siblings(op, kin, 4) : 0;
    c->has_kin = c->has_tkin = 0;
    c->kin_name[0] = c->kin_desc[0] = '\0';
    for (int i = 0; i < nkin && rc == RT_OK && !c->nrows; i++) {
        if (!optype_same_cost(op, kin[i], type))
            continue;
        rc = read_choice_or_pair(ctx, layout, kin[i], rt_op_name(kin[i]), type, 1, c, e);
        if (rc == RT_OK && c->nrows) {
            c->has_kin = 1;
            c->kin = kin[i];
            snprintf(c->kin_name, sizeof c->kin_name, "%s", rt_op_name(kin[i]));
            snprintf(c->kin_desc, sizeof c->kin_desc, "%s (an operator of the same cost)",
                     c->kin_name);
        }
    }
    rt_type tkin[4];
    int ntkin = rc == RT_OK && !c->nrows && !api_user_of(ctx, op)
                    ? optype_type_kin(op, type, tkin, 4) : 0;
    for (int i = 0; i < ntkin && rc == RT_OK && !c->nrows; i++) {
        rc = read_choice_or_pair(ctx, layout, op, rt_op_name(op), tkin[i], 1, c, e);
        if (rc == RT_OK && c->nrows) {
            c->has_tkin = 1;
            c->tkin = tkin[i];
            snprintf(c->kin_name, sizeof c->kin_name, "%s %s", rt_op_name(op),
                     rt_type_name(tkin[i]));
            snprintf(c->kin_desc, sizeof c->kin_desc, "%s (a type of the same width)",
                     c->kin_name);
            snprintf(c->kin_own, sizeof c->kin_own, "%s", rt_type_name(type));
        }
    }
    if (rc != RT_OK) {
        free(c->rows);
        c->rows = NULL;
        c->nrows = c->cap = 0;
        c->has_kin = c->has_tkin = c->from_pair = 0;
        return rc;
    }
    c->level = c->nrows ? c->dev.level : LEVEL_BUILTIN;
    c->resolved = 1;
    return RT_OK;
}

/* A segmented call's lengths far from every mean of the chosen row's winners (api_seg.c):
 * the winners of the device row nearest this GPU that has one with a mean length in
 * [mlo, mhi], read once per (layout, op, spec, mean bucket mb) and kept in ctx->mean_choices
 * until rt_close. *out = NULL when there is none, when it is 'c''s own device row, or when
 * 'c' is not a plain answer (a sibling's or the {value, index} result's winners, a user
 * operator's): then 'c' stands. Caller holds ctx->lock. */
int api_get_choice_mean(rt_ctx *ctx, int layout, rt_op op, rt_type type, const choice *c,
                        int mb, double mlo, double mhi, choice **out, rt_err *e)
{
    optype_ts ts;
    *out = NULL;
    if (c->has_kin || c->has_tkin || c->from_pair || api_user_of(ctx, op)
        || optype_resolve(op, type, &ts, NULL, 0))
        return RT_OK;
    mean_choice *m;
    for (m = ctx->mean_choices; m; m = m->next)
        if (m->layout == layout && m->op == op && m->slot == ts.slot && m->mb == mb)
            break;
    if (!m) {
        if (!(m = calloc(1, sizeof *m)))
            return rt_seterr(e, RT_ENOMEM, "out of memory");
        *m = (mean_choice){ctx->mean_choices, layout, op, ts.slot, mb, {0}};
        const double band[2] = {mlo, mhi};
        int rc = read_choice(ctx, layout, op, api_opname(ctx, op), &ts, 0, band, &m->c, e);
        if (rc != RT_OK) {
            free(m->c.rows);
            free(m);
            return rc;
        }
        m->c.level = m->c.nrows ? m->c.dev.level : LEVEL_BUILTIN;
        m->c.resolved = m->c.by_mean = 1;
        ctx->mean_choices = m;
    }
    if (m->c.nrows && m->c.dev.id != c->dev.id)
        *out = &m->c;
    return RT_OK;
}

void api_choices_free(rt_ctx *ctx)
{
    for (int l = 0; l < NLAYOUTS; l++)
        for (int o = 0; o < NOPS; o++) {
            for (int t = 0; ctx->choices[l][o] && t < OPTYPE_SLOTS; t++)
                free(ctx->choices[l][o][t].rows);
            free(ctx->choices[l][o]);
            ctx->choices[l][o] = NULL;
        }
    while (ctx->mean_choices) {
        mean_choice *m = ctx->mean_choices;
        ctx->mean_choices = m->next;
        free(m->c.rows);
        free(m);
    }
}

const char *api_row_owner(const choice *c, const best_entry *b)
{
    if (b->device_id && b->device_id != c->dev.id)
        return "this size's winner on an identical GPU (the row above has none of this "
               "case, as after --split)";
    if (c->dev.own)
        return "this GPU's own row";
    return c->dev.level == STORE_MATCH_EXACT ? "the row of another GPU of this model"
                                             : "the row of another GPU";
}

/* A winner's family is timed only up to its @max_n (oneblock): not one to serve a slot past it. */
static int fits_slot(const best_entry *r, unsigned k)
{
    const rt_family *f = family_find(r->family);
    return !f || !f->max_n || ldexp(1.0, (int)k) <= (double)f->max_n;
}

/* A winner tuned at m serves n up to 4m (two octaves past its size): one timed at a smaller
 * n runs a larger one with more blocks, passes or tiles a block than it was timed with, at a
 * cost that grows with n (a one-block winner of 2^12 ran n = 56747 in 10.9 µs where the 2^20
 * winner took 5.7; docs/results.md, 2026-11-28), while one timed at a larger n runs a smaller
 * one with at most its blocks. The slot's largest n: 2^k, or 2^(k+1) for (2^k, 2^(k+1)). */
static int reaches_slot(const best_entry *r, unsigned sl)
{
    return ldexp((double)r->n, 2) >= ldexp(1.0, (int)(sl / 2 + (sl & 1)));
}

/* The winner for size slot sl (api_size_slot) among rows (any order), NULL for none: for
 * n = 2^k the tuned size nearest in log2, the larger on a tie; for n in (2^k, 2^(k+1)) the
 * smallest tuned size above 2^k when it is at most 2^(k+2) (the next one with the tuner's
 * default sizes), else, as for sparse tuning, the tuned size nearest in log2 to 2^(k+0.5)
 * (the smaller on a tie). Winners of a family whose @max_n is below 2^k, and winners tuned
 * at less than a quarter of the slot's largest n (reaches_slot), are passed over while
 * another is left. */
const best_entry *api_pick_winner(const best_entry *rows, int nrows, unsigned sl)
{
    const unsigned k = sl / 2;
    int any = 0, reach = 0;
    for (int i = 0; i < nrows && !any; i++)
        any = fits_slot(&rows[i], k);
    for (int i = 0; i < nrows && !reach; i++)
        reach = (!any || fits_slot(&rows[i], k)) && reaches_slot(&rows[i], sl);
    const best_entry *best = NULL;
    if (sl & 1) {
        const double low = ldexp(1.0, (int)k), near = ldexp(1.0, (int)k + 2);
        for (int i = 0; i < nrows; i++)
            if ((!any || fits_slot(&rows[i], k)) && (double)rows[i].n > low
                && (!best || rows[i].n < best->n))
                best = &rows[i];
        if (best && (double)best->n <= near)
            return best;
    }
    const double target = (sl & 1) ? k + 0.5 : k;
    double dist = INFINITY;
    best = NULL;
    for (int i = 0; i < nrows; i++) {
        if ((any && !fits_slot(&rows[i], k)) || (reach && !reaches_slot(&rows[i], sl)))
            continue;
        double d = fabs(log2((double)rows[i].n) - target);
        if (d < dist || (d == dist && ((sl & 1) ? rows[i].n < best->n : rows[i].n > best->n))) {
            dist = d;
            best = &rows[i];
        }
    }
    return best;
}

/* The built-in default for (op, type): gridstride B=256 V=16/size U=min(4, 16/V) G=4
 * (16-byte loads; U*V at most 16 accumulators a thread, so the halves' V=8 and the bytes'
 * V=16 do not spill; the 32/64-bit types keep V=4/2 U=4), legal for every built-in operator
 * (they all commute) and type and for a commutative user operator; a user operator that does not commute gets diffwarps with its defaults (P=8
 * C=1 W=32 PAD=1), which keeps the order of the elements. */
static int builtin_config(const rt_ctx *ctx, rt_op op, rt_type type, rt_config *cfg, rt_err *e)
{
    const user_op *u = api_user_of(ctx, op);
    const char *fam = u && !u->op.commutative ? "diffwarps" : "gridstride";
    const rt_family *f = family_find(fam);

    if (!f)
        return rt_seterr(e, RT_ENOTFOUND, "the built-in default family %s is not "
                         "built into this library%s%s", fam, family_error() ? ": " : "",
                         family_error() ? family_error() : "");
    if (f->needs_commutative)
        api_builtin_gridstride(type, cfg);
    else
        config_default(f, cfg);
    return RT_OK;
}

void api_builtin_gridstride(rt_type type, rt_config *cfg)
{
    long long v = (long long)(16 / optype_size(type)), unroll = 16 / v < 4 ? 16 / v : 4;
    rt_err ignore;
    config_default(family_find("gridstride"), cfg);
    config_set(cfg, "B", 256, &ignore);
    config_set(cfg, "V", v, &ignore);
    config_set(cfg, "U", unroll, &ignore);
    config_set(cfg, "G", 4, &ignore);
}

/* Choose, load and publish the decision for (op, type, size slot b). */
static int resolve(rt_ctx *ctx, rt_op op, rt_type type, unsigned b, decision **out,
                   rt_err *e)
{
    decision *d;
    choice *c;
    kernel *k = NULL;
    const best_entry *row = NULL, *passed = NULL;
    decision_row *drow;
    rt_config cfg;
    char tn[96], what[RT_NAME_MAX + 128], range[64], *why = NULL;
    int rc = RT_OK, si = api_slot(op, type);

    pthread_mutex_lock(&ctx->lock);
    drow = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    if (!drow) {
        if (!(drow = calloc(1, sizeof *drow))) {
            d = NULL;
            rc = rt_seterr(e, RT_ENOMEM, "out of memory");
            goto done;
        }
        for (int t = 0; t < OPTYPE_SLOTS; t++)
            for (int i = 0; i < NBUCKETS; i++)
                atomic_init(&drow->d[t][i], NULL);
        atomic_store_explicit(&ctx->cache[op_index(op)], drow, memory_order_release);
    }
    d = atomic_load_explicit(&drow->d[si][b], memory_order_acquire);
    if (d)
        goto done;   /* another thread decided meanwhile */
    double t = api_mono_ms();
    if ((rc = api_get_choice(ctx, 0, op, type, &c, e)) != RT_OK)
        goto done;
    api_trace(ctx, &t, "%s %s: winners read from the database", api_opname(ctx, op),
          api_typename(op, type, tn, sizeof tn));
    api_slot_text(b, range, sizeof range);
    snprintf(what, sizeof what, "%s %s %s", api_opname(ctx, op),
             api_typename(op, type, tn, sizeof tn), range);
    if (c->level != LEVEL_BUILTIN) {
        row = api_pick_winner(c->rows, c->nrows, b);
        rc = api_winner_kernel(ctx, op, type, row, &k, e);
        /* Its kernel cannot be made here: the built-in default serves the slot instead, and
         * the decision says so (level, the winner passed over, NVRTC's reason). */
        if (rc == RT_ENVRTC) {
            passed = row;
            row = NULL;
            if ((rc = builtin_config(ctx, op, type, &cfg, e)) == RT_OK)
                rc = api_builtin_instead(ctx, op, type, what, passed->family, passed->params,
                                         &cfg, &k, &why, e);
        }
    } else if ((rc = builtin_config(ctx, op, type, &cfg, e)) == RT_OK) {
        rc = api_config_kernel(ctx, op, type, &cfg, API_BUILTIN, &k, e);
    }
    if (rc != RT_OK)
        goto done;   /* not cached: the next call tries again */
    if (!(d = calloc(1, sizeof *d))) {
        rc = rt_seterr(e, RT_ENOMEM, "out of memory");
        goto done;
    }
    d->k = k;
    d->level = passed ? LEVEL_BUILTIN : c->level;
    d->c = c;
    d->row = row;
    d->passed = passed;
    d->why = why;
    why = NULL;
    d->next = ctx->decisions;
    ctx->decisions = d;
    atomic_store_explicit(&drow->d[si][b], d, memory_order_release);
    if (ctx->cap.log && passed)
        api_log_instead(ctx, what, passed->family, passed->params, c->dev.name, c->level,
                        api_kin_desc(c, passed), d->why, k);
    else if (ctx->cap.log)
        api_log_choice(ctx, what, c->level, row ? c->dev.name : NULL, api_kin_desc(c, row), k);
done:
    pthread_mutex_unlock(&ctx->lock);
    free(why);
    *out = rc == RT_OK ? d : NULL;
    return rc;
}

unsigned api_bucket_of(unsigned long long n)
{
    return 63u - (unsigned)__builtin_clzll(n);   /* n >= 1 */
}

/* rt_reduce's decisions are made per size slot: 2k for n = 2^k, 2k + 1 for n in
 * (2^k, 2^(k+1)). A tuned power of two keeps its own winner; the sizes between take the
 * next larger tuned size's (api_pick_winner). */
unsigned api_size_slot(unsigned long long n)
{
    return 2 * api_bucket_of(n) + ((n & (n - 1)) != 0);   /* n >= 1 */
}

/* "n = 2^k" or "n in (2^k, 2^(k+1))", for messages. */
void api_slot_text(unsigned sl, char *buf, size_t len)
{
    if (sl & 1)
        snprintf(buf, len, "n in (2^%u, 2^%u)", sl / 2, sl / 2 + 1);
    else
        snprintf(buf, len, "n = 2^%u", sl / 2);
}

/* Whether the decision for n >= 1 is made (its kernel loaded): nothing to load. */
int api_decided(const rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n)
{
    decision_row *row = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    return row && atomic_load_explicit(&row->d[api_slot(op, type)][api_size_slot(n)],
                                       memory_order_acquire) != NULL;
}

/* The decision for n >= 1: a lock-free lookup once made. */
int api_get_decision(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                        decision **out, rt_err *e)
{
    unsigned b = api_size_slot(n);
    decision_row *row = atomic_load_explicit(&ctx->cache[op_index(op)], memory_order_acquire);
    *out = row ? atomic_load_explicit(&row->d[api_slot(op, type)][b], memory_order_acquire)
               : NULL;
    return *out ? RT_OK : resolve(ctx, op, type, b, out, e);
}

/* ---------------------------------------------------------------- REDTUNE_LOG, REDTUNE_CAPTURE */

/* A new decision: a fallback (another GPU's winner, the built-in default) is a warning, a
 * winner of this GPU news at info level. 'from' is the device row's name, NULL for none. */
void api_log_choice(rt_ctx *ctx, const char *what, int level, const char *from,
                    const char *kin, const kernel *k)
{
    if (kin)
        capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: %s holds no winner of its own for "
                    "this GPU (\"%s\", %s) or a similar one; %s %s runs, the winner of %s "
                    "tuned on \"%s\" (%s)", what, store_path(ctx->db),
                    ctx->dev.name, ctx->arch, k->family, k->params, kin, from ? from : "?",
                    api_level_names[level]);
    else if (level == STORE_MATCH_EXACT)
        capture_log(&ctx->cap, CAPTURE_LOG_INFO, "%s: %s %s, tuned on this GPU", what,
                    k->family, k->params);
    else if (level == LEVEL_BUILTIN)
        capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: %s holds no winner for this GPU (\"%s\", "
                    "%s) or a similar one; the built-in default %s %s runs", what,
                    store_path(ctx->db), ctx->dev.name, ctx->arch, k->family, k->params);
    else
        capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: %s holds no winner for this GPU (\"%s\", "
                    "%s); %s %s runs, tuned on \"%s\" (%s)", what, store_path(ctx->db),
                    ctx->dev.name, ctx->arch, k->family, k->params, from ? from : "?",
                    api_level_names[level]);
}

/* The built-in default in place of a winner that cannot be made (api_builtin_instead): a
 * warning whatever the winner's level, since what runs is not what the database chose. */
void api_log_instead(rt_ctx *ctx, const char *what, const char *wfamily, const char *wparams,
                     const char *from, int level, const char *kin, const char *why,
                     const kernel *k)
{
    char whose[RT_NAME_MAX + 128] = "";
    if (kin)
        snprintf(whose, sizeof whose, ", a winner of %s", kin);
    capture_log(&ctx->cap, CAPTURE_LOG_WARN, "%s: the database's winner %s %s (tuned on \"%s\", "
                "%s%s) cannot be made for this GPU (\"%s\", %s): %s; the built-in default %s %s "
                "runs instead", what, wfamily, wparams, from ? from : "?", api_level_names[level],
                whose, ctx->dev.name, ctx->arch, why ? why : "?", k->family, k->params);
}

const char *api_kin_name(const choice *c, const best_entry *row)
{
    return c && row && (c->has_kin || c->has_tkin) ? c->kin_name : NULL;
}

const char *api_kin_desc(const choice *c, const best_entry *row)
{
    return c && row && (c->has_kin || c->has_tkin) ? c->kin_desc : NULL;
}

/* What a kin is, after its name: ", an operator of the same cost" or ", a type of the same
 * width" (bench/pick.c reads both). */
static const char *kin_what(const choice *c)
{
    return c->has_tkin ? ", a type of the same width" : ", an operator of the same cost";
}

const char *api_kin_phrase(const choice *c, const best_entry *row, char *buf, size_t len)
{
    const char *kin = api_kin_name(c, row);
    snprintf(buf, len, "%s%s%s", kin ? "; a winner of " : "", kin ? kin : "",
             kin ? kin_what(c) : "");
    return buf;
}

const char *api_kin_note(const rt_ctx *ctx, const choice *c, const best_entry *row, rt_op op,
                         char *buf, size_t len)
{
    if (!row || !c)
        snprintf(buf, len, "%s", "");
    else if (c->from_pair && !c->has_kin)
        snprintf(buf, len, "; the winner of the {value, index} result, run for the index alone: "
                 "%s holds none of the index result's own", store_path(ctx->db));
    else if (c->from_pair)
        snprintf(buf, len, "; the winner of %s's {value, index} result, an operator of the same "
                 "cost, run for the index alone: %s holds none of %s's own for this GPU or a "
                 "similar one", rt_op_name(c->kin), store_path(ctx->db), api_opname(ctx, op));
    else if (!api_kin_name(c, row))
        snprintf(buf, len, "%s", "");
    else if (c->has_tkin)
        snprintf(buf, len, "; the winner of %s, a type of the same width: %s holds none of "
                 "%s %s's own for this GPU or a similar one, nor of an operator of the same "
                 "cost", c->kin_name, store_path(ctx->db), api_opname(ctx, op),
                 c->kin_own);
    else
        snprintf(buf, len, "; the winner of %s, an operator of the same cost: "
                 "%s holds none of %s's own for this GPU or a similar one", rt_op_name(c->kin),
                 store_path(ctx->db), api_opname(ctx, op));
    return buf;
}

/* The mean-length bucket of the segmented lookup (api_seg.c's seg_decide). */
static int mean_bucket(double mean)
{
    return mean > 1 ? (int)floor(2 * log2(mean)) : 0;
}

/* The case of a call, for REDTUNE_CAPTURE and REDTUNE_LOG=info. It had an exact tuned entry
 * when this GPU's winners hold one at exactly n (segmented: and in the mean-length bucket of
 * n / nseg, a factor of sqrt 2, which is what the lookup tells apart). */
void api_met(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
             unsigned long long nseg, int level, const choice *c)
{
    static const char *const fallbacks[] = {"?", "nearest", "same-cc", "same-major", "builtin"};
    static const char *const layouts[] = {"flat", "keys", "offsets"};
    optype_ts ts;
    if (!ctx->cap.active)
        return;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return;
    char spec[64];
    int exact = 0;
    int mb = layout ? mean_bucket((double)n / (double)(nseg ? nseg : 1)) : 0;
    int kin = c && (c->has_kin || c->has_tkin);
    for (int i = 0; level == STORE_MATCH_EXACT && c && !kin && i < c->nrows && !exact; i++)
        exact = (unsigned long long)c->rows[i].n == n
                && (!layout || mean_bucket(c->rows[i].seg_mean) == mb);
    const user_op *u = api_user_of(ctx, op);
    capture_case cs = {api_opname(ctx, op), capture_type_text(op, ts.canon, spec, sizeof spec),
                       layouts[layout], n,
                       layout ? nseg : 0,
                       exact ? NULL : kin && level != LEVEL_BUILTIN ? "sibling" : fallbacks[level],
                       u ? u->id : NULL,
                       ctx->dev.name};
    capture_case_met(&ctx->cap, &cs);
}
