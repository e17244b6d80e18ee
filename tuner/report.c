/*
 * report.c - the progress line and the table of winners of a tuning run (report.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "report.h"
#include "segdata.h"
#include "store_tune.h"

double report_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fmt_duration(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s))
        snprintf(buf, len, "?");
    else if (s < 60)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

void report_progress(progress *p, const char *what, int force)
{
    double t = report_now();
    if (!force && t - p->last < (p->tty ? 0.2 : 10.0))
        return;
    p->last = t;
    char el[32], left[32];
    double elapsed = t - p->t0;
    fmt_duration(elapsed, el, sizeof el);
    /* Estimate from the measured candidates only: skipped ones cost nothing. */
    double rate = p->measured > 0 ? elapsed / p->measured : -1;
    fmt_duration(rate * (p->total - p->done), left, sizeof left);
    fprintf(stderr, "%s%s  %ld/%ld  elapsed %s  left ~%s%s", p->tty ? "\r\033[K" : "", what,
            p->done, p->total, el, rate < 0 ? "?" : left, p->tty ? "" : "\n");
    fflush(stderr);
}

void report_progress_clear(progress *p)
{
    if (p->tty)
        fprintf(stderr, "\r\033[K");
}

void report_fmt_n(long long n, char *buf, size_t len)
{
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(buf, len, "2^%d", __builtin_ctzll((unsigned long long)n));
    else
        snprintf(buf, len, "%lld", n);
}

typedef struct table_arg {
    const char *layout;
    const char *device;
    int hot;
    int rows;
} table_arg;

/* A row of the table: the rows of the run's device, L2 mode and layout only (the store's
 * listing filters by operator, type and size). */
static int print_row(const store_best_row *r, void *arg)
{
    table_arg *t = arg;
    if (strcmp(r->device_name, t->device) != 0 || r->hot != t->hot || strcmp(r->layout, t->layout))
        return 0;
    char n[32];
    report_fmt_n(r->n, n, sizeof n);
    printf("%12lld %6s  %-18s %-30s %10.2f %9.1f %7.1f%%", r->n, n, r->family, r->params,
           r->median_us, r->gbps, 100.0 * r->frac_bw);
    if (r->nseg)
        printf("  %lld segments, mean %.1f", r->nseg, r->seg_mean);
    printf("\n");
    t->rows++;
    return 0;
}

void report_layout(const tune_opts *o, int pi, char *buf, size_t len)
{
    if (o->layout == SEG_LAYOUT_FLAT)
        snprintf(buf, len, "flat");
    else if (o->layout == SEG_LAYOUT_AXIS)
        axisdata_layout(&o->shapes[pi], buf, len);
    else
        snprintf(buf, len, "%s:%s", segdata_layout_name(o->layout),
                 segdata_profile_name(o->profiles[pi]));
}

int report_table(store *s, const tune_opts *o, const char *op, const char *type,
                 const rt_device *dev, const char *arch, double read_gbps, rt_err *e)
{
    int rc = RT_OK;
    int nprof = tune_groups(o), nsz = tune_nsizes(o);
    for (int pi = 0; pi < nprof && rc == RT_OK; pi++) {
        char layout[96];
        report_layout(o, pi, layout, sizeof layout);
        printf("\nbest for %s %s %s on %s (%s, L2 %s), read bandwidth %.1f GB/s:\n", op, type,
               layout, dev->name, arch, o->hot ? "hot" : "flushed", read_gbps);
        printf("%12s %6s  %-18s %-30s %10s %9s %8s\n", "n", "", "family", "params", "time(us)",
               "GB/s", "%read");
        table_arg ta = {layout, dev->name, o->hot, 0};
        for (int si = 0; si < nsz && rc == RT_OK; si++)
            if (TUNE_OWNS_CASE(o, pi * nsz + si))   /* --split: this GPU's share */
                rc = store_list_best(s, NULL, op, type, tune_size(o, pi, si), print_row, &ta, e);
    }
    return rc;
}
