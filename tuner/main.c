/*
 * main.c - the redtune program: arguments, printing, exit codes. The only file that exits.
 *
 * Exit codes: 0 success, 1 failure (with a message), 2 usage error, 3 an input database or dump
 * was refused, 4 `reduce`'s data files were refused (their sizes, or what --check found).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "../runtime/optype.h"
#include "opfile.h"
#include "pool.h"
#include "proto.h"
#include "segdata.h"
#include "tuner.h"

#define MAX_SIZES 64

/* The --op-file operator; static, so that it is reachable (not a leak) when exit() ends. */
static opfile user_op;

static const char usage_text[] =
    "usage: redtune [--device N] (--op OP [--type T] | --op-file FILE) [--sizes LIST]\n"
    "               [--space FILE] [--family LIST] [--db FILE] [--hot] [--deterministic]\n"
    "               [--jobs N] [--seed S] [-v]\n"
    "               [--segmented keys|offsets [--profiles LIST] [--off64]]\n"
    "       redtune emit FAMILY [NAME=VALUE ...] [--op OP] [--type T] [--op-file FILE]\n"
    "       redtune compile [--arch sm_XY] [--space FILE] [--family LIST] [--op OP] [--type T]\n"
    "               [--op-file FILE] [--segmented keys|offsets] [--jobs N] [-v]\n"
    "       redtune families\n"
    "       redtune best [--db FILE] [--op NAME | --op-file FILE] [--type T] [--n N]\n"
    "               [--device NAME]\n"
    "       redtune export [--db FILE] --match NAME [--match NAME ...] [--with-measurements]\n"
    "                      -o FILE [--force]\n"
    "       redtune merge FILE FILE [...] -o FILE [--force]\n"
    "       redtune dump [FILE] [-o FILE.sql] [--force]\n"
    "       redtune load [FILE.sql ...] -o FILE [--force]\n"
    "       redtune reduce (--op OP [--type T] | --op-file FILE) --in FILE\n"
    "               [--keys FILE | --offsets FILE [--off64]]\n"
    "               [--nseg N] [--db FILE] [--device N] [--check] [-o FILE] [--explain]\n"
    "       redtune --help | --version\n"
    "\n"
    "Tunes GPU parallel reductions: every config of a Lua search space is generated from a\n"
    "template, compiled with NVRTC, verified against a CPU reference and timed on the GPU; every\n"
    "measurement and the best config per size go into an SQLite database.\n"
    "\n"
    "  --device N     GPU ordinal (default 0)\n"
    "  --op OP        operator: sum, prod, min, max, argmin, argmax\n"
    "  --type T       element type: f32 (default), f64, i32, u32, i64, u64\n"
    "  --op-file FILE a user-defined operator: a Lua file naming its type, identity, CUDA\n"
    "                 combine and whether it commutes (docs/ops.md)\n"
    "  --sizes LIST   comma-separated sizes: 1000, 2^20, 4M, 1G (default 2^10,2^12,...,2^30)\n"
    "  --space FILE   Lua search space (default: the built-in lua/spaces/default.lua)\n"
    "  --family LIST  only these families of the space (comma-separated)\n"
    "  --db FILE      database (default redtune.db)\n"
    "  --hot          keep the L2 warm between repetitions (default: flushed)\n"
    "  --deterministic  only families whose results are bitwise reproducible\n"
    "  --jobs N       compiler threads (default: all cores)\n"
    "  --seed S       seed of the test data (default: from the clock)\n"
    "  --arch sm_XY   compile for this architecture without a GPU\n"
    "  --segmented L  tune segmented reductions: L is keys (a sorted owner array) or offsets\n"
    "                 (CSR begin offsets); default space lua/spaces/segmented.lua, default\n"
    "                 sizes 2^14,2^18,2^22,30M\n"
    "  --profiles P   segment profiles to tune, comma-separated (default all: one, rand10_50,\n"
    "                 len3, len1, len1000, heavy)\n"
    "  --off64        64-bit offsets (default 32-bit)\n"
    "  -v             print every measurement\n"
    "\n"
    "  export         the devices whose name holds a --match (any case), with their best\n"
    "                 entries, kernels and CUBINs (and measurements with --with-measurements)\n"
    "  merge          databases of several machines in one (the faster verified result wins)\n"
    "  dump           a database as SQL text that diffs (stdout, or -o FILE)\n"
    "  load           the database of dumps (none: an empty database)\n"
    "  -o FILE        the output, written whole or not at all\n"
    "  --force        replace an existing output\n"
    "\n"
    "  reduce         reduce raw little-endian files on the GPU with the tuned kernel\n"
    "                 (libredtune): --in the values of --type; --keys u32 segment keys, one\n"
    "                 per value, or --offsets i32 CSR offsets (i64 with --off64); --nseg the\n"
    "                 segments (keys: default the largest key + 1; offsets: their count - 1,\n"
    "                 which --nseg must match); --db default: libredtune's search\n"
    "                 ($REDTUNE_DB, ./redtune.db, beside the program, installed); --check\n"
    "                 validates keys or offsets on the host first (else bad ones give\n"
    "                 unspecified results, never a fault); -o FILE writes the raw results\n"
    "                 (replaced whole), else one per line on stdout (argmin/argmax: value\n"
    "                 index); --explain prints which kernel and why first\n"
    "\n"
    "Exit status: 0 success, 1 failure (a bad space or operator file, an unreadable file, no\n"
    "GPU included), 2 usage error, 3 an input database or dump was refused (missing, not\n"
    "redtune's, corrupt, or of a newer schema), 4 reduce's data was refused (an empty file, a\n"
    "size that is no whole number of elements, counts that disagree, or --check failed).\n";

