/*
 * cli_values.c - the values of the redtune program's options, parsed and checked (cli_int.h):
 * sizes, integers, families, lists, shapes, architectures, budgets and GPU lists, each
 * refused as a usage error that names the option and the value.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "axisdata.h"
#include "cli_int.h"
#include "segdata.h"

/* A usage error: the message, then the line that says where to read more. */
int cli_usage(rt_err *e, const char *see, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    size_t used = strlen(e->msg);
    snprintf(e->msg + used, sizeof e->msg - used, "\n(see redtune %s)", see);
    e->code = RT_EINVAL;
    return RT_EINVAL;
}

/* "1000", "2^20", "4K", "16M", "1G" (binary multiples). */
int cli_parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (strncmp(s, "2^", 2) == 0) {
        long k = strtol(s + 2, &end, 10);
        if (*end || end == s + 2 || k < 0 || k > 40)
            return -1;
        *out = 1LL << k;
        return 0;
    }
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < 1)
        return -1;
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M') shift = 20, end++;
    else if (*end == 'G') shift = 30, end++;
    if (*end || v > (1LL << 40) >> shift)
        return -1;
    *out = v << shift;
    return 0;
}

int cli_parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* A family by name: unknown is a usage error; templates that do not parse, a failure. */
int cli_find_family(const char *name, const rt_family **f, rt_err *e)
{
    if (family_error())
        return rt_seterr(e, RT_ELUA, "%s", family_error());
    if ((*f = family_find(name)))
        return RT_OK;
    char known[1024] = "";
    for (int i = 0; i < family_count(); i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, " %s", family_at(i)->name);
    }
    return cli_usage(e, "families", "unknown family '%s' (known:%s)", name, known);
}

/* --family LIST: a comma-separated list of known families. */
int cli_check_family_list(const char *list, rt_err *e)
{
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return cli_usage(e, "--help", "--family: '%s' is not a comma-separated list of families",
                     list);
    int rc = RT_OK;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return rt_seterr(e, RT_ENOMEM, "--family: out of memory");
    for (char *t = strtok_r(copy, ",", &save); t && rc == RT_OK; t = strtok_r(NULL, ",", &save)) {
        const rt_family *f;
        rc = cli_find_family(t, &f, e);
    }
    free(copy);
    return rc;
}

/* --sizes LIST (sizes != 0) or --profiles LIST into a->sizes / a->tune.profiles. */
int cli_parse_list(cli_args *a, int sizes, const char *list, rt_err *e)
{
    int rc = RT_OK, n = 0;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return rt_seterr(e, RT_ENOMEM, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (sizes) {
            if (n == CLI_MAX_SIZES || cli_parse_size(t, &a->sizes[n])) {
                rc = cli_usage(e, "--help", "--sizes: '%s' is not a size (1000, 2^20, 4M; up to "
                           "2^40, 64 of them)", t);
                goto done;
            }
        } else {
            int p = segdata_parse_profile(t);
            if (p < 0) {
                rc = cli_usage(e, "--help", "--profiles: unknown profile '%s' (known: %s)", t,
                           segdata_profile_list());
                goto done;
            }
            if (n == TUNE_MAX_PROFILES) {
                rc = cli_usage(e, "--help", "--profiles: more than %d profiles", TUNE_MAX_PROFILES);
                goto done;
            }
            a->tune.profiles[n] = p;
        }
        n++;
    }
    if (n == 0)
        rc = cli_usage(e, "--help", "%s: empty list", sizes ? "--sizes" : "--profiles");
    if (sizes)
        a->tune.nsizes = n;
    else
        a->tune.nprofiles = n;
done:
    free(copy);
    return rc;
}

/* --shapes LIST: shapes O,L,I (or OxLxI) separated by ';' into a->tune.shapes. */
int cli_parse_shapes(cli_args *a, const char *as, const char *list, rt_err *e)
{
    int n = 0;
    a->axis_shapes_given = 1;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ";");
        char item[128];
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        axis_shape sh;
        int r = len >= sizeof item ? -1 : axisdata_parse_shape(item, &sh);
        if (r == -1)
            return cli_usage(e, "--help", "%s: '%.*s' is not a shape (three positive integers "
                         "O,L,I: outer, len, inner; shapes separated by ';')", as, (int)len, p);
        if (r == -2)
            return cli_usage(e, "--help", "%s: '%s': outer x len x inner overflows 64 bits", as,
                         item);
        if (n == TUNE_MAX_SHAPES)
            return cli_usage(e, "--help", "%s: more than %d shapes", as, TUNE_MAX_SHAPES);
        a->tune.shapes[n++] = sh;
        if (!p[len])
            break;
        p += len + 1;
    }
    a->tune.nshapes = n;
    return RT_OK;
}

