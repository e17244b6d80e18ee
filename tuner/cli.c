/*
 * cli.c - the redtune program's command line, parsed with getopt_long. One table names every
 * option and the commands that take it; each command's getopt sees only its own options.
 *
 * Rules that hold for every command: options and arguments may come in any order; `--`
 * ends the options; `--name=VALUE` is `--name VALUE`; an option that takes one value may be
 * given once (--match, a list, may repeat); names are never abbreviated; an empty file name
 * is refused as such.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/optype.h"
#include "axisdata.h"
#include "cli.h"
#include "results.h"
#include "segdata.h"
#include "strategy.h"

enum {
    O_OP = 256, O_TYPE, O_OPFILE, O_DEVICE, O_SIZES, O_SPACE, O_FAMILY, O_DB, O_HOT, O_DET,
    O_JOBS, O_SEED, O_ARCH, O_SEGMENTED, O_PROFILES, O_OFF64, O_N, O_FORCE, O_MATCH, O_MEAS,
    O_IN, O_KEYS, O_OFFSETS, O_NSEG, O_CHECK, O_EXPLAIN, O_CASES,
    O_STRATEGY, O_BUDGET, O_STRATEGY_SEED,   /* the search (strategy.h) */
    O_FORMAT,
    O_SPLIT,   /* --device all | LIST: identical GPUs split the cases (tuner/devices.c) */
    O_ACC, O_RESULT,   /* the type spec: accumulator and result (optype.h) */
    O_SHAPE,   /* reduce --shape O,L,I: a reduction along an axis (docs/axis.md) */
    O_AXIS, O_SHAPES,  /* tuning reductions along an axis (docs/axis.md) */
    O_PEERS,   /* report --peers FILE: a bench's CSV (a list: may repeat) */
    O_JUDGE,   /* replay --judge FILE: another sweep the choices are timed in */
    O_END
};

#define C(x) (1u << CLI_##x)
#define SHIP (C(EXPORT) | C(MERGE) | C(DUMP) | C(LOAD))
#define RESULTS (C(BEST) | C(MEASUREMENTS))   /* the commands that list rows */
#define ALL (C(TUNE) | C(EMIT) | C(COMPILE) | C(FAMILIES) | C(BEST) | SHIP | C(REDUCE) | \
             C(MEASUREMENTS) | C(REPORT) | C(REPLAY))
#define WITH_OP (C(TUNE) | C(EMIT) | C(COMPILE) | C(BEST) | C(REDUCE) | C(MEASUREMENTS))

typedef struct cli_opt {
    const char *name;
    int has_arg;
    int val;
    unsigned cmds;   /* C(...) bits of the commands that take it */
    int path;        /* its value names a file: an empty one is refused as such */
} cli_opt;