static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "redtune: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see redtune --help)\n");
    exit(2);
}

static void fail(const rt_err *e)
{
    fprintf(stderr, "redtune: %s\n", e->msg);
    exit(1);
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

/* The value of option argv[*i], moving past it; a usage error when missing. */
static const char *optarg_of(int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    if (*i + 1 >= argc)
        usage_error("option %s needs a value", opt);
    return argv[++*i];
}

static rt_op want_op(const char *s)
{
    int op = optype_parse_op(s);
    if (op < 0) {
        fprintf(stderr, "redtune: unknown operator '%s' (known: %s)\n(see redtune --help)\n", s,
                optype_op_list());
        exit(2);
    }
    return (rt_op)op;
}

static rt_type want_type(const char *s)
{
    int t = optype_parse_type(s);
    if (t < 0) {
        fprintf(stderr, "redtune: unknown type '%s' (known: %s)\n(see redtune --help)\n", s,
                optype_type_list());
        exit(2);
    }
    return (rt_type)t;
}

static const rt_family *want_family(const char *s)
{
    const rt_family *f = family_find(s);
    if (!f) {
        if (family_error()) {
            fprintf(stderr, "redtune: %s\n", family_error());
            exit(1);
        }
        fprintf(stderr, "redtune: unknown family '%s' (known:", s);
        for (int i = 0; i < family_count(); i++)
            fprintf(stderr, " %s", family_at(i)->name);
        fprintf(stderr, ")\n(see redtune families)\n");
        exit(2);
    }
    return f;
}

/* Load the --op-file operator; a bad file is a failure (exit 1), as a bad space is. */
static const opfile *want_user(const char *path, const char *other)
{
    if (other)
        usage_error("--op-file and %s exclude each other", other);
    rt_err e;
    opfile_free(&user_op);   /* a second --op-file replaces the first */
    if (opfile_load(path, &user_op, &e))
        fail(&e);
    return &user_op;
}

/* --family LIST: every name a family. With a non-commutative operator, at least one that
 * keeps the order: otherwise the user asked for nothing that can be tuned (exit 2). */
static void check_families(const char *list, const opfile *user)
{
    size_t len = strlen(list);
    if (!len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,"))
        usage_error("--family: '%s' is not a comma-separated list of families", list);
    int ordered = 0, many = strchr(list, ',') != NULL;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        ordered += !want_family(t)->needs_commutative;
    free(copy);
    if (!user || user->op.commutative || ordered)
        return;
    fprintf(stderr, "redtune: --family %s: %s a commutative operator, and '%s' (%s) is not "
            "commutative\n(see redtune families: those that need no commutative operator keep "
            "the order)\n", list, many ? "these families need" : "the family needs",
            user->op.name, user->op.file);
    exit(2);
}

/* --type with --op-file: the file names the type; another one on the command line is an
 * error, not an override. */
static void check_type(const opfile *user, const char *type_name)
{
    if (user && type_name && optype_parse_type(type_name) != (int)user->op.type) {
        fprintf(stderr, "redtune: --type %s: the operator file %s says type %s\n(see redtune "
                "--help)\n", type_name, user->op.file, rt_type_name(user->op.type));
        exit(2);
    }
}

/* The path of this executable, for the worker's exec. */
static const char *self_exe(const char *argv0)
{
    static char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        buf[n] = '\0';
        return buf;
    }
    return argv0;
}

static int main_emit(int argc, char **argv)
{
    if (argc < 3)
        usage_error("%s needs a family (see redtune families)", "emit");
    const rt_family *f = want_family(argv[2]);
    rt_config c;
    config_default(f, &c);
    rt_op op = RT_SUM;
    rt_type type = RT_F32;
    rt_err e;
    rt_clearerr(&e);
    const char *op_name = NULL, *type_name = NULL, *op_file = NULL;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (!strcmp(a, "--op"))
            op = want_op(op_name = optarg_of(argc, argv, &i));
        else if (!strcmp(a, "--type"))
            type = want_type(type_name = optarg_of(argc, argv, &i));
        else if (!strcmp(a, "--op-file"))
            op_file = optarg_of(argc, argv, &i);
        else if (eq && a[0] != '-') {
            char name[RT_NAME_MAX];
            long long v;
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
            if (parse_int(eq + 1, LLONG_MIN, LLONG_MAX, &v))
                usage_error("parameter value in '%s' is not an integer", a);
            if (config_set(&c, name, v, &e)) {
                fprintf(stderr, "redtune: %s\n(see redtune families)\n", e.msg);
                exit(2);
            }
        } else
            usage_error("emit: unexpected argument '%s'", a);
    }
    const opfile *user = op_file ? want_user(op_file, op_name ? "--op" : NULL) : NULL;
    check_type(user, type_name);
    if (user && !user->op.commutative && f->needs_commutative) {
        fprintf(stderr, "redtune: emit %s: the family needs a commutative operator, and '%s' "
                "(%s) is not commutative\n(see redtune families)\n", f->name, user->op.name,
                user->op.file);
        exit(2);
    }
    int rc = cmd_emit(&c, op, type, user, &e);
    opfile_free(&user_op);
    if (rc)
        fail(&e);
    return 0;
}

