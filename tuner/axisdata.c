/*
 * axisdata.c - shapes of axis reductions, their per-output CPU reference and check
 * (axisdata.h). The reference of one output is data.c's over its elements gathered in order.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/optype.h"
#include "axisdata.h"

#define AXIS_PREFIX "axis:"
#define MAX_THREADS 64

/* A positive decimal integer at *p, digits only, ending at a separator or the end. */
static int parse_dim(const char **p, unsigned long long *v)
{
    const char *s = *p;
    char *end;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || x == 0)
        return -1;
    *v = x;
    *p = end;
    return 0;
}

int axisdata_parse_shape(const char *text, axis_shape *s)
{
    unsigned long long d[3];
    const char *p = text;
    char sep = 0;
    for (int k = 0; k < 3; k++) {
        if (parse_dim(&p, &d[k]))
            return -1;
        if (k < 2) {
            /* one separator throughout: x or a comma */
            if ((*p != 'x' && *p != ',') || (sep && *p != sep))
                return -1;
            sep = *p++;
        }
    }
    if (*p)
        return -1;
    unsigned long long n;
    if (__builtin_mul_overflow(d[0], d[1], &n) || __builtin_mul_overflow(n, d[2], &n)
        || n > (unsigned long long)LLONG_MAX)
        return -2;
    *s = (axis_shape){d[0], d[1], d[2]};
    return 0;
}

void axisdata_layout(const axis_shape *s, char *buf, size_t len)
{
    snprintf(buf, len, AXIS_PREFIX "%llux%llux%llu", s->outer, s->len, s->inner);
}

int axisdata_parse_layout(const char *text, axis_shape *s)
{
    if (strncmp(text, AXIS_PREFIX, strlen(AXIS_PREFIX)) || strchr(text, ','))
        return -1;
    return axisdata_parse_shape(text + strlen(AXIS_PREFIX), s);
}

int axisdata_default_shapes(axis_shape *out, int max)
{
    static const axis_shape shapes[] = {
        {1048576, 16, 1}, {65536, 128, 1}, {4096, 4096, 1}, {16, 4194304, 1}, {32768, 1024, 1},
        {1, 1048576, 16}, {1, 65536, 128}, {1, 4096, 4096}, {1, 16, 4194304}, {1, 32768, 1024},
        {64, 2048, 512},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0] && n < max; i++)
        out[n++] = shapes[i];
    return n;
}

unsigned long long axisdata_n(const axis_shape *s)
{
    return s->outer * s->len * s->inner;
}

unsigned long long axisdata_outputs(const axis_shape *s)
{
    return s->outer * s->inner;
}

/* A tolerance as a float, rounded up (a positive one never becomes 0), as segdata.c keeps. */
static float tol_up(double t)
{
    float f = (float)t;
    return (double)f < t ? nextafterf(f, INFINITY) : f;
}

typedef struct ref_job {
    const void *vals;
    rt_type type;
    rt_op op;
    const axis_shape *s;
    seg_ref *refs;
    unsigned long long lo, hi;   /* outputs */
    int threads;                 /* data_reference's threads for each output */
    void *gather;                /* len elements: one output's, in order (inner > 1) */
} ref_job;

static void ref_one(const ref_job *j, unsigned long long m)
{
    const axis_shape *s = j->s;
    size_t es = optype_size(j->type);
    unsigned long long o = m / s->inner, i = m % s->inner;
    const char *base = (const char *)j->vals + (o * s->len * s->inner + i) * es;
    const void *row = base;
    if (s->inner > 1 && s->len > 0) {
        for (unsigned long long l = 0; l < s->len; l++)
            memcpy((char *)j->gather + l * es, base + l * s->inner * es, es);
        row = j->gather;
    }
    data_ref dr;
    /* len == 0: the empty result, as data_reference gives for n = 0 */
    data_reference(row, j->type, j->op, s->len, &dr, j->threads);
    seg_ref *r = &j->refs[m];
    memset(r, 0, sizeof *r);
    memcpy(r->value, dr.value, sizeof r->value);   /* argmin/argmax: the index is l already */
    r->approx = (double)dr.approx;
    r->approx2 = (double)dr.approx2;
    r->tolerance = tol_up(dr.tolerance);
    r->tolerance2 = tol_up(dr.tolerance2);
}

static void *ref_range(void *arg)
{
    ref_job *j = arg;
    for (unsigned long long m = j->lo; m < j->hi; m++)
        ref_one(j, m);
    return NULL;
}

int axisdata_reference(const void *vals, rt_type type, rt_op op, const axis_shape *s,
                       seg_ref **refs, int threads)
{
    unsigned long long nout = axisdata_outputs(s);
    size_t gbytes = (s->inner > 1 ? s->len : 1) * optype_size(type);
    ref_job jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0}, rc = RT_OK;
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    /* Few outputs: one after the other, each on every thread; else the outputs shared. */
    int inner_threads = nout < (unsigned long long)threads ? threads : 1;
    int nj = inner_threads > 1 ? 1 : threads;
    if ((unsigned long long)nj > nout / 64 + 1)
        nj = (int)(nout / 64 + 1);
    *refs = malloc((nout ? nout : 1) * sizeof **refs);
    if (!*refs)
        return RT_ENOMEM;
    for (int k = 0; k < nj; k++) {
        jobs[k] = (ref_job){vals, type, op, s, *refs, nout * (unsigned long long)k / (unsigned)nj,
                            nout * (unsigned long long)(k + 1) / (unsigned)nj, inner_threads,
                            NULL};
        if (!(jobs[k].gather = malloc(gbytes ? gbytes : 1)))
            rc = RT_ENOMEM;
    }
    for (int k = 1; k < nj && rc == RT_OK; k++)
        started[k] = pthread_create(&tid[k], NULL, ref_range, &jobs[k]) == 0;
    if (rc == RT_OK)
        ref_range(&jobs[0]);
    for (int k = 1; k < nj && rc == RT_OK; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            ref_range(&jobs[k]);
    }
    for (int k = 0; k < nj; k++)
        free(jobs[k].gather);
    if (rc) {
        free(*refs);
        *refs = NULL;
    }
    return rc;
}

int axisdata_check(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                   const axis_shape *s, char *why, size_t len)
{
    char inner[512];
    unsigned long long m;
    if (segdata_check_all(got, refs, type, op, axisdata_outputs(s), NULL, s->len, &m, inner,
                          sizeof inner))
        return 1;
    if (why)
        snprintf(why, len, "output (%llu, %llu) of %llux%llux%llu (outer, inner; %llu "
                 "elements along the axis): %s", m / s->inner, m % s->inner, s->outer, s->len,
                 s->inner, s->len, inner);
    return 0;
}

double axisdata_bytes(const axis_shape *s, size_t esize, size_t res_size)
{
    return (double)axisdata_n(s) * esize + (double)axisdata_outputs(s) * res_size;
}
