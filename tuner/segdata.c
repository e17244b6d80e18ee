/*
 * segdata.c - segment profiles, keys/offsets arrays, per-segment reference and check.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/optype.h"
#include "segdata.h"

static const struct {
    const char *name, *summary;
} profiles[] = {
    {"one", "a single segment over all n elements (the paper's scenario a)"},
    {"rand10_50", "lengths uniform in 10..50 (the paper's scenario b)"},
    {"len3", "every segment 3 elements (the paper's scenario c)"},
    {"len1", "every segment one element"},
    {"len1000", "lengths uniform in 500..1500"},
    {"heavy", "heavy-tailed lengths (Pareto, alpha 1.2) with 10% empty segments, empties at "
              "both ends"},
};
#define NPROFILES ((int)(sizeof profiles / sizeof profiles[0]))

int segdata_parse_layout(const char *name)
{
    return !strcmp(name, "flat") ? SEG_LAYOUT_FLAT : !strcmp(name, "keys") ? SEG_LAYOUT_KEYS
         : !strcmp(name, "offsets") ? SEG_LAYOUT_OFFSETS : -1;
}

const char *segdata_layout_name(int layout)
{
    return layout == SEG_LAYOUT_KEYS ? "keys" : layout == SEG_LAYOUT_OFFSETS ? "offsets"
         : layout == SEG_LAYOUT_AXIS ? "axis" : "flat";
}

int segdata_profile_count(void) { return NPROFILES; }

const char *segdata_profile_name(int p) { return p >= 0 && p < NPROFILES ? profiles[p].name : "?"; }

const char *segdata_profile_summary(int p)
{
    return p >= 0 && p < NPROFILES ? profiles[p].summary : "?";
}

int segdata_parse_profile(const char *name)
{
    for (int i = 0; i < NPROFILES; i++)
        if (!strcmp(name, profiles[i].name))
            return i;
    return -1;
}

const char *segdata_profile_list(void)
{
    static char buf[256];
    if (!buf[0])
        for (int i = 0; i < NPROFILES; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "",
                     profiles[i].name);
    return buf;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The length of segment k of a profile (before the cut to n). */
static unsigned long long draw(int profile, uint64_t seed, unsigned long long k)
{
    uint64_t h = mix(seed ^ mix(k + 1));
    switch (profile) {
    case 0: return ~0ULL;
    case 1: return 10 + h % 41;
    case 2: return 3;
    case 3: return 1;
    case 4: return 500 + h % 1001;
    default: {
        if (k < 3 || h % 10 == 0)
            return 0;
        double u = ((h >> 11) + 1) * 0x1p-53;     /* (0, 1] */
        double len = floor(pow(u, -1.0 / 1.2));
        return len > 1e12 ? 1000000000000ULL : (unsigned long long)len;
    }
    }
}

int segdata_make(int profile, unsigned long long n, uint64_t seed, seg_data *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    size_t cap = 1024;
    d->off = malloc(cap * sizeof *d->off);
    if (!d->off)
        return RT_ENOMEM;
    d->off[0] = 0;
    unsigned long long pos = 0, k = 0;
    int tail = profile == 5 ? 3 : 0;   /* empties after the last element */
    while (pos < n || tail > 0 || k == 0) {
        unsigned long long len;
        if (pos >= n) {
            len = 0;
            if (n > 0 || k > 0)
                tail--;
        } else {
            len = draw(profile, seed, k);
            if (len > n - pos)
                len = n - pos;
        }
        if (k + 2 > cap) {
            cap *= 2;
            unsigned long long *o = realloc(d->off, cap * sizeof *o);
            if (!o) {
                segdata_free(d);
                return RT_ENOMEM;
            }
            d->off = o;
        }
        pos += len;
        d->off[++k] = pos;
        if (n == 0 && tail <= 0)
            break;
    }
    d->nseg = k;
    double mean = (double)n / (double)k, var = 0;
    for (unsigned long long s = 0; s < k; s++) {
        double x = (double)(d->off[s + 1] - d->off[s]) - mean;
        var += x * x;
    }
    d->mean = mean;
    d->spread = sqrt(var / (double)k);
    return RT_OK;
}

