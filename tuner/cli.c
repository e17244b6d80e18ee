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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../runtime/optype.h"
#include "axisdata.h"
#include "cli.h"
#include "cli_int.h"
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
    O_PRIOR,   /* replay --prior FILE: a database whose winners local search may start from */
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
    {"off64", no_argument, O_OFF64, C(TUNE) | C(COMPILE) | C(REDUCE), 0},
    {"n", required_argument, O_N, RESULTS, 0},
    {"output", required_argument, 'o', SHIP | C(REDUCE) | C(REPORT), 1},
    {"force", no_argument, O_FORCE, SHIP | C(REDUCE) | C(REPORT), 0},
    {"match", required_argument, O_MATCH, C(EXPORT), 0},
    {"peers", required_argument, O_PEERS, C(REPORT), 1},
    {"judge", required_argument, O_JUDGE, C(REPLAY), 1},
    {"prior", required_argument, O_PRIOR, C(REPLAY), 1},
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
    {"acc", required_argument, O_ACC, C(TUNE) | C(EMIT) | C(COMPILE) | C(REDUCE) | RESULTS, 0},
    {"result", required_argument, O_RESULT, C(TUNE) | C(EMIT) | C(COMPILE) | C(REDUCE), 0},
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
        return is_long ? cli_usage(e, "--help", "option %.*s needs a value", len, word)
                       : cli_usage(e, "--help", "option -%c needs a value", optopt);
    if (is_long && optopt) {   /* a known option that takes no value, given one */
        for (int i = 0; lo[i].name; i++)
            if (lo[i].val == optopt && lo[i].has_arg == no_argument)
                return cli_usage(e, "--help", "option %.*s takes no value", len, word);
    }
    if (is_long)
        return cli_usage(e, "--help", "unknown option '%.*s'", len, word);
    return cli_usage(e, "--help", "unknown option '-%c'", optopt);
}