static const cli_opt options[] = {
    {"op", required_argument, O_OP, WITH_OP | C(REPLAY), 0},
    {"type", required_argument, O_TYPE, WITH_OP | C(REPLAY), 0},
    {"op-file", required_argument, O_OPFILE, WITH_OP, 1},
    {"device", required_argument, O_DEVICE, C(TUNE) | RESULTS | C(REPORT) | C(REDUCE), 0},
    {"sizes", required_argument, O_SIZES, C(TUNE), 0},
    {"space", required_argument, O_SPACE, C(TUNE) | C(COMPILE), 1},
    {"family", required_argument, O_FAMILY, C(TUNE) | C(COMPILE), 0},
    {"db", required_argument, O_DB, C(TUNE) | C(COMPILE) | RESULTS | C(REPORT) | C(EXPORT) | C(DUMP) | C(REDUCE), 1},
    {"hot", no_argument, O_HOT, C(TUNE), 0},
    {"deterministic", no_argument, O_DET, C(TUNE), 0},
    {"jobs", required_argument, O_JOBS, C(TUNE) | C(COMPILE), 0},
    {"seed", required_argument, O_SEED, C(TUNE), 0},
    {"arch", required_argument, O_ARCH, C(COMPILE), 0},
    {"segmented", required_argument, O_SEGMENTED, C(TUNE) | C(COMPILE), 0},
    {"profiles", required_argument, O_PROFILES, C(TUNE), 0},
    {"off64", no_argument, O_OFF64, C(TUNE) | C(REDUCE), 0},
    {"n", required_argument, O_N, RESULTS, 0},
    {"output", required_argument, 'o', SHIP | C(REDUCE) | C(REPORT), 1},
    {"force", no_argument, O_FORCE, SHIP | C(REDUCE) | C(REPORT), 0},
    {"match", required_argument, O_MATCH, C(EXPORT), 0},
    {"peers", required_argument, O_PEERS, C(REPORT), 1},
    {"judge", required_argument, O_JUDGE, C(REPLAY), 1},
    {"with-measurements", no_argument, O_MEAS, C(EXPORT), 0},
    {"in", required_argument, O_IN, C(REDUCE), 1},
    {"keys", required_argument, O_KEYS, C(REDUCE), 1},
    {"offsets", required_argument, O_OFFSETS, C(REDUCE), 1},
    {"nseg", required_argument, O_NSEG, C(REDUCE), 0},
    {"check", no_argument, O_CHECK, C(REDUCE), 0},
    {"explain", no_argument, O_EXPLAIN, C(REDUCE), 0},
    {"shape", required_argument, O_SHAPE, C(REDUCE), 0},
    {"cases-from", required_argument, O_CASES, C(TUNE), 1},
    {"strategy", required_argument, O_STRATEGY, C(TUNE) | C(REPLAY), 0},
    {"budget", required_argument, O_BUDGET, C(TUNE) | C(REPLAY), 0},
    {"strategy-seed", required_argument, O_STRATEGY_SEED, C(TUNE) | C(REPLAY), 0},
    {"format", required_argument, O_FORMAT, RESULTS | C(REPLAY), 0},
    {"split", no_argument, O_SPLIT, C(TUNE), 0},
    {"acc", required_argument, O_ACC, C(TUNE) | C(REDUCE) | RESULTS, 0},
    {"result", required_argument, O_RESULT, C(TUNE) | C(REDUCE), 0},
    {"axis", no_argument, O_AXIS, C(TUNE) | C(COMPILE), 0},
    {"shapes", required_argument, O_SHAPES, C(TUNE) | C(COMPILE), 0},
    {"help", no_argument, 'h', ALL, 0},
};
#define NOPTIONS (int)(sizeof options / sizeof options[0])

static const struct {
    const char *name;
    cli_cmd cmd;
} commands[] = {
    {"emit", CLI_EMIT}, {"compile", CLI_COMPILE}, {"families", CLI_FAMILIES},
    {"best", CLI_BEST}, {"export", CLI_EXPORT}, {"merge", CLI_MERGE}, {"dump", CLI_DUMP},
    {"load", CLI_LOAD}, {"reduce", CLI_REDUCE}, {"worker", CLI_WORKER},
    {"measurements", CLI_MEASUREMENTS}, {"report", CLI_REPORT}, {"replay", CLI_REPLAY},
};

/* A usage error: the message, then the line that says where to read more. */
static int usage(rt_err *e, const char *see, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage(rt_err *e, const char *see, const char *fmt, ...)
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
static int parse_size(const char *s, long long *out)
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

static int parse_int(const char *s, long long lo, long long hi, long long *out)
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
static int find_family(const char *name, const rt_family **f, rt_err *e)
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
    return usage(e, "families", "unknown family '%s' (known:%s)", name, known);
}

/* --family LIST: a comma-separated list of known families. */
static int check_family_list(const char *list, rt_err *e)
{
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        return usage(e, "--help", "--family: '%s' is not a comma-separated list of families",
                     list);
    int rc = RT_OK;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return rt_seterr(e, RT_ENOMEM, "--family: out of memory");
    for (char *t = strtok_r(copy, ",", &save); t && rc == RT_OK; t = strtok_r(NULL, ",", &save)) {
        const rt_family *f;
        rc = find_family(t, &f, e);
    }
    free(copy);
    return rc;
}

