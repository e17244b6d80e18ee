/*
 * cases.c - `redtune --cases-from FILE` (cases.h): the capture file that libredtune writes
 * under REDTUNE_CAPTURE (runtime/capture.c; format in docs/api.md), read and checked whole
 * before anything is tuned, and planned into the runs `redtune --op ... --sizes ...` makes.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../runtime/capture.h"
#include "../runtime/optype.h"
#include "axisdata.h"
#include "cases.h"
#include "segdata.h"

#define MAX_N (1LL << 40)   /* as --sizes */

/* Append a line to *notes; out of memory loses the note, not the run. */
static void note(char **notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(char **notes, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t old = *notes ? strlen(*notes) : 0, add = strlen(line);
    char *p = realloc(*notes, old + add + 2);
    if (!p)
        return;
    memcpy(p + old, line, add);
    p[old + add] = '\n';
    p[old + add + 1] = '\0';
    *notes = p;
}

/* A whole decimal number in [lo, hi], digits only. */
static int parse_count(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/*
 * The type field: a plain type ("bf16"), or a spec as capture_type_text writes it
 * ("bf16:acc=f64", "bf16:acc=f32:result=bf16"), which must resolve for a built-in operator
 * (a user operator's cases have plain types). *spec receives it.
 */
static int parse_type(const char *path, int no, const cases_line *l, const char *text,
                      rt_type *spec, rt_err *e)
{
    char elem[16], why[256];
    size_t k = strcspn(text, ":");
    int t;

    snprintf(elem, sizeof elem, "%.*s", (int)(k < sizeof elem ? k : sizeof elem - 1), text);
    if (k >= sizeof elem || (t = optype_parse_type(elem)) < 0)
        return rt_seterr(e, RT_EINVAL, "%s:%d: unknown type '%s' (known: %s)", path, no, text,
                         optype_type_list());
    *spec = (rt_type)t;
    if (!l->builtin && text[k])
        return rt_seterr(e, RT_EINVAL, "%s:%d: type '%s': a user operator's type is plain "
                         "(no acc= or result=)", path, no, text);
    int res_elem = 0, acc = -1;
    for (const char *p = text + k; *p == ':'; ) {
        char part[40];
        size_t n = strcspn(p + 1, ":");
        snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), p + 1);
        int v = -1;
        if (n < sizeof part && !strncmp(part, "acc=", 4) && acc < 0
            && (v = optype_parse_type(part + 4)) >= 0)
            acc = v;
        else if (n < sizeof part && !strncmp(part, "result=", 7) && !res_elem
                 && !strcmp(part + 7, elem))
            res_elem = 1;
        else
            return rt_seterr(e, RT_EINVAL, "%s:%d: type '%s': '%s' is neither acc=TYPE nor "
                             "result=%s (the element type), once each", path, no, text, part,
                             elem);
        p += 1 + n;
    }
    if (acc >= 0)
        *spec = RT_ACC(*spec, acc);
    if (res_elem)
        *spec = RT_RESULT_ELEM(*spec);
    optype_ts ts;
    if (l->builtin && optype_resolve(l->op_id, *spec, &ts, why, sizeof why))
        return rt_seterr(e, RT_EINVAL, "%s:%d: %s", path, no, why);
    return RT_OK;
}