/* export, merge, dump, load: exit 3 when an input was refused. */
static int main_ship(const char *cmd, int argc, char **argv)
{
    const char **files = calloc((size_t)argc, sizeof *files);
    const char **match = calloc((size_t)argc, sizeof *match);
    const char *db = NULL, *out = NULL;
    int nfiles = 0, nmatch = 0, force = 0, meas = 0, is_export = !strcmp(cmd, "export");
    if (!files || !match) {
        fprintf(stderr, "redtune: out of memory\n");
        exit(1);
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            out = optarg_of(argc, argv, &i);
        else if (!strcmp(a, "--force"))
            force = 1;
        else if (!strcmp(a, "--db") && (is_export || !strcmp(cmd, "dump")))
            db = optarg_of(argc, argv, &i);
        else if (!strcmp(a, "--match") && is_export)
            match[nmatch++] = optarg_of(argc, argv, &i);
        else if (!strcmp(a, "--with-measurements") && is_export)
            meas = 1;
        else if (a[0] == '-' && a[1])
            usage_error("unknown option '%s'", a);
        else if (is_export)
            usage_error("export: unexpected argument '%s' (the input is --db FILE)", a);
        else
            files[nfiles++] = a;
    }
    if (!strcmp(cmd, "dump")) {
        if (nfiles + (db != NULL) > 1)
            usage_error("%s", "dump: one database at a time");
        db = db ? db : nfiles ? files[0] : "redtune.db";
    } else if (!out) {
        usage_error("%s: which output? -o FILE is required", cmd);
    }
    if (is_export && nmatch == 0)
        usage_error("%s", "export: which devices? --match NAME is required (a part of the "
                    "device name, e.g. H100)");
    if (!strcmp(cmd, "merge") && nfiles == 0)
        usage_error("%s", "merge: no input databases");

    rt_err e;
    store_ship_stats st;
    int rc;
    rt_clearerr(&e);
    if (is_export)
        rc = cmd_export(db ? db : "redtune.db", match, nmatch, meas, out, force, &st, &e);
    else if (!strcmp(cmd, "merge"))
        rc = cmd_merge(files, nfiles, out, force, &st, &e);
    else if (!strcmp(cmd, "load"))
        rc = cmd_load(files, nfiles, out, force, &st, &e);
    else
        rc = cmd_dump(db, out, force, &st, &e);
    free(files);
    free(match);
    if (rc) {
        fprintf(stderr, "redtune: %s\n", e.msg);
        exit(st.refused ? 3 : 1);
    }
    return 0;
}