/* --sizes LIST or --profiles LIST into a->sizes / a->tune.profiles. */
static int parse_list(cli_args *a, int opt, const char *list, rt_err *e)
{
    int rc = RT_OK, n = 0;
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return rt_seterr(e, RT_ENOMEM, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (opt == O_SIZES) {
            if (n == CLI_MAX_SIZES || parse_size(t, &a->sizes[n])) {
                rc = usage(e, "--help", "--sizes: '%s' is not a size (1000, 2^20, 4M; up to "
                           "2^40, 64 of them)", t);
                goto done;
            }
        } else {
            int p = segdata_parse_profile(t);
            if (p < 0) {
                rc = usage(e, "--help", "--profiles: unknown profile '%s' (known: %s)", t,
                           segdata_profile_list());
                goto done;
            }
            if (n == TUNE_MAX_PROFILES) {
                rc = usage(e, "--help", "--profiles: more than %d profiles", TUNE_MAX_PROFILES);
                goto done;
            }
            a->tune.profiles[n] = p;
        }
        n++;
    }
    if (n == 0)
        rc = usage(e, "--help", "%s: empty list", opt == O_SIZES ? "--sizes" : "--profiles");
    if (opt == O_SIZES)
        a->tune.nsizes = n;
    else
        a->tune.nprofiles = n;
done:
    free(copy);
    return rc;
}

/* --shapes LIST: shapes O,L,I (or OxLxI) separated by ';' into a->tune.shapes. */
static int parse_shapes(cli_args *a, const char *as, const char *list, rt_err *e)
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
            return usage(e, "--help", "%s: '%.*s' is not a shape (three positive integers "
                         "O,L,I: outer, len, inner; shapes separated by ';')", as, (int)len, p);
        if (r == -2)
            return usage(e, "--help", "%s: '%s': outer x len x inner overflows 64 bits", as,
                         item);
        if (n == TUNE_MAX_SHAPES)
            return usage(e, "--help", "%s: more than %d shapes", as, TUNE_MAX_SHAPES);
        a->tune.shapes[n++] = sh;
        if (!p[len])
            break;
        p += len + 1;
    }
    a->tune.nshapes = n;
    return RT_OK;
}

/* --arch: sm_XY with a major the tuner knows (Maxwell, 5, to Hopper, 9). */
static int check_arch(const char *s, rt_err *e)
{
    if (strncmp(s, "sm_", 3) != 0 || s[3] < '5' || s[3] > '9' || s[4] < '0' || s[4] > '9'
        || s[5])
        return usage(e, "--help", "--arch: '%s' is not an architecture (sm_XY with X from 5 "
                     "to 9, e.g. sm_90)", s);
    return RT_OK;
}

/* The option as the user wrote it, for messages: "--op", "-o", "--output". */
static void opt_text(char **argv, int li, const struct option *lo, int c, char *buf,
                     size_t len)
{
    if (li < 0) {
        snprintf(buf, len, "-%c", c);
        return;
    }
    /* The value was the next word, or it follows '=' in this one. */
    const char *word = optarg && optarg == argv[optind - 1] ? argv[optind - 2]
                                                            : argv[optind - 1];
    const char *eq = strchr(word, '=');
    if (strncmp(word, "--", 2) != 0)
        snprintf(buf, len, "--%s", lo[li].name);
    else
        snprintf(buf, len, "%.*s", eq ? (int)(eq - word) : (int)strlen(word), word);
}

/* getopt's '?' or ':' as a usage error naming the option as given. */
static int bad_option(int c, char **argv, const struct option *lo, rt_err *e)
{
    const char *word = argv[optind - 1];
    const char *eq = strchr(word, '=');
    int len = eq ? (int)(eq - word) : (int)strlen(word);
    int is_long = strncmp(word, "--", 2) == 0;
    if (c == ':')
        return is_long ? usage(e, "--help", "option %.*s needs a value", len, word)
                       : usage(e, "--help", "option -%c needs a value", optopt);
    if (is_long && optopt) {   /* a known option that takes no value, given one */
        for (int i = 0; lo[i].name; i++)
            if (lo[i].val == optopt && lo[i].has_arg == no_argument)
                return usage(e, "--help", "option %.*s takes no value", len, word);
    }
    if (is_long)
        return usage(e, "--help", "unknown option '%.*s'", len, word);
    return usage(e, "--help", "unknown option '-%c'", optopt);
}