/* --arch: sm_XY with a major the tuner knows (Maxwell, 5, to Hopper, 9). */
int cli_check_arch(const char *s, rt_err *e)
{
    if (strncmp(s, "sm_", 3) != 0 || s[3] < '5' || s[3] > '9' || s[4] < '0' || s[4] > '9'
        || s[5])
        return cli_usage(e, "--help", "--arch: '%s' is not an architecture (sm_XY with X from 5 "
                     "to 9, e.g. sm_90)", s);
    return RT_OK;
}

/* --budget: "200" configs, "60s" / "5m" seconds, or "20%" of the case's configs ("15%,8": at
 * least 8 of them), per case (sweep.c turns a percentage into a count once it knows the
 * case's candidates). */
int cli_parse_budget(cli_args *a, const char *as, const char *v, rt_err *e)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    int secs = *end == 's' || *end == 'm', pct = *end == '%';
    double scale = *end == 'm' ? 60 : 1;
    long long atleast = 0;
    if (pct && end[1] == ',' && cli_parse_int(end + 2, 1, 1000000, &atleast))
        return cli_usage(e, "--help", "%s: '%s': the floor after 'P%%,' is a count of configs "
                     "(15%%,8: 15%% of each case's configs, at least 8)", as, v);
    if (end == v || !(v[0] >= '0' && v[0] <= '9') || errno
        || (secs || pct ? end[1] != '\0' && !atleast : *end)
        || (!pct && (!(x > 0) || x * scale > 1e9 || (!secs && x != (long)x))))
        return cli_usage(e, "--help", "%s: '%s' is no number or unit (a count of configs per case, "
                     "e.g. 200, seconds per case, e.g. 60s or 5m, or a share of each case's "
                     "configs, e.g. 20%% or 15%%,8 for at least 8)", as, v);
    if (pct && !(x > 0 && x <= 100))
        return cli_usage(e, "--help", "%s: '%s' is no share of a case's configs: the percentage "
                     "is above 0 and at most 100", as, v);
    if (secs)
        a->tune.budget_s = x * scale;
    else if (pct)
        a->tune.budget_pct = x, a->tune.budget_min = (long)atleast;
    else
        a->tune.budget = (long)x;
    return RT_OK;
}

/* Tuning's --device: all, or a comma-separated list of distinct GPU ordinals (one ordinal is
 * a list of one). Whether they exist is the worker's to say (tuner/devices.c). */
int cli_parse_devices(cli_args *a, const char *as, const char *v, rt_err *e)
{
    static const char want[] = "a GPU ordinal, a comma-separated list of them (0,2,3) or all";
    a->device_arg = v;
    if (!*v)
        return cli_usage(e, "--help", "%s: an empty value; it wants %s", as, want);
    if (!strcmp(v, "all")) {
        a->device_all = 1;
        return RT_OK;
    }
    for (const char *p = v;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[32];
        long long n;
        snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
        if (len >= sizeof item || cli_parse_int(item, 0, 1023, &n)) {
            if (p == v && !end)
                return cli_usage(e, "--help", "%s wants %s, not '%s'", as, want, v);
            return cli_usage(e, "--help", "%s wants %s, not '%s' ('%.*s' is no GPU ordinal)", as,
                         want, v, (int)len, p);
        }
        for (int i = 0; i < a->ndevices; i++)
            if (a->devices[i] == (int)n)
                return cli_usage(e, "--help", "%s %s: GPU %lld is listed twice", as, v, n);
        if (a->ndevices == CLI_MAX_DEVICES)
            return cli_usage(e, "--help", "%s %s: more than %d GPUs", as, v, CLI_MAX_DEVICES);
        a->devices[a->ndevices++] = (int)n;
        if (!end)
            break;
        p = end + 1;
    }
    a->tune.device = a->reduce.device = a->devices[0];
    return RT_OK;
}

/* The flat default: below 2^14 the winner changes with each doubling (tree_sequential R=1,
 * R=4, oneblock, then gridstride on the H100), and a size between two tuned ones runs the
 * larger's winner: with every second power of two the f64 rows ran 1.11x CUB at 2^9 and 1.16x
 * at 2^11 (docs/results.md, 2026-11-28); a small case costs about 2 s. The segmented one is
 * the paper's 30 x 2^20 and three smaller sizes. */
int cli_default_sizes(int segmented, long long *out, int max)
{
    static const long long seg[] = {1LL << 14, 1LL << 18, 1LL << 22, 30LL << 20};
    int n = 0;
    if (segmented) {
        for (int k = 0; k < 4 && n < max; k++)
            out[n++] = seg[k];
        return n;
    }
    for (int k = 4; k <= 30 && n < max; k += k < 14 ? 1 : 2)
        out[n++] = 1LL << k;
    return n;
}