/* The profile of a segmented layout's text ("offsets:len3": len3's index), -1 when it names
 * no keys or offsets profile; *kind_len: the length of its "keys" or "offsets". */
static int layout_profile(const char *layout, size_t *kind_len)
{
    const char *colon = layout ? strchr(layout, ':') : NULL;
    char kind[16];
    if (!colon || (size_t)(colon - layout) >= sizeof kind)
        return -1;
    memcpy(kind, layout, (size_t)(colon - layout));
    kind[colon - layout] = 0;
    int l = segdata_parse_layout(kind);
    *kind_len = (size_t)(colon - layout);
    return l == SEG_LAYOUT_KEYS || l == SEG_LAYOUT_OFFSETS ? segdata_parse_profile(colon + 1) : -1;
}

double segdata_layout_mean(const char *layout, unsigned long long n)
{
    size_t kl;
    int profile = layout_profile(layout, &kl);
    if (profile < 0 || n == 0)
        return 0;
    /* segdata_make's lengths without storing them, over at most 2^20 segments. */
    unsigned long long pos = 0, k = 0;
    while (pos < n && k < (1ULL << 20)) {
        unsigned long long len = draw(profile, 1, k++);
        pos += len < n - pos ? len : n - pos;
    }
    return (double)pos / (double)k;
}

int segdata_other_profile(const char *a, const char *b)
{
    size_t ka, kb;
    int pa = layout_profile(a, &ka), pb = layout_profile(b, &kb);
    return pa >= 0 && pb >= 0 && pa != pb && ka == kb && !strncmp(a, b, ka);
}

void segdata_free(seg_data *d)
{
    free(d->off);
    memset(d, 0, sizeof *d);
}

void segdata_keys(const seg_data *d, uint32_t *keys)
{
    for (unsigned long long s = 0; s < d->nseg; s++)
        for (unsigned long long i = d->off[s]; i < d->off[s + 1]; i++)
            keys[i] = (uint32_t)s;
}

void segdata_offsets(const seg_data *d, void *off, int off64)
{
    for (unsigned long long s = 0; s <= d->nseg; s++) {
        if (off64)
            ((long long *)off)[s] = (long long)d->off[s];
        else
            ((int32_t *)off)[s] = (int32_t)d->off[s];
    }
}

void *segdata_descriptor(const seg_data *d, int layout, int off64, size_t *bytes)
{
    *bytes = layout == SEG_LAYOUT_KEYS ? (d->n ? d->n : 1) * 4 : (d->nseg + 1) * (off64 ? 8 : 4);
    void *h = malloc(*bytes);
    if (h && layout == SEG_LAYOUT_KEYS)
        segdata_keys(d, h);
    else if (h)
        segdata_offsets(d, h, off64);
    return h;
}

/* ---- reference ---- */

#define BIG_SEGMENT (1ULL << 20)   /* segments this long are reduced on all threads */

typedef struct ref_job {
    const void *vals;
    rt_type type;
    rt_op op;
    const seg_data *d;
    seg_ref *refs;
    unsigned long long lo, hi;     /* segments */
    int threads;                   /* for big segments */
} ref_job;

/* A tolerance as a float, rounded up (a positive one never becomes 0). */
static float tol_up(double t)
{
    float f = (float)t;
    return (double)f < t ? nextafterf(f, INFINITY) : f;
}

static void ref_one(const ref_job *j, unsigned long long s, int threads)
{
    unsigned long long a = j->d->off[s], len = j->d->off[s + 1] - a;
    seg_ref *r = &j->refs[s];
    memset(r, 0, sizeof *r);
    data_ref dr;
    /* an empty segment's reference is the empty result (data_reference with n = 0) */
    data_reference((const char *)j->vals + a * optype_size(j->type), j->type, j->op, len, &dr,
                   threads);
    memcpy(r->value, dr.value, sizeof r->value);
    if (optype_is_arg(j->op) && len) {   /* the index is within the slice: make it global */
        long long i;
        memcpy(&i, r->value + 8, 8);
        i += (long long)a;
        memcpy(r->value + 8, &i, 8);
    }
    r->approx = (double)dr.approx;
    r->approx2 = (double)dr.approx2;
    r->tolerance = tol_up(dr.tolerance);
    r->tolerance2 = tol_up(dr.tolerance2);
}