/* One argument that is no option: the command's operands. */
static int positional(cli_args *a, const char *arg, unsigned long long *params_seen, rt_err *e)
{
    switch (a->cmd) {
    case CLI_EMIT: {
        if (!a->cfg.family) {
            const rt_family *f;
            int rc = find_family(arg, &f, e);
            if (rc == RT_OK)
                config_default(f, &a->cfg);
            return rc;
        }
        const char *eq = strchr(arg, '=');
        if (!eq)
            return usage(e, "--help", "emit: unexpected argument '%s' (parameters are "
                         "NAME=VALUE)", arg);
        char name[RT_NAME_MAX];
        long long v;
        rt_err ce;
        snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
        if (parse_int(eq + 1, LLONG_MIN, LLONG_MAX, &v))
            return usage(e, "--help", "parameter value in '%s' is not an integer", arg);
        for (int k = 0; k < a->cfg.family->nparams && k < 64; k++) {
            if (strcmp(a->cfg.family->params[k].name, name) != 0)
                continue;
            if (*params_seen & (1ULL << k))
                return usage(e, "--help", "emit: parameter %s given twice", name);
            *params_seen |= 1ULL << k;
        }
        if (config_set(&a->cfg, name, v, &ce))
            return usage(e, "families", "%s", ce.msg);
        return RT_OK;
    }
    case CLI_MERGE:
    case CLI_DUMP:
    case CLI_LOAD:
    case CLI_REPLAY:
        if (!*arg)
            return usage(e, "--help", "%s: an input is an empty path", a->name);
        a->files[a->nfiles++] = arg;
        return RT_OK;
    case CLI_EXPORT:
        return usage(e, "--help", "export: unexpected argument '%s' (the input is --db FILE)",
                     arg);
    case CLI_REDUCE:
        return usage(e, "--help", "reduce: unexpected argument '%s' (the values are --in FILE)",
                     arg);
    case CLI_TUNE:
        return usage(e, "--help", "unexpected argument '%s'", arg);
    default:
        return usage(e, "--help", "%s: unexpected argument '%s'", a->name, arg);
    }
}

/* --budget: "200" configs, "60s" / "5m" seconds, or "20%" of the case's configs ("15%,8": at
 * least 8 of them), per case (sweep.c turns a percentage into a count once it knows the
 * case's candidates). */
static int parse_budget(cli_args *a, const char *as, const char *v, rt_err *e)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    int secs = *end == 's' || *end == 'm', pct = *end == '%';
    double scale = *end == 'm' ? 60 : 1;
    long long atleast = 0;
    if (pct && end[1] == ',' && parse_int(end + 2, 1, 1000000, &atleast))
        return usage(e, "--help", "%s: '%s': the floor after 'P%%,' is a count of configs "
                     "(15%%,8: 15%% of each case's configs, at least 8)", as, v);
    if (end == v || !(v[0] >= '0' && v[0] <= '9') || errno
        || (secs || pct ? end[1] != '\0' && !atleast : *end)
        || (!pct && (!(x > 0) || x * scale > 1e9 || (!secs && x != (long)x))))
        return usage(e, "--help", "%s: '%s' is no number or unit (a count of configs per case, "
                     "e.g. 200, seconds per case, e.g. 60s or 5m, or a share of each case's "
                     "configs, e.g. 20%% or 15%%,8 for at least 8)", as, v);
    if (pct && !(x > 0 && x <= 100))
        return usage(e, "--help", "%s: '%s' is no share of a case's configs: the percentage "
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
static int parse_devices(cli_args *a, const char *as, const char *v, rt_err *e)
{
    static const char want[] = "a GPU ordinal, a comma-separated list of them (0,2,3) or all";
    a->device_arg = v;
    if (!*v)
        return usage(e, "--help", "%s: an empty value; it wants %s", as, want);
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
        if (len >= sizeof item || parse_int(item, 0, 1023, &n)) {
            if (p == v && !end)
                return usage(e, "--help", "%s wants %s, not '%s'", as, want, v);
            return usage(e, "--help", "%s wants %s, not '%s' ('%.*s' is no GPU ordinal)", as,
                         want, v, (int)len, p);
        }
        for (int i = 0; i < a->ndevices; i++)
            if (a->devices[i] == (int)n)
                return usage(e, "--help", "%s %s: GPU %lld is listed twice", as, v, n);
        if (a->ndevices == CLI_MAX_DEVICES)
            return usage(e, "--help", "%s %s: more than %d GPUs", as, v, CLI_MAX_DEVICES);
        a->devices[a->ndevices++] = (int)n;
        if (!end)
            break;
        p = end + 1;
    }
    a->tune.device = a->reduce.device = a->devices[0];
    return RT_OK;
}