/* reduce: exit 3 when the database was refused, 4 when the data files were. */
static int main_reduce(int argc, char **argv)
{
    reduce_opts o;
    memset(&o, 0, sizeof o);
    o.type = RT_F32;
    o.nseg = -1;
    int have_op = 0;
    const char *op_name = NULL, *type_name = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if (!strcmp(a, "--op")) {
            if (o.user_op)
                usage_error("--op-file and %s exclude each other", "--op");
            o.op = want_op(op_name = optarg_of(argc, argv, &i));
            have_op = 1;
        } else if (!strcmp(a, "--type")) {
            o.type = want_type(type_name = optarg_of(argc, argv, &i));
        } else if (!strcmp(a, "--in")) {
            o.in = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--keys")) {
            o.keys = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--offsets")) {
            o.offsets = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--off64")) {
            o.off64 = 1;
        } else if (!strcmp(a, "--nseg")) {
            if (parse_int(optarg_of(argc, argv, &i), 0, 1LL << 40, &v))
                usage_error("--nseg wants a number of segments (0 to 2^40), not '%s'", argv[i]);
            o.nseg = v;
        } else if (!strcmp(a, "--db")) {
            o.db = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--device")) {
            if (parse_int(optarg_of(argc, argv, &i), 0, 1023, &v))
                usage_error("--device wants a GPU ordinal, not '%s'", argv[i]);
            o.device = (int)v;
        } else if (!strcmp(a, "--check")) {
            o.check = 1;
        } else if (!strcmp(a, "--explain")) {
            o.explain = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            o.out = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--op-file")) {
            const char *path = optarg_of(argc, argv, &i);
            o.user_op = &want_user(path, op_name ? "--op" : NULL)->op;
            have_op = 1;
        } else if (a[0] == '-' && a[1]) {
            usage_error("unknown option '%s'", a);
        } else {
            usage_error("reduce: unexpected argument '%s' (the values are --in FILE)", a);
        }
    }
    if (!have_op)
        usage_error("%s", "reduce: which operator? --op is required (sum, prod, min, max, "
                    "argmin, argmax), or --op-file FILE");
    if (o.user_op) {
        check_type(&user_op, type_name);
        o.type = o.user_op->type;
    }
    if (!o.in)
        usage_error("%s", "reduce: which data? --in FILE is required (raw little-endian values "
                    "of --type)");
    if (o.keys && o.offsets)
        usage_error("%s", "reduce: --keys and --offsets exclude each other (one layout at a "
                    "time)");
    if (o.off64 && !o.offsets)
        usage_error("%s", "reduce: --off64 goes with --offsets (keys are always u32)");
    if (o.nseg >= 0 && !o.keys && !o.offsets)
        usage_error("%s", "reduce: --nseg goes with --keys or --offsets");

    rt_err e;
    int refused;
    rt_clearerr(&e);
    if (cmd_reduce(&o, &refused, &e)) {
        fprintf(stderr, "redtune: %s\n", e.msg);
        exit(refused == REDUCE_BAD_DB ? 3 : refused == REDUCE_BAD_DATA ? 4 : 1);
    }
    return 0;
}