/* One case line (its fields split at tabs in place) into *l. */
static int parse_line(const char *path, int no, char *text, cases_line *l, rt_err *e)
{
    char *f[CAPTURE_FIELDS + 1];
    int nf = 0;
    for (char *p = text; nf <= CAPTURE_FIELDS; nf++) {
        f[nf] = p;
        if (!(p = strchr(p, '\t'))) {
            nf++;
            break;
        }
        *p++ = '\0';
    }
    if (nf != CAPTURE_FIELDS)
        return rt_seterr(e, RT_EINVAL, "%s:%d: %s%d fields, a capture line has %d (op, type, "
                         "layout, n, nseg, fallback, fingerprint, device, tab-separated)", path,
                         no, nf > CAPTURE_FIELDS ? "more than " : "", nf > CAPTURE_FIELDS
                         ? CAPTURE_FIELDS : nf, CAPTURE_FIELDS);
    memset(l, 0, sizeof *l);
    l->line = no;
    const char *op = f[0], *fp = f[6];
    if (strlen(op) >= sizeof l->op || !*op)
        return rt_seterr(e, RT_EINVAL, "%s:%d: operator name '%.60s' is empty or too long", path,
                         no, op);
    snprintf(l->op, sizeof l->op, "%s", op);
    if (!strcmp(fp, "-")) {
        if (optype_parse_op(op) < 0)
            return rt_seterr(e, RT_EINVAL, "%s:%d: unknown operator '%s' (known: %s; a user "
                             "operator has its fingerprint in field 7)", path, no, op,
                             optype_op_list());
        l->builtin = 1;
        l->op_id = (rt_op)optype_parse_op(op);
    } else {
        size_t k = 0;
        while (isxdigit((unsigned char)fp[k]))
            k++;
        if (k != RT_USER_OP_ID - 1 || fp[k])
            return rt_seterr(e, RT_EINVAL, "%s:%d: fingerprint '%.40s' is neither '-' nor %d "
                             "hex digits", path, no, fp, RT_USER_OP_ID - 1);
        snprintf(l->fingerprint, sizeof l->fingerprint, "%s", fp);
    }
    int rc = parse_type(path, no, l, f[1], &l->type, e);
    if (rc != RT_OK)
        return rc;
    if (!strncmp(f[2], "axis:", 5)) {
        if (axisdata_parse_layout(f[2], &l->shape))
            return rt_seterr(e, RT_EINVAL, "%s:%d: layout '%s' is not axis:OxLxI (three "
                             "positive integers whose product fits 64 bits)", path, no, f[2]);
        l->layout = SEG_LAYOUT_AXIS;
    } else if ((l->layout = segdata_parse_layout(f[2])) < 0) {
        return rt_seterr(e, RT_EINVAL, "%s:%d: unknown layout '%s' (known: flat, keys, "
                         "offsets, axis:OxLxI)", path, no, f[2]);
    }
    if (parse_count(f[3], 1, MAX_N, &l->n))
        return rt_seterr(e, RT_EINVAL, "%s:%d: n '%s' is not a size from 1 to 2^40", path, no,
                         f[3]);
    if (l->layout == SEG_LAYOUT_AXIS) {
        if ((unsigned long long)l->n != axisdata_n(&l->shape)
            || parse_count(f[4], 0, MAX_N, &l->nseg)
            || (unsigned long long)l->nseg != axisdata_outputs(&l->shape))
            return rt_seterr(e, RT_EINVAL, "%s:%d: n '%s' and nseg '%s' are not %llu and %llu, "
                             "the elements and outputs of %s", path, no, f[3], f[4],
                             axisdata_n(&l->shape), axisdata_outputs(&l->shape), f[2]);
        return RT_OK;
    }
    if (l->layout == SEG_LAYOUT_FLAT ? parse_count(f[4], 0, 0, &l->nseg)
                                     : parse_count(f[4], 1, MAX_N, &l->nseg))
        return rt_seterr(e, RT_EINVAL, "%s:%d: nseg '%s' is not %s", path, no, f[4],
                         l->layout == SEG_LAYOUT_FLAT ? "0 (the layout is flat)"
                                                      : "a count of segments from 1 to 2^40");
    return RT_OK;
}