/* The value of one option into 'a', checked. 'as' is the option as given. */
static int take(cli_args *a, int c, const char *as, const char *v, rt_err *e)
{
    long long n;
    switch (c) {
    case O_OP:
        a->op_name = v;
        a->have_op = 1;
        if ((a->cmd == CLI_BEST || a->cmd == CLI_MEASUREMENTS || a->cmd == CLI_REPLAY)
            && optype_parse_op(v) < 0)
            return RT_OK;   /* best, measurements, replay: a user operator's name too */
        if (optype_parse_op(v) < 0)
            return usage(e, "--help", "unknown operator '%s' (known: %s)", v, optype_op_list());
        a->tune.op = a->reduce.op = (rt_op)optype_parse_op(v);
        return RT_OK;
    case O_TYPE:
        if (optype_parse_type(v) < 0)
            return usage(e, "--help", "unknown type '%s' (known: %s)", v, optype_type_list());
        a->type_name = v;
        a->tune.type = a->reduce.type = (rt_type)optype_parse_type(v);
        return RT_OK;
    case O_ACC:
        if (optype_parse_type(v) < 0)
            return usage(e, "--help", "--acc: unknown type '%s' (known: %s)", v,
                         optype_type_list());
        a->acc_name = v;
        return RT_OK;
    case O_RESULT:
        if (strcmp(v, "acc") && strcmp(v, "element"))
            return usage(e, "--help", "--result wants acc (the accumulator's type, the "
                         "default) or element (the element type), not '%s'", v);
        a->result_name = v;
        return RT_OK;
    case O_OPFILE: a->op_file = v; return RT_OK;
    case O_DEVICE:
        if (a->cmd == CLI_BEST || a->cmd == CLI_MEASUREMENTS || a->cmd == CLI_REPORT) {
            a->device_match = v;
            return RT_OK;
        }
        if (a->cmd == CLI_TUNE)
            return parse_devices(a, as, v, e);
        if (parse_int(v, 0, 1023, &n))
            return usage(e, "--help", "%s wants a GPU ordinal, not '%s'", as, v);
        a->tune.device = a->reduce.device = (int)n;
        return RT_OK;
    case O_SIZES:
    case O_PROFILES:
        return parse_list(a, c, v, e);
    case O_SPACE: a->tune.space_path = v; return RT_OK;
    case O_FAMILY:
        a->tune.families = v;
        return check_family_list(v, e);
    case O_DB: a->db = v; return RT_OK;
    case O_HOT: a->tune.hot = 1; return RT_OK;
    case O_DET: a->tune.deterministic = 1; return RT_OK;
    case O_JOBS:
        if (parse_int(v, 1, 1024, &n))
            return usage(e, "--help", "%s wants a number of threads, not '%s'", as, v);
        a->tune.jobs = (int)n;
        return RT_OK;
    case O_SEED:
        if (parse_int(v, 0, LLONG_MAX, &n))
            return usage(e, "--help", "%s wants a non-negative integer, not '%s'", as, v);
        a->tune.seed = (unsigned long long)n;
        a->have_seed = 1;
        return RT_OK;
    case O_STRATEGY:
        if (!strategy_find(v))
            return usage(e, "--help", "%s: unknown strategy '%s' (known: %s)", as, v,
                         STRATEGY_NAMES);
        a->tune.strategy = v;
        return RT_OK;
    case O_BUDGET:
        return parse_budget(a, as, v, e);
    case O_STRATEGY_SEED:
        if (parse_int(v, 0, LLONG_MAX, &n))
            return usage(e, "--help", "%s wants a non-negative integer, not '%s'", as, v);
        a->tune.strategy_seed = (unsigned long long)n;
        return RT_OK;
    case O_ARCH:
        a->arch = v;
        return check_arch(v, e);
    case O_SEGMENTED:
        a->segmented = 1;
        a->tune.layout = segdata_parse_layout(v);
        if (a->tune.layout != SEG_LAYOUT_KEYS && a->tune.layout != SEG_LAYOUT_OFFSETS)
            return usage(e, "--help", "%s: '%s' is not a layout (keys, offsets)", as, v);
        return RT_OK;
    case O_AXIS: a->axis = 1; return RT_OK;
    case O_SHAPES:
        return parse_shapes(a, as, v, e);
    case O_OFF64: a->tune.off64 = a->reduce.off64 = 1; return RT_OK;
    case O_N:
        if (parse_size(v, &a->n_filter))
            return usage(e, "--help", "%s: '%s' is not a size", as, v);
        return RT_OK;
    case 'o': a->out = a->reduce.out = v; return RT_OK;
    case O_FORCE: a->force = a->reduce.force = 1; return RT_OK;
    case O_MATCH: a->match[a->nmatch++] = v; return RT_OK;
    case O_PEERS: a->peers[a->npeers++] = v; return RT_OK;
    case O_JUDGE: a->judge = v; return RT_OK;
    case O_MEAS: a->with_measurements = 1; return RT_OK;
    case O_IN: a->reduce.in = v; return RT_OK;
    case O_KEYS: a->reduce.keys = v; return RT_OK;
    case O_OFFSETS: a->reduce.offsets = v; return RT_OK;
    case O_NSEG:
        if (parse_int(v, 0, 1LL << 40, &n))
            return usage(e, "--help", "%s wants a number of segments (0 to 2^40), not '%s'",
                         as, v);
        a->reduce.nseg = n;
        return RT_OK;
    case O_CHECK: a->reduce.check = 1; return RT_OK;
    case O_SHAPE: {
        /* O,L,I: three counts, each of them may be 0 */
        char *end = NULL;
        const char *p = v;
        for (int i = 0; i < 3; i++) {
            errno = 0;
            if (*p < '0' || *p > '9')
                end = NULL;
            else
                a->reduce.shape[i] = strtoull(p, &end, 10);
            if (!end || errno || *end != (i < 2 ? ',' : '\0'))
                return usage(e, "--help", "%s wants OUTER,LEN,INNER (three counts, e.g. "
                             "1024,4096,1), not '%s'", as, v);
            p = end + 1;
        }
        a->reduce.axis = 1;
        return RT_OK;
    }
    case O_EXPLAIN: a->reduce.explain = 1; return RT_OK;
    case O_CASES: a->cases_from = v; return RT_OK;
    case O_SPLIT: a->split = 1; return RT_OK;
    case 'v': a->tune.verbose = 1; return RT_OK;
    case O_FORMAT:
        if ((a->format = results_parse_format(v)) < 0)
            return usage(e, "--help", "%s: '%s' is not a format (table, csv, json)", as, v);
        return RT_OK;
    default: return usage(e, "--help", "option %s is not handled", as);   /* a table slip */
    }
}