int main(int argc, char **argv)
{
    rt_err e;
    rt_clearerr(&e);
    if (argc >= 2 && !strcmp(argv[1], "worker"))
        return worker_main();
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("redtune %s\n", RT_VERSION_STRING);
        return 0;
    }
    if (family_error()) {
        fprintf(stderr, "redtune: %s\n", family_error());
        return 1;
    }
    const char *cmd = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
    if (cmd && !strcmp(cmd, "emit"))
        return main_emit(argc, argv);
    if (cmd && !strcmp(cmd, "families")) {
        if (argc > 2)
            usage_error("families: unexpected argument '%s'", argv[2]);
        return cmd_families();
    }
    if (cmd && (!strcmp(cmd, "export") || !strcmp(cmd, "merge") || !strcmp(cmd, "dump")
                || !strcmp(cmd, "load")))
        return main_ship(cmd, argc, argv);
    if (cmd && !strcmp(cmd, "reduce"))
        return main_reduce(argc, argv);
    if (cmd && strcmp(cmd, "compile") && strcmp(cmd, "best"))
        usage_error("unknown command '%s'", cmd);

    /* Options shared by tuning, compile and best. */
    tune_opts o = {0};
    o.db_path = "redtune.db";
    o.jobs = pool_cores();
    o.seed = (unsigned long long)time(NULL);
    o.type = RT_F32;
    int have_op = 0;
    long long sizes[MAX_SIZES], n_filter = 0;
    const char *arch = NULL, *device_match = NULL, *op_name = NULL, *type_name = NULL;
    const char *op_file = NULL;
    int best = cmd && !strcmp(cmd, "best");
    for (int i = cmd ? 2 : 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        if (!strcmp(a, "--op")) {
            op_name = optarg_of(argc, argv, &i);
            if (!best || optype_parse_op(op_name) >= 0)   /* best: a user operator's name too */
                o.op = want_op(op_name);
            have_op = 1;
        } else if (!strcmp(a, "--op-file")) {
            op_file = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--family") && !best) {
            o.families = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--type")) {
            type_name = optarg_of(argc, argv, &i);
            o.type = want_type(type_name);
        } else if (!strcmp(a, "--device") && cmd && !strcmp(cmd, "best")) {
            device_match = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--device") && !cmd) {
            if (parse_int(optarg_of(argc, argv, &i), 0, 1023, &v))
                usage_error("--device wants a GPU ordinal, not '%s'", argv[i]);
            o.device = (int)v;
        } else if (!strcmp(a, "--sizes") && !cmd) {
            char *list = strdup(optarg_of(argc, argv, &i)), *save = NULL;
            o.nsizes = 0;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o.nsizes == MAX_SIZES || parse_size(t, &sizes[o.nsizes]))
                    usage_error("--sizes: '%s' is not a size (1000, 2^20, 4M; up to 2^40, 64 of them)", t);
                o.nsizes++;
            }
            free(list);
            if (o.nsizes == 0)
                usage_error("--sizes: empty list%s", "");
        } else if (!strcmp(a, "--space") && (!cmd || !strcmp(cmd, "compile"))) {
            o.space_path = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--db") && (!cmd || !strcmp(cmd, "best"))) {
            o.db_path = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--hot") && !cmd) {
            o.hot = 1;
        } else if (!strcmp(a, "--jobs") && (!cmd || !strcmp(cmd, "compile"))) {
            if (parse_int(optarg_of(argc, argv, &i), 1, 1024, &v))
                usage_error("--jobs wants a number of threads, not '%s'", argv[i]);
            o.jobs = (int)v;
        } else if (!strcmp(a, "--seed") && !cmd) {
            if (parse_int(optarg_of(argc, argv, &i), 0, LLONG_MAX, &v))
                usage_error("--seed wants a non-negative integer, not '%s'", argv[i]);
            o.seed = (unsigned long long)v;
        } else if (!strcmp(a, "--arch") && cmd && !strcmp(cmd, "compile")) {
            arch = optarg_of(argc, argv, &i);
        } else if (!strcmp(a, "--n") && cmd && !strcmp(cmd, "best")) {
            if (parse_size(optarg_of(argc, argv, &i), &n_filter))
                usage_error("--n: '%s' is not a size", argv[i]);
        } else if (!strcmp(a, "--segmented") && (!cmd || !strcmp(cmd, "compile"))) {
            const char *l = optarg_of(argc, argv, &i);
            o.layout = segdata_parse_layout(l);
            if (o.layout <= SEG_LAYOUT_FLAT)
                usage_error("--segmented: '%s' is not a layout (keys, offsets)", l);
        } else if (!strcmp(a, "--profiles") && !cmd) {
            char *list = strdup(optarg_of(argc, argv, &i)), *save = NULL;
            o.nprofiles = 0;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int p = segdata_parse_profile(t);
                if (p < 0) {
                    fprintf(stderr, "redtune: --profiles: unknown profile '%s' (known: %s)\n"
                            "(see redtune --help)\n", t, segdata_profile_list());
                    exit(2);
                }
                if (o.nprofiles == TUNE_MAX_PROFILES)
                    usage_error("--profiles: more than %s profiles", "8");
                o.profiles[o.nprofiles++] = p;
            }
            free(list);
            if (o.nprofiles == 0)
                usage_error("--profiles: empty list%s", "");
        } else if (!strcmp(a, "--off64") && !cmd) {
            o.off64 = 1;
        } else if (!strcmp(a, "--deterministic") && !cmd) {
            o.deterministic = 1;
        } else if (!strcmp(a, "-v")) {
            o.verbose = 1;
        } else if (a[0] == '-') {
            usage_error("unknown option '%s'", a);
        } else {
            usage_error("unexpected argument '%s'", a);
        }
    }

    if (op_file) {
        o.user = want_user(op_file, op_name ? "--op" : NULL);
        check_type(o.user, type_name);
        op_name = o.user->op.name;
        have_op = 1;
    }
    if (o.families && !best)
        check_families(o.families, o.user);

    int rc;
    if (cmd && !strcmp(cmd, "compile")) {
        if (!have_op)
            o.op = RT_MIN;
        rc = cmd_compile(arch, &o, &e);
    } else if (cmd) {
        rc = cmd_best(o.db_path, device_match, op_name, type_name, n_filter, &e);
    } else {
        if (!have_op)
            usage_error("%s", "which operator? --op is required (sum, prod, min, max, argmin, "
                        "argmax), or --op-file FILE");
        if ((o.nprofiles || o.off64) && o.layout == SEG_LAYOUT_FLAT)
            usage_error("%s", "--profiles and --off64 go with --segmented keys|offsets");
        if (o.user && o.layout != SEG_LAYOUT_FLAT)
            usage_error("%s", "--segmented tunes the built-in operators; user operators "
                        "(--op-file) are tuned unsegmented");
        if (o.nsizes == 0 && o.layout != SEG_LAYOUT_FLAT) {
            /* The paper's segmented experiments use 30 x 2^20 elements. */
            static const long long seg_sizes[] = {1LL << 14, 1LL << 18, 1LL << 22, 30LL << 20};
            for (int k = 0; k < 4; k++)
                sizes[o.nsizes++] = seg_sizes[k];
        }
        if (o.nsizes == 0)
            for (int k = 10; k <= 30; k += 2)
                sizes[o.nsizes++] = 1LL << k;
        if (o.layout != SEG_LAYOUT_FLAT && o.nprofiles == 0)
            for (int p = 0; p < segdata_profile_count() && p < TUNE_MAX_PROFILES; p++)
                o.profiles[o.nprofiles++] = p;
        o.sizes = sizes;
        char cmdline[2048] = "";
        for (int i = 0; i < argc; i++) {
            size_t used = strlen(cmdline);
            snprintf(cmdline + used, sizeof cmdline - used, "%s%s", i ? " " : "", argv[i]);
        }
        o.cmdline = cmdline;
        o.self_exe = self_exe(argv[0]);
        rc = tune_run(&o, &e);
    }
    if (rc)
        fail(&e);
    opfile_free(&user_op);
    return 0;
}