/* One argument that is no option: the command's operands. */
static int positional(cli_args *a, const char *arg, unsigned long long *params_seen, rt_err *e)
{
    switch (a->cmd) {
    case CLI_EMIT: {
        if (!a->cfg.family) {
            const rt_family *f;
            int rc = cli_find_family(arg, &f, e);
            if (rc == RT_OK)
                config_default(f, &a->cfg);
            return rc;
        }
        const char *eq = strchr(arg, '=');
        if (!eq)
            return cli_usage(e, "--help", "emit: unexpected argument '%s' (parameters are "
                         "NAME=VALUE)", arg);
        char name[RT_NAME_MAX];
        long long v;
        rt_err ce;
        snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
        if (cli_parse_int(eq + 1, LLONG_MIN, LLONG_MAX, &v))
            return cli_usage(e, "--help", "parameter value in '%s' is not an integer", arg);
        for (int k = 0; k < a->cfg.family->nparams && k < 64; k++) {
            if (strcmp(a->cfg.family->params[k].name, name) != 0)
                continue;
            if (*params_seen & (1ULL << k))
                return cli_usage(e, "--help", "emit: parameter %s given twice", name);
            *params_seen |= 1ULL << k;
        }
        if (config_set(&a->cfg, name, v, &ce))
            return cli_usage(e, "families", "%s", ce.msg);
        return RT_OK;
    }
    case CLI_MERGE:
    case CLI_DUMP:
    case CLI_LOAD:
    case CLI_REPLAY:
        if (!*arg)
            return cli_usage(e, "--help", "%s: an input is an empty path", a->name);
        a->files[a->nfiles++] = arg;
        return RT_OK;
    case CLI_EXPORT:
        return cli_usage(e, "--help", "export: unexpected argument '%s' (the input is --db FILE)",
                     arg);
    case CLI_REDUCE:
        return cli_usage(e, "--help", "reduce: unexpected argument '%s' (the values are --in FILE)",
                     arg);
    case CLI_TUNE:
        return cli_usage(e, "--help", "unexpected argument '%s'", arg);
    default:
        return cli_usage(e, "--help", "%s: unexpected argument '%s'", a->name, arg);
    }
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
            return cli_usage(e, "--help", "unknown operator '%s' (known: %s)", v, optype_op_list());
        a->tune.op = a->reduce.op = (rt_op)optype_parse_op(v);
        return RT_OK;
    case O_TYPE:
        if (optype_parse_type(v) < 0)
            return cli_usage(e, "--help", "unknown type '%s' (known: %s)", v, optype_type_list());
        a->type_name = v;
        a->tune.type = a->reduce.type = (rt_type)optype_parse_type(v);
        return RT_OK;
    case O_ACC:
        if (optype_parse_type(v) < 0)
            return cli_usage(e, "--help", "--acc: unknown type '%s' (known: %s)", v,
                         optype_type_list());
        a->acc_name = v;
        return RT_OK;
    case O_RESULT:
        if (strcmp(v, "acc") && strcmp(v, "element") && strcmp(v, "index"))
            return cli_usage(e, "--help", "--result wants acc (the accumulator's type, the "
                         "default), element (the element type) or index (argmin/argmax: the "
                         "index alone), not '%s'", v);
        a->result_name = v;
        return RT_OK;
    case O_OPFILE: a->op_file = v; return RT_OK;
    case O_DEVICE:
        if (a->cmd == CLI_BEST || a->cmd == CLI_MEASUREMENTS || a->cmd == CLI_REPORT) {
            a->device_match = v;
            return RT_OK;
        }
        if (a->cmd == CLI_TUNE)
            return cli_parse_devices(a, as, v, e);
        if (cli_parse_int(v, 0, 1023, &n))
            return cli_usage(e, "--help", "%s wants a GPU ordinal, not '%s'", as, v);
        a->tune.device = a->reduce.device = (int)n;
        return RT_OK;
    case O_SIZES:
    case O_PROFILES:
        return cli_parse_list(a, c == O_SIZES, v, e);
    case O_SPACE: a->tune.space_path = v; return RT_OK;
    case O_FAMILY:
        a->tune.families = v;
        return cli_check_family_list(v, e);
    case O_DB: a->db = v; return RT_OK;
    case O_HOT: a->tune.hot = 1; return RT_OK;
    case O_DET: a->tune.deterministic = 1; return RT_OK;
    case O_JOBS:
        if (cli_parse_int(v, 1, 1024, &n))
            return cli_usage(e, "--help", "%s wants a number of threads, not '%s'", as, v);
        a->tune.jobs = (int)n;
        return RT_OK;
    case O_SEED:
        if (cli_parse_int(v, 0, LLONG_MAX, &n))
            return cli_usage(e, "--help", "%s wants a non-negative integer, not '%s'", as, v);
        a->tune.seed = (unsigned long long)n;
        a->have_seed = 1;
        return RT_OK;
    case O_STRATEGY:
        if (!strategy_find(v))
            return cli_usage(e, "--help", "%s: unknown strategy '%s' (known: %s)", as, v,
                         STRATEGY_NAMES);
        a->tune.strategy = v;
        return RT_OK;
    case O_BUDGET:
        return cli_parse_budget(a, as, v, e);
    case O_STRATEGY_SEED:
        if (cli_parse_int(v, 0, LLONG_MAX, &n))
            return cli_usage(e, "--help", "%s wants a non-negative integer, not '%s'", as, v);
        a->tune.strategy_seed = (unsigned long long)n;
        return RT_OK;
    case O_ARCH:
        a->arch = v;
        return cli_check_arch(v, e);
    case O_SEGMENTED:
        a->segmented = 1;
        a->tune.layout = segdata_parse_layout(v);
        if (a->tune.layout != SEG_LAYOUT_KEYS && a->tune.layout != SEG_LAYOUT_OFFSETS)
            return cli_usage(e, "--help", "%s: '%s' is not a layout (keys, offsets)", as, v);
        return RT_OK;
    case O_AXIS: a->axis = 1; return RT_OK;
    case O_SHAPES:
        return cli_parse_shapes(a, as, v, e);
    case O_OFF64: a->tune.off64 = a->reduce.off64 = 1; return RT_OK;
    case O_N:
        if (cli_parse_size(v, &a->n_filter))
            return cli_usage(e, "--help", "%s: '%s' is not a size", as, v);
        return RT_OK;
    case 'o': a->out = a->reduce.out = v; return RT_OK;
    case O_FORCE: a->force = a->reduce.force = 1; return RT_OK;
    case O_MATCH: a->match[a->nmatch++] = v; return RT_OK;
    case O_PEERS: a->peers[a->npeers++] = v; return RT_OK;
    case O_JUDGE: a->judge = v; return RT_OK;
    case O_PRIOR: a->prior = v; return RT_OK;
    case O_MEAS: a->with_measurements = 1; return RT_OK;
    case O_IN: a->reduce.in = v; return RT_OK;
    case O_KEYS: a->reduce.keys = v; return RT_OK;
    case O_OFFSETS: a->reduce.offsets = v; return RT_OK;
    case O_NSEG:
        if (cli_parse_int(v, 0, 1LL << 40, &n))
            return cli_usage(e, "--help", "%s wants a number of segments (0 to 2^40), not '%s'",
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
                return cli_usage(e, "--help", "%s wants OUTER,LEN,INNER (three counts, e.g. "
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
            return cli_usage(e, "--help", "%s: '%s' is not a format (table, csv, json)", as, v);
        return RT_OK;
    default: return cli_usage(e, "--help", "option %s is not handled", as);   /* a table slip */
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
        return cli_usage(e, "--help", "--acc and --result go with the built-in operators (--op); "
                     "a user operator (--op-file) accumulates in its own type");
    if (a->op_file || !a->have_op)
        return RT_OK;
    if (a->acc_name)
        spec = RT_ACC(spec, optype_parse_type(a->acc_name));
    if (a->result_name && !strcmp(a->result_name, "element"))
        spec = RT_RESULT_ELEM(spec);
    if (a->result_name && !strcmp(a->result_name, "index")) {
        if (a->cmd == CLI_TUNE)
            return cli_usage(e, "--help", "--result index is not tuned: the library runs the "
                             "winners of the {value, index} result for it (tune without "
                             "--result)");
        spec = RT_RESULT_INDEX(spec);
    }
    if (optype_resolve(a->tune.op, spec, &ts, why, sizeof why) != 0)
        return cli_usage(e, "--help", "%s", why);
    a->tune.type = a->reduce.type = spec;
    return RT_OK;
}

/* --axis and --shapes against the other options of tuning and compile; the layout set. */
static int check_axis(cli_args *a, rt_err *e)
{
    if (a->axis_shapes_given && !a->axis)
        return cli_usage(e, "--help", "--shapes goes with --axis");
    if (!a->axis)
        return RT_OK;
    if (a->segmented || a->tune.nprofiles || a->tune.nsizes || a->tune.off64)
        return cli_usage(e, "--help", "--axis takes its cases from --shapes: --sizes, --segmented, "
                     "--profiles and --off64 do not go with it");
    if (a->op_file)
        return cli_usage(e, "--help", "--axis tunes the built-in operators; user operators "
                     "(--op-file) are tuned unsegmented");
    a->tune.layout = SEG_LAYOUT_AXIS;
    return RT_OK;
}

/* What the options say together, per command. */
static int check_command(cli_args *a, rt_err *e)
{
    int rc;

    if (a->op_file && a->op_name)
        return cli_usage(e, "--help", "--op-file and --op exclude each other");
    switch (a->cmd) {
    case CLI_EMIT:
        if (!a->cfg.family)
            return cli_usage(e, "--help", "emit needs a family (see redtune families)");
        return check_spec(a, e);
    case CLI_TUNE:
        if (a->split && !a->device_arg)
            return cli_usage(e, "--help", "--split goes with --device all or a list of GPUs "
                         "(0,2,3): identical ones among them share the cases");
        if (a->cases_from && (a->have_op || a->op_file || a->type_name || a->tune.nsizes
                              || a->tune.layout || a->tune.nprofiles || a->tune.off64
                              || a->acc_name || a->result_name || a->axis
                              || a->axis_shapes_given))
            return cli_usage(e, "--help", "--cases-from takes the operators, types, sizes and "
                         "layouts from its file: --op, --op-file, --type, --acc, --result, "
                         "--sizes, --segmented, --profiles, --off64, --axis and --shapes do not "
                         "go with it");
        if (a->cases_from)
            return RT_OK;
        if ((rc = check_axis(a, e)))
            return rc;
        if (!a->have_op && !a->op_file)
            return cli_usage(e, "--help", "which operator? --op is required (%s), or --op-file "
                         "FILE", optype_op_list());
        if ((a->tune.nprofiles || a->tune.off64) && a->tune.layout == SEG_LAYOUT_FLAT)
            return cli_usage(e, "--help", "--profiles and --off64 go with --segmented keys|offsets");
        if (a->op_file && a->tune.layout != SEG_LAYOUT_FLAT)
            return cli_usage(e, "--help", "--segmented tunes the built-in operators; user "
                         "operators (--op-file) are tuned unsegmented");
        return check_spec(a, e);
    case CLI_COMPILE:
        if ((rc = check_axis(a, e)))
            return rc;
        if (a->tune.off64 && a->tune.layout != SEG_LAYOUT_OFFSETS)
            return cli_usage(e, "--help", "--off64 goes with --segmented offsets");
        if (!a->have_op && !a->op_file) {
            a->tune.op = RT_MIN;
            a->have_op = 1;
        }
        return check_spec(a, e);
    case CLI_REPLAY:
        if (!a->nfiles)
            return cli_usage(e, "--help", "replay: which measurements? a database or the CSV of "
                         "`redtune measurements --format csv` is required");
        if (a->tune.budget_s > 0)
            return cli_usage(e, "--help", "replay: --budget in seconds cannot be replayed (the "
                         "stored times are not the run's); give configs (N) or a share (P%%)");
        if (a->format == RESULTS_JSON)
            return cli_usage(e, "--help", "replay: --format is table or csv");
        return RT_OK;
    case CLI_REPORT:
        if (!a->out)
            return cli_usage(e, "--help", "report: which output? -o FILE is required (an HTML "
                         "file)");
        return RT_OK;
    case CLI_DUMP:
        if (a->nfiles + (a->db != NULL) > 1)
            return cli_usage(e, "--help", "dump: one database at a time");
        return RT_OK;
    case CLI_EXPORT:
    case CLI_MERGE:
    case CLI_LOAD:
        if (!a->out)
            return cli_usage(e, "--help", "%s: which output? -o FILE is required", a->name);
        if (a->cmd == CLI_EXPORT && a->nmatch == 0)
            return cli_usage(e, "--help", "export: which devices? --match NAME is required (a part "
                         "of the device name, e.g. H100)");
        if (a->cmd == CLI_MERGE && a->nfiles == 0)
            return cli_usage(e, "--help", "merge: no input databases");
        return RT_OK;
    case CLI_REDUCE: {
        reduce_opts *o = &a->reduce;
        if (!a->have_op && !a->op_file)
            return cli_usage(e, "--help", "reduce: which operator? --op is required (%s), or "
                         "--op-file FILE", optype_op_list());
        if (!o->in)
            return cli_usage(e, "--help", "reduce: which data? --in FILE is required (raw "
                         "little-endian values of --type)");
        if (o->keys && o->offsets)
            return cli_usage(e, "--help", "reduce: --keys and --offsets exclude each other (one "
                         "layout at a time)");
        if (o->off64 && !o->offsets)
            return cli_usage(e, "--help", "reduce: --off64 goes with --offsets (keys are always "
                         "u32)");
        if (o->nseg >= 0 && !o->keys && !o->offsets)
            return cli_usage(e, "--help", "reduce: --nseg goes with --keys or --offsets");
        if (o->axis && (o->keys || o->offsets || o->check))
            return cli_usage(e, "--help", "reduce: --shape (a reduction along an axis) excludes "
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
            return cli_usage(e, "--help", "unknown command '%s'", argv[1]);
        a->cmd = commands[k].cmd;
        a->name = commands[k].name;
        argv++;   /* getopt reads the command word as its program name */
        argc--;
    }
    if (a->cmd == CLI_WORKER)
        return argc > 1 ? cli_usage(e, "--help", "worker: unexpected argument '%s' (the tuner "
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
            return cli_usage(e, "--help", "unknown option '%s' (did you mean --%s? options are "
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
                return cli_usage(e, "--help", "%s: empty path", as);
            if (given[c] && c != O_MATCH && c != O_PEERS)
                return cli_usage(e, "--help", "%s given twice ('%s', then '%s'): it takes one "
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