/*
 * The type spec of tuning and reduce: --type with --acc and --result (RT_ACC,
 * RT_RESULT_ELEM), which must resolve for the operator (optype_resolve): a pair that is not
 * defined ("var_mean of u8", "sum of bf16 accumulated in i32") is a usage error naming it.
 */
static int check_spec(cli_args *a, rt_err *e)
{
    char why[256];
    optype_ts ts;
    rt_type spec = a->tune.type;

    if ((a->acc_name || a->result_name) && a->op_file)
        return usage(e, "--help", "--acc and --result go with the built-in operators (--op); "
                     "a user operator (--op-file) accumulates in its own type");
    if (a->op_file || !a->have_op)
        return RT_OK;
    if (a->acc_name)
        spec = RT_ACC(spec, optype_parse_type(a->acc_name));
    if (a->result_name && !strcmp(a->result_name, "element"))
        spec = RT_RESULT_ELEM(spec);
    if (optype_resolve(a->tune.op, spec, &ts, why, sizeof why) != 0)
        return usage(e, "--help", "%s", why);
    a->tune.type = a->reduce.type = spec;
    return RT_OK;
}

/* --axis and --shapes against the other options of tuning and compile; the layout set. */
static int check_axis(cli_args *a, rt_err *e)
{
    if (a->axis_shapes_given && !a->axis)
        return usage(e, "--help", "--shapes goes with --axis");
    if (!a->axis)
        return RT_OK;
    if (a->segmented || a->tune.nprofiles || a->tune.nsizes || a->tune.off64)
        return usage(e, "--help", "--axis takes its cases from --shapes: --sizes, --segmented, "
                     "--profiles and --off64 do not go with it");
    if (a->op_file)
        return usage(e, "--help", "--axis tunes the built-in operators; user operators "
                     "(--op-file) are tuned unsegmented");
    a->tune.layout = SEG_LAYOUT_AXIS;
    return RT_OK;
}