static void *ref_range(void *arg)
{
    ref_job *j = arg;
    for (unsigned long long s = j->lo; s < j->hi; s++)
        if (j->d->off[s + 1] - j->d->off[s] < BIG_SEGMENT)
            ref_one(j, s, 1);
    return NULL;
}

#define MAX_THREADS 64

int segdata_reference(const void *vals, rt_type type, rt_op op, const seg_data *d,
                      seg_ref **refs, int threads)
{
    *refs = malloc((d->nseg ? d->nseg : 1) * sizeof **refs);
    if (!*refs)
        return RT_ENOMEM;
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    ref_job base = {vals, type, op, d, *refs, 0, d->nseg, threads};
    for (unsigned long long s = 0; s < d->nseg; s++)   /* big ones first, on every thread */
        if (d->off[s + 1] - d->off[s] >= BIG_SEGMENT)
            ref_one(&base, s, threads);
    if ((unsigned long long)threads > d->nseg / 1024 + 1)
        threads = (int)(d->nseg / 1024 + 1);
    ref_job jobs[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int k = 0; k < threads; k++) {
        jobs[k] = base;
        jobs[k].lo = d->nseg * (unsigned long long)k / (unsigned long long)threads;
        jobs[k].hi = d->nseg * (unsigned long long)(k + 1) / (unsigned long long)threads;
        if (k > 0)
            started[k] = pthread_create(&tid[k], NULL, ref_range, &jobs[k]) == 0;
    }
    ref_range(&jobs[0]);
    for (int k = 1; k < threads; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            ref_range(&jobs[k]);
    }
    return RT_OK;
}

/* One result against its compact reference, the pair resolved: a bitwise reference
 * (tolerances 0) passes data_check_ts with the same bytes, so they are compared first; the full
 * check runs only where they differ (-0 against 0, NaNs, argmin's padding, wrong results). */
static int check_one(const void *got, size_t res, const seg_ref *ref, const optype_ts *ts, rt_type type,
                     rt_op op, unsigned long long n, char *why, size_t len)
{
    if (ref->tolerance == 0 && ref->tolerance2 == 0 && res <= sizeof ref->value
        && memcmp(got, ref->value, res) == 0)
        return 1;
    data_ref r;
    memset(&r, 0, sizeof r);
    memcpy(r.value, ref->value, sizeof r.value);
    r.approx = ref->approx;
    r.approx2 = ref->approx2;
    r.tolerance = ref->tolerance;
    r.tolerance2 = ref->tolerance2;
    return data_check_ts(got, &r, ts, type, op, n, why, len);
}

int segdata_check_all(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                      unsigned long long count, const unsigned long long *off, unsigned long long n,
                      unsigned long long *bad, char *why, size_t len)
{
    size_t res = optype_res_size(op, type);   /* the outputs are results (rt_final) */
    optype_ts ts;
    *bad = 0;
    if (optype_resolve(op, type, &ts, why, len))
        return 0;
    for (unsigned long long i = 0; i < count; i++)
        if (!check_one((const char *)got + i * res, res, refs + i, &ts, type, op,
                       off ? off[i + 1] - off[i] : n, why, len)) {
            *bad = i;
            return 0;
        }
    return 1;
}

int segdata_check(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                  const seg_data *d, char *why, size_t len)
{
    char inner[512];
    unsigned long long s;
    if (segdata_check_all(got, refs, type, op, d->nseg, d->off, 0, &s, inner, sizeof inner))
        return 1;
    if (why) {
        unsigned long long a = d->off[s], b = d->off[s + 1];
        snprintf(why, len, "segment %llu of %llu (elements %llu..%llu%s): %s", s, d->nseg, a, b,
                 b > a ? "" : ", empty", inner);
    }
    return 0;
}

double segdata_bytes(const seg_data *d, int layout, int off64, size_t esize, size_t res_size)
{
    double b = (double)d->n * esize + (double)d->nseg * res_size;
    if (layout == SEG_LAYOUT_KEYS)
        b += (double)d->n * 4;
    else if (layout == SEG_LAYOUT_OFFSETS)
        b += (double)(d->nseg + 1) * (off64 ? 8 : 4);
    return b;
}