/* The header's version: 1, or a message for what the first line is instead. */
static int check_header(const char *path, const char *first, rt_err *e)
{
    size_t m = strlen(CAPTURE_MAGIC);
    long long v;
    if (strncmp(first, CAPTURE_MAGIC, m) || parse_count(first + m, 1, 1000000, &v))
        return rt_seterr(e, RT_EINVAL, "%s:1: not a redtune capture file (its first line is "
                         "not '# redtune capture v%d'; libredtune writes one under "
                         "REDTUNE_CAPTURE)", path, CAPTURE_VERSION);
    if (v != CAPTURE_VERSION)
        return rt_seterr(e, RT_EINVAL, "%s:1: capture format v%lld, which this redtune does not "
                         "read (it reads v%d)", path, v, CAPTURE_VERSION);
    return RT_OK;
}

int cases_parse(const char *path, cases_line **lines, int *count, char **notes, rt_err *e)
{
    FILE *f = NULL;
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    int rc = RT_OK, no = 0, cap = 0;

    *lines = NULL;
    *count = 0;
    if (stat(path, &st) != 0)
        return rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return rt_seterr(e, RT_EIO, "%s: not a regular file", path);
    if (!(f = fopen(path, "rb"))) {
        rc = rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (!(text = malloc((size_t)st.st_size + 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    len = fread(text, 1, (size_t)st.st_size, f);
    if (ferror(f)) {
        rc = rt_seterr(e, RT_EIO, "%s: %s", path, strerror(errno));
        goto done;
    }
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        rc = rt_seterr(e, RT_EINVAL, "%s: holds a NUL byte: not a redtune capture file", path);
        goto done;
    }
    if (len == 0) {
        rc = rt_seterr(e, RT_EINVAL, "%s: empty, not a redtune capture file (its first line is "
                       "'# redtune capture v%d')", path, CAPTURE_VERSION);
        goto done;
    }
    for (char *p = text; *p; ) {
        char *nl = strchr(p, '\n');
        no++;
        if (!nl) {
            if (no == 1)
                rc = check_header(path, p, e);
            else
                note(notes, "%s:%d: skipped: the last line has no newline (cut short, by a "
                     "process killed while it wrote?)", path, no);
            break;
        }
        *nl = '\0';
        if (no == 1) {
            if ((rc = check_header(path, p, e)))
                goto done;
        } else if (*p && *p != '#') {
            if (*count == cap) {
                int ncap = cap ? 2 * cap : 64;
                cases_line *nl2 = realloc(*lines, (size_t)ncap * sizeof *nl2);
                if (!nl2) {
                    rc = rt_seterr(e, RT_ENOMEM, "%s: out of memory", path);
                    goto done;
                }
                *lines = nl2;
                cap = ncap;
            }
            if ((rc = parse_line(path, no, p, &(*lines)[*count], e)))
                goto done;
            (*count)++;
        }
        p = nl + 1;
    }
done:
    if (rc) {
        free(*lines);
        *lines = NULL;
        *count = 0;
    }
    free(text);
    if (f)
        fclose(f);
    return rc;
}

/* ---------------------------------------------------------------- planning */

/* The mean segment length of a profile tuned at n; 0 for one that is not chosen by mean. */
static double profile_mean(const char *name, long long n)
{
    static const struct { const char *name; double mean; } means[] = {
        {"len1", 1}, {"len3", 3}, {"rand10_50", 30}, {"len1000", 1000},
    };
    if (!strcmp(name, "one"))
        return (double)n;
    for (size_t i = 0; i < sizeof means / sizeof means[0]; i++)
        if (!strcmp(name, means[i].name))
            return means[i].mean;
    return 0;
}

/* The profile nearest in log2 of the mean segment length to the case's n / nseg. */
static int nearest_profile(long long n, long long nseg, double *mean)
{
    int best = 0;
    double dist = INFINITY;
    *mean = (double)n / (double)nseg;
    for (int p = 0; p < segdata_profile_count(); p++) {
        double pm = profile_mean(segdata_profile_name(p), n);
        double d = pm > 0 ? fabs(log2(pm) - log2(*mean)) : INFINITY;
        if (nseg == 1 && !strcmp(segdata_profile_name(p), "one"))
            d = -1;   /* one segment: exactly that profile */
        if (d < dist) {
            dist = d;
            best = p;
        }
    }
    return best;
}

/* A group of cases: a run, or a user operator's cases (named in the notes). */
typedef struct group {
    const cases_line *first;
    cases_run run;
    int cap;
} group;

static int same_group(const cases_line *a, const cases_line *b)
{
    return a->builtin == b->builtin && a->type == b->type && a->layout == b->layout
           && (a->builtin ? a->op_id == b->op_id
                          : !strcmp(a->op, b->op) && !strcmp(a->fingerprint, b->fingerprint));
}

/* The index of shape 's' in run r, or -1. */
static int shape_at(const cases_run *r, const axis_shape *s)
{
    for (int i = 0; i < r->nshapes; i++)
        if (r->shapes[i].outer == s->outer && r->shapes[i].len == s->len
            && r->shapes[i].inner == s->inner)
            return i;
    return -1;
}

/* Group g takes line l: the same run, and for axis cases room for its shape (a run holds
 * up to TUNE_MAX_SHAPES; the next ones open another run). */
static int takes(const group *g, const cases_line *l)
{
    return same_group(g->first, l)
           && (l->layout != SEG_LAYOUT_AXIS || g->run.nshapes < TUNE_MAX_SHAPES
               || shape_at(&g->run, &l->shape) >= 0);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* "bf16", or "bf16 --acc f64 --result element": the options that make the spec. */
static void spec_options(rt_op op, rt_type spec, char *buf, size_t len)
{
    optype_ts ts;
    rt_type elem = optype_elem(spec);
    if (optype_resolve(op, spec, &ts, NULL, 0)) {
        snprintf(buf, len, "%s", rt_type_name(elem) ? rt_type_name(elem) : "?");
        return;
    }
    unsigned canon = (unsigned)ts.canon, acc = (canon >> 8) & 0xffu;   /* redtune.h's fields */
    snprintf(buf, len, "%s%s%s%s", rt_type_name(elem), acc ? " --acc " : "",
             acc ? rt_type_name(ts.acc) : "", canon & 0x10000u ? " --result element" : "");
}

void cases_run_text(const cases_run *r, char *buf, size_t len)
{
    char type[64];
    spec_options(r->op, r->type, type, sizeof type);
    size_t at = (size_t)snprintf(buf, len, "--op %s --type %s --%s", rt_op_name(r->op), type,
                                 r->layout == SEG_LAYOUT_AXIS ? "axis --shapes '" : "sizes ");
    if (r->layout == SEG_LAYOUT_AXIS) {   /* quoted: ';' separates the shapes */
        for (int i = 0; i < r->nshapes && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, "%s%llux%llux%llu", i ? ";" : "",
                                   r->shapes[i].outer, r->shapes[i].len, r->shapes[i].inner);
        if (at < len)
            snprintf(buf + at, len - at, "'");
        return;
    }
    for (int i = 0; i < r->nsizes && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "," : "", r->sizes[i]);
    if (r->layout != SEG_LAYOUT_FLAT && at < len) {
        at += (size_t)snprintf(buf + at, len - at, " --segmented %s --profiles ",
                               segdata_layout_name(r->layout));
        for (int i = 0; i < r->nprofiles && at < len; i++)
            at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
                                   segdata_profile_name(r->profiles[i]));
        if (r->off64 && at < len)
            snprintf(buf + at, len - at, " --off64");
    }
}

int cases_plan_make(const cases_line *lines, int count, cases_plan *p, char **notes, rt_err *e)
{
    group *g = NULL;
    int ng = 0, rc = RT_OK;

    memset(p, 0, sizeof *p);
    if (count && !(g = calloc((size_t)count, sizeof *g)))
        return rt_seterr(e, RT_ENOMEM, "--cases-from: out of memory");
    for (int i = 0; i < count; i++) {
        const cases_line *l = &lines[i];
        int k = 0;
        while (k < ng && !takes(&g[k], l))
            k++;
        if (k == ng)
            g[ng++] = (group){l, {l->op_id, l->type, l->layout, 0, {0}, 0, NULL, 0, {{0}}, 0},
                              0};
        cases_run *r = &g[k].run;
        if (r->nsizes == g[k].cap) {
            int cap = g[k].cap ? 2 * g[k].cap : 8;
            long long *s = realloc(r->sizes, (size_t)cap * sizeof *s);
            if (!s) {
                rc = rt_seterr(e, RT_ENOMEM, "--cases-from: out of memory");
                goto done;
            }
            r->sizes = s;
            g[k].cap = cap;
        }
        r->sizes[r->nsizes++] = l->n;
        if (l->layout == SEG_LAYOUT_AXIS && shape_at(r, &l->shape) < 0)
            r->shapes[r->nshapes++] = l->shape;
        if (l->layout == SEG_LAYOUT_FLAT || l->layout == SEG_LAYOUT_AXIS)
            continue;
        double mean;
        int prof = nearest_profile(l->n, l->nseg, &mean), have = 0;
        for (int j = 0; j < r->nprofiles; j++)
            have |= r->profiles[j] == prof;
        if (!have && r->nprofiles < TUNE_MAX_PROFILES)
            r->profiles[r->nprofiles++] = prof;
        if (l->layout == SEG_LAYOUT_OFFSETS && l->n > 0x7fffffffLL)
            r->off64 = 1;
        char tt[64];
        if (l->builtin)
            note(notes, "line %d: %s %s %s n = %lld, nseg = %lld (mean segment length %.1f): "
                 "tuned as profile %s, the nearest in mean length", l->line,
                 segdata_layout_name(l->layout), l->op,
                 capture_type_text(l->op_id, l->type, tt, sizeof tt), l->n, l->nseg, mean,
                 segdata_profile_name(prof));
    }
    if (ng && !(p->runs = calloc((size_t)ng, sizeof *p->runs))) {
        rc = rt_seterr(e, RT_ENOMEM, "--cases-from: out of memory");
        goto done;
    }
    for (int k = 0; k < ng; k++) {
        cases_run *r = &g[k].run;
        int cases = r->nsizes, d = 0;
        qsort(r->sizes, (size_t)r->nsizes, sizeof *r->sizes, cmp_ll);
        for (int i = 0; i < r->nsizes; i++)
            if (!d || r->sizes[d - 1] != r->sizes[i])
                r->sizes[d++] = r->sizes[i];
        r->nsizes = d;
        if (g[k].first->builtin) {
            p->runs[p->nruns++] = *r;
            p->ncases += cases;
        } else {
            char sizes[256] = "";
            for (int i = 0, at = 0; i < r->nsizes && at < (int)sizeof sizes; i++)
                at += snprintf(sizes + at, sizeof sizes - (size_t)at, "%s%lld", i ? "," : "",
                               r->sizes[i]);
            note(notes, "not tuned: %d cases of the user operator '%s' (%s, definition %s%s%s); "
                 "tune them with redtune --op-file FILE --sizes %s", cases, g[k].first->op,
                 rt_type_name(r->type), g[k].first->fingerprint, r->layout ? ", " : "",
                 r->layout ? segdata_layout_name(r->layout) : "", sizes);
            p->nskipped += cases;
            free(r->sizes);
        }
        r->sizes = NULL;
    }
done:
    for (int k = 0; k < ng; k++)
        free(g[k].run.sizes);
    free(g);
    if (rc)
        cases_plan_free(p);
    return rc;
}

void cases_plan_free(cases_plan *p)
{
    for (int i = 0; i < p->nruns; i++)
        free(p->runs[i].sizes);
    free(p->runs);
    memset(p, 0, sizeof *p);
}