/* What the options say together, per command. */
static int check_command(cli_args *a, rt_err *e)
{
    int rc;

    if (a->op_file && a->op_name)
        return usage(e, "--help", "--op-file and --op exclude each other");
    switch (a->cmd) {
    case CLI_EMIT:
        if (!a->cfg.family)
            return usage(e, "--help", "emit needs a family (see redtune families)");
        return RT_OK;
    case CLI_TUNE:
        if (a->split && !a->device_arg)
            return usage(e, "--help", "--split goes with --device all or a list of GPUs "
                         "(0,2,3): identical ones among them share the cases");
        if (a->cases_from && (a->have_op || a->op_file || a->type_name || a->tune.nsizes
                              || a->tune.layout || a->tune.nprofiles || a->tune.off64
                              || a->acc_name || a->result_name || a->axis
                              || a->axis_shapes_given))
            return usage(e, "--help", "--cases-from takes the operators, types, sizes and "
                         "layouts from its file: --op, --op-file, --type, --acc, --result, "
                         "--sizes, --segmented, --profiles, --off64, --axis and --shapes do not "
                         "go with it");
        if (a->cases_from)
            return RT_OK;
        if ((rc = check_axis(a, e)))
            return rc;
        if (!a->have_op && !a->op_file)
            return usage(e, "--help", "which operator? --op is required (%s), or --op-file "
                         "FILE", optype_op_list());
        if ((a->tune.nprofiles || a->tune.off64) && a->tune.layout == SEG_LAYOUT_FLAT)
            return usage(e, "--help", "--profiles and --off64 go with --segmented keys|offsets");
        if (a->op_file && a->tune.layout != SEG_LAYOUT_FLAT)
            return usage(e, "--help", "--segmented tunes the built-in operators; user "
                         "operators (--op-file) are tuned unsegmented");
        return check_spec(a, e);
    case CLI_COMPILE:
        if ((rc = check_axis(a, e)))
            return rc;
        if (!a->have_op && !a->op_file) {
            a->tune.op = RT_MIN;
            a->have_op = 1;
        }
        return RT_OK;
    case CLI_REPLAY:
        if (!a->nfiles)
            return usage(e, "--help", "replay: which measurements? a database or the CSV of "
                         "`redtune measurements --format csv` is required");
        if (a->tune.budget_s > 0)
            return usage(e, "--help", "replay: --budget in seconds cannot be replayed (the "
                         "stored times are not the run's); give configs (N) or a share (P%%)");
        if (a->format == RESULTS_JSON)
            return usage(e, "--help", "replay: --format is table or csv");
        return RT_OK;
    case CLI_REPORT:
        if (!a->out)
            return usage(e, "--help", "report: which output? -o FILE is required (an HTML "
                         "file)");
        return RT_OK;
    case CLI_DUMP:
        if (a->nfiles + (a->db != NULL) > 1)
            return usage(e, "--help", "dump: one database at a time");
        return RT_OK;
    case CLI_EXPORT:
    case CLI_MERGE:
    case CLI_LOAD:
        if (!a->out)
            return usage(e, "--help", "%s: which output? -o FILE is required", a->name);
        if (a->cmd == CLI_EXPORT && a->nmatch == 0)
            return usage(e, "--help", "export: which devices? --match NAME is required (a part "
                         "of the device name, e.g. H100)");
        if (a->cmd == CLI_MERGE && a->nfiles == 0)
            return usage(e, "--help", "merge: no input databases");
        return RT_OK;
    case CLI_REDUCE: {
        reduce_opts *o = &a->reduce;
        if (!a->have_op && !a->op_file)
            return usage(e, "--help", "reduce: which operator? --op is required (%s), or "
                         "--op-file FILE", optype_op_list());
        if (!o->in)
            return usage(e, "--help", "reduce: which data? --in FILE is required (raw "
                         "little-endian values of --type)");
        if (o->keys && o->offsets)
            return usage(e, "--help", "reduce: --keys and --offsets exclude each other (one "
                         "layout at a time)");
        if (o->off64 && !o->offsets)
            return usage(e, "--help", "reduce: --off64 goes with --offsets (keys are always "
                         "u32)");
        if (o->nseg >= 0 && !o->keys && !o->offsets)
            return usage(e, "--help", "reduce: --nseg goes with --keys or --offsets");
        if (o->axis && (o->keys || o->offsets || o->check))
            return usage(e, "--help", "reduce: --shape (a reduction along an axis) excludes "
                         "--keys, --offsets and --check");
        if ((rc = check_spec(a, e)) != RT_OK)
            return rc;
        o->db = a->db;
        return RT_OK;
    }
    default:
        return RT_OK;
    }
}

int cli_parse(int argc, char **argv, cli_args *a, rt_err *e)
{
    struct option lo[NOPTIONS + 1];
    const char *given[O_END];
    char shorts[16] = "-:", as[64];
    unsigned long long params_seen = 0;
    int nlo = 0, rc = RT_OK;

    memset(a, 0, sizeof *a);
    memset(given, 0, sizeof given);
    rt_clearerr(e);
    a->cmd = CLI_TUNE;
    a->name = "redtune";
    a->tune.type = a->reduce.type = RT_F32;
    a->reduce.nseg = -1;
    a->tune.strategy_seed = 1;   /* reproducible unless asked otherwise */
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        a->cmd = CLI_HELP;
        return RT_OK;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        a->cmd = CLI_VERSION;
        return RT_OK;
    }
    if (argc >= 2 && argv[1][0] != '-') {
        size_t k = 0;
        while (k < sizeof commands / sizeof commands[0] && strcmp(commands[k].name, argv[1]))
            k++;
        if (k == sizeof commands / sizeof commands[0])
            return usage(e, "--help", "unknown command '%s'", argv[1]);
        a->cmd = commands[k].cmd;
        a->name = commands[k].name;
        argv++;   /* getopt reads the command word as its program name */
        argc--;
    }
    if (a->cmd == CLI_WORKER)
        return argc > 1 ? usage(e, "--help", "worker: unexpected argument '%s' (the tuner "
                                "starts it, with none)", argv[1]) : RT_OK;
    if (!(a->files = calloc((size_t)argc + 1, sizeof *a->files))
        || !(a->match = calloc((size_t)argc + 1, sizeof *a->match))
        || !(a->peers = calloc((size_t)argc + 1, sizeof *a->peers)))
        return rt_seterr(e, RT_ENOMEM, "out of memory");

    unsigned bit = 1u << a->cmd;
    for (int i = 0; i < NOPTIONS; i++)
        if (options[i].cmds & bit)
            lo[nlo++] = (struct option){options[i].name, options[i].has_arg, NULL, options[i].val};
    lo[nlo] = (struct option){NULL, 0, NULL, 0};
    if (bit & (SHIP | C(REDUCE) | C(REPORT)))
        strcat(shorts, "o:");
    if (bit & (C(TUNE) | C(COMPILE) | C(REPLAY)))
        strcat(shorts, "v");
    strcat(shorts, "h");

    /* "-" first: operands come back in order as 1, whatever POSIXLY_CORRECT says. */
    optind = 0;   /* glibc: start afresh */
    opterr = 0;
    for (;;) {
        int li = -1, c = getopt_long(argc, argv, shorts, lo, &li);
        if (c == -1)
            break;
        if (c == 1) {
            if ((rc = positional(a, optarg, &params_seen, e)))
                return rc;
            continue;
        }
        if (c == '?' || c == ':')
            return bad_option(c, argv, lo, e);
        opt_text(argv, li, lo, c, as, sizeof as);
        if (li >= 0 && strcmp(as + 2, lo[li].name) != 0)   /* getopt takes prefixes */
            return usage(e, "--help", "unknown option '%s' (did you mean --%s? options are "
                         "never abbreviated)", as, lo[li].name);
        if (c == 'h') {
            a->cmd = CLI_HELP;
            return RT_OK;
        }
        if (optarg) {
            int path = 0;
            for (int i = 0; i < NOPTIONS; i++)
                if (options[i].val == c)
                    path = options[i].path;
            if (path && !*optarg)
                return usage(e, "--help", "%s: empty path", as);
            if (given[c] && c != O_MATCH && c != O_PEERS)
                return usage(e, "--help", "%s given twice ('%s', then '%s'): it takes one "
                             "value", as, given[c], optarg);
            given[c] = optarg;
        }
        if ((rc = take(a, c, as, optarg, e)))
            return rc;
    }
    for (int i = optind; i < argc; i++)   /* after "--" */
        if ((rc = positional(a, argv[i], &params_seen, e)))
            return rc;
    if (a->cmd == CLI_TUNE || a->cmd == CLI_BEST || a->cmd == CLI_MEASUREMENTS
        || a->cmd == CLI_REPORT)
        a->tune.db_path = a->db ? a->db : "redtune.db";
    return check_command(a, e);
}

void cli_free(cli_args *a)
{
    free(a->files);
    free(a->match);
    free(a->peers);
    a->files = a->match = a->peers = NULL;
}
