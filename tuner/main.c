/*
 * main.c - the redtune program: arguments, printing, exit codes. The only file that exits.
 *
 * Exit codes: 0 success, 1 failure (with a message), 2 usage error, 3 an input database or dump
 * was refused, 4 `reduce`'s data files were refused (their sizes, or what --check found), or
 * `--cases-from`'s capture file was (unreadable, not a capture file, a bad line).
 * The command line itself is parsed by cli.c, which neither prints nor exits.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../runtime/optype.h"
#include "cases.h"
#include "cli.h"
#include "devices.h"
#include "opfile.h"
#include "pool.h"
#include "proto.h"
#include "replay.h"
#include "results.h"
#include "segdata.h"
#include "tuner.h"

/* The --op-file operator; static, so that it is reachable (not a leak) when exit() ends. */
static opfile user_op;

static const char usage_text[] =
    "usage: redtune [--device N|LIST|all [--split]] (--op OP [--type T] | --op-file FILE)\n"
    "               [--acc T] [--result acc|element]\n"
    "               [--sizes LIST] [--space FILE] [--family LIST] [--db FILE] [--hot]\n"
    "               [--deterministic]\n"
    "               [--jobs N] [--seed S] [-v]\n"
    "               [--strategy NAME] [--budget N|Ns|P%[,N]] [--strategy-seed S]\n"
    "               [--segmented keys|offsets [--profiles LIST] [--off64]]\n"
    "               [--axis [--shapes O,L,I;O,L,I...]]\n"
    "       redtune emit FAMILY [NAME=VALUE ...] [--op OP] [--type T] [--op-file FILE]\n"
    "               [--acc T] [--result acc|element|index]\n"
    "       redtune compile [--arch sm_XY] [--space FILE] [--family LIST] [--op OP] [--type T]\n"
    "               [--acc T] [--result acc|element|index]\n"
    "               [--op-file FILE] [--segmented keys|offsets [--off64]] [--jobs N]\n"
    "               [--db FILE] [-v]\n"
    "               [--axis [--shapes O,L,I;...]]\n"
    "       redtune families\n"
    "       redtune best [--db FILE] [--op NAME | --op-file FILE] [--type T] [--acc T] [--n N]\n"
    "               [--device NAME] [--format table|csv|json]\n"
    "       redtune measurements [--db FILE] [--op NAME | --op-file FILE] [--type T] [--acc T]\n"
    "               [--n N] [--device NAME] [--format table|csv|json]\n"
    "       redtune report [--db FILE] [--device NAME] [--peers FILE.csv ...] -o FILE.html\n"
    "               [--force]\n"
    "       redtune replay FILE [FILE ...] [--strategy NAME] [--budget N|P%[,N]]\n"
    "               [--strategy-seed S] [--op NAME] [--type T] [--format table|csv] [-v]\n"
    "               [--judge FILE] [--prior FILE.db]\n"
    "       redtune export [--db FILE] --match NAME [--match NAME ...] [--with-measurements]\n"
    "                      -o FILE [--force]\n"
    "       redtune merge FILE FILE [...] -o FILE [--force]\n"
    "       redtune dump [FILE] [-o FILE.sql] [--force]\n"
    "       redtune load [FILE.sql ...] -o FILE [--force]\n"
    "       redtune reduce (--op OP [--type T] | --op-file FILE) --in FILE\n"
    "               [--acc T] [--result acc|element|index]\n"
    "               [--keys FILE | --offsets FILE [--off64]]\n"
    "               [--nseg N] [--db FILE] [--device N] [--check] [-o FILE [--force]]\n"
    "               [--explain] [--shape OUTER,LEN,INNER]\n"
    "       redtune --cases-from FILE [--device N|LIST|all [--split]] [--db FILE]\n"
    "               [--space FILE] [--family LIST] [--hot] [--deterministic] [--jobs N]\n"
    "               [--seed S] [-v]\n"
    "       redtune --help | --version\n"
    "\n"
    "Tunes GPU parallel reductions: every config of a Lua search space is generated from a\n"
    "template, compiled with NVRTC, verified against a CPU reference and timed on the GPU; every\n"
    "measurement and the best config per size go into an SQLite database.\n"
    "\n"
    "  --device N     GPU ordinal (default 0); tuning also takes a list (0,2,3) or all:\n"
    "                 each GPU tuned in its own process, concurrently, into the one\n"
    "                 database, its output lines prefixed [gpu N] (docs/tuning.md)\n"
    "  --split        with a list or all: identical GPUs (name, compute capability,\n"
    "                 SMs, memory clock and bus width) share the cases, each taking\n"
    "                 every k-th, its results under its own device\n"
    "  --op OP        operator: sum, prod, min, max, argmin, argmax, amax, asum, sumsq,\n"
    "                 norm2, mean, var_mean, var_mean_sample, std_mean, std_mean_sample\n"
    "                 (docs/ops.md)\n"
    "  --type T       element type: f32 (default), f64, i32, u32, i64, u64, f16, bf16, i8, u8\n"
    "  --acc T        accumulate in type T (default: the operator's, e.g. f32 for a sum of\n"
    "                 bf16); a pair the operator does not define is a usage error\n"
    "  --result R     acc (default: the result in the accumulator's type) or element (the\n"
    "                 result converted to the element type); emit, compile and reduce take\n"
    "                 index (argmin/argmax: the 8-byte index alone, RT_RESULT_INDEX, run\n"
    "                 with the winners of the {value, index} result; not tuned)\n"
    "  --op-file FILE a user-defined operator: a Lua file naming its type, identity, CUDA\n"
    "                 combine and whether it commutes (docs/ops.md)\n"
    "  --sizes LIST   comma-separated sizes: 1000, 2^20, 4M, 1G (default 2^4,2^5,...,2^14,\n"
    "                 2^16,2^18,...,2^30)\n"
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
    "  --axis         tune reductions along an axis: [outer, len, inner] reduced along len\n"
    "                 (docs/axis.md); default space lua/spaces/axis.lua; not with --sizes,\n"
    "                 --segmented, --profiles, --off64 or --op-file\n"
    "  --shapes LIST  the shapes of --axis, O,L,I (or OxLxI) separated by ';' (quote it),\n"
    "                 up to 32; default rows 1048576x16x1, 65536x128x1, 4096x4096x1,\n"
    "                 16x4194304x1, 32768x1024x1, columns 1x1048576x16, 1x65536x128,\n"
    "                 1x4096x4096, 1x16x4194304, 1x32768x1024 and 3-D 64x2048x512\n"
    "  -v             print every measurement\n"
    "  --cases-from FILE  tune the cases a capture file of libredtune lists (REDTUNE_CAPTURE,\n"
    "                 docs/api.md): one run per operator, type and layout, sizes merged;\n"
    "                 segmented cases as the profile nearest in mean segment length\n"
    "  --strategy S   which configs of each case are timed: exhaustive (default: all of\n"
    "                 them), random (a seeded sample), halving (all briefly, then the best\n"
    "                 third again with more repetitions, to a final full timing of the last\n"
    "                 three), local (from the best known config, of this case or a similar\n"
    "                 one, to a local optimum among configs that differ in one parameter by\n"
    "                 one step of the space, and the nearest of every other family)\n"
    "  --budget B     per case (each size and profile): B configs at most (200), or B\n"
    "                 seconds (60s, 5m) after which the case ends (halving first gives its\n"
    "                 leader a full timing), or B percent of the case's configs, rounded up\n"
    "                 (20%: halving's first round; 12%,6: at least 6); default: no limit\n"
    "  --strategy-seed S  seed of random's and halving's draws (default 1), apart from the\n"
    "                 data's --seed\n"
    "\n"
    "Options and arguments come in any order; --name=VALUE is --name VALUE; -- ends the\n"
    "options. Names are never abbreviated; an option with one value may be given once\n"
    "(--match and --peers may repeat).\n"
    "\n"
    "  export         the devices whose name holds a --match (any case), with their best\n"
    "                 entries, kernels and CUBINs (and measurements with --with-measurements)\n"
    "  merge          databases of several machines in one (the faster verified result wins)\n"
    "  dump           a database as SQL text that diffs (stdout, or -o FILE)\n"
    "  load           the database of dumps (none: an empty database)\n"
    "  -o FILE        the output, written whole or not at all\n"
    "  --force        replace an existing output\n"
    "\n"
    "  best           the winner of each case; measurements: every measurement (failed\n"
    "                 ones too); --device NAME a part of the device name (any case);\n"
    "                 --acc T the rows accumulated in T;\n"
    "                 --format table (default), csv (RFC 4180, a header row) or json\n"
    "                 (docs/results-format.md)\n"
    "  report         an HTML file with inline SVG charts per device and case: GB/s\n"
    "                 against n, the winners, each family's spread, the read bandwidth;\n"
    "                 --peers FILE.csv (may repeat) a bench's CSV (redtune_bench, its\n"
    "                 --every-n and --axis, bench/torch_axis.py): CUB's and PyTorch's times\n"
    "                 on the same device and case, drawn beside the winners\n"
    "  replay         a strategy and budget run again, without a GPU, over the measurements\n"
    "                 of exhaustive runs (databases, or CSVs of measurements --format csv):\n"
    "                 per case the config it would choose against the best of all, and the\n"
    "                 share of configs it timed (docs/tuning.md); --judge FILE another\n"
    "                 sweep of the same cases, where each chosen config is timed against\n"
    "                 that sweep's best; --prior FILE.db a database whose winners (a similar\n"
    "                 GPU's) local search starts from, as a tuning into a copy of it would\n"
    "\n"
    "  reduce         reduce raw little-endian files on the GPU with the tuned kernel\n"
    "                 (libredtune): --in the values of --type; --keys u32 segment keys, one\n"
    "                 per value, or --offsets i32 CSR offsets (i64 with --off64); --nseg the\n"
    "                 segments (keys: default the largest key + 1; offsets: their count - 1,\n"
    "                 which --nseg must match); --db default: libredtune's search\n"
    "                 ($REDTUNE_DB, ./redtune.db, beside the program, installed); --check\n"
    "                 validates keys or offsets on the host first (else bad ones give\n"
    "                 unspecified results, never a fault); -o FILE writes the raw results\n"
    "                 (whole or not at all; an existing FILE only with --force), each of\n"
    "                 the result type (--acc, --result; argmin/argmax 16 bytes, value and\n"
    "                 index at 8, or 8 with --result index; var/std_mean two values), else\n"
    "                 one per line on stdout (argmin/argmax: value index, or the index;\n"
    "                 var/std_mean: var-or-std mean);\n"
    "                 --explain prints which kernel and why first; --shape O,L,I reads\n"
    "                 the values as a row-major [O, L, I] tensor (O*L*I of them) and\n"
    "                 reduces along L into O*I results (rt_reduce_axis, docs/axis.md)\n"
    "\n"
    "Exit status, the same for every command: 0 success; 1 failure (a bad space or operator\n"
    "file, a data file that cannot be read, an output that exists without --force or cannot\n"
    "be written, no GPU); 2 usage error (an unknown, repeated or abbreviated option, a\n"
    "missing or bad value, an empty file name, an extra argument); 3 an input database or\n"
    "dump was refused (missing, a directory, FIFO or unreadable file, not redtune's,\n"
    "corrupt, of a newer schema, or locked for over 10 s); 4 reduce's data was refused (an\n"
    "empty file, a size that is no whole number of elements, counts that disagree, or\n"
    "--check failed), or --cases-from's file was (unreadable, not a capture file, a bad\n"
    "line: FILE:LINE names it; nothing is tuned). Tuning's --device: 2 for an ordinal that is\n"
    "no GPU of this machine (nothing tuned); with a list or all, else the highest exit status\n"
    "of the GPUs' runs (a run killed by a signal counts as 1): 0 when every GPU's run\n"
    "completed, 1 when one failed (its lines and a closing line name it; the others ran to\n"
    "their end).\n";

/* The parsed command line; static, so that what it holds is reachable when exit() ends. */
static cli_args args;

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("redtune: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(code);
}

static void fail(const rt_err *e)
{
    die(1, "%s", e->msg);
}

/* Said once, however many connections wait. */
static void wait_notice(const char *path, int timeout_ms)
{
    static int said;
    if (!said++)
        fprintf(stderr, "redtune: %s: waiting for another process's lock on it (up to %d s)\n",
                path, timeout_ms / 1000);
}

/* An input database or dump that is a directory, a FIFO or another file that is not regular,
 * or that cannot be read, is refused (exit 3, as every refused input) before anything opens
 * it: opening a FIFO would block. A missing file is left to the command, which knows whether
 * it may create it. */
static void check_input(const char *path, const char *what)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode))
        die(3, "%s: is a directory, not a %s", path, what);
    if (!S_ISREG(st.st_mode))
        die(3, "%s: not a regular file", path);
    if (access(path, R_OK) != 0)
        die(3, "%s: cannot read: %s", path, strerror(errno));
}

/* Load the --op-file operator; a bad file is a failure (exit 1), as a bad space is. */
static const opfile *want_user(const char *path)
{
    rt_err e;
    opfile_free(&user_op);   /* a second --op-file replaces the first */
    if (opfile_load(path, &user_op, &e))
        fail(&e);
    return &user_op;
}

/* --family LIST (its names already checked) with a non-commutative operator: at least one
 * family that keeps the order, else the user asked for nothing that can be tuned (exit 2). */
static void check_families(const char *list, const opfile *user)
{
    if (!list || !user || user->op.commutative)
        return;
    int ordered = 0, many = strchr(list, ',') != NULL;
    char *copy = strdup(list), *save = NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
        ordered += !family_find(t)->needs_commutative;
    free(copy);
    if (ordered)
        return;
    die(2, "--family %s: %s a commutative operator, and '%s' (%s) is not commutative\n(see "
        "redtune families: those that need no commutative operator keep the order)", list,
        many ? "these families need" : "the family needs", user->op.name, user->op.file);
}

/* --type with --op-file: the file names the type; another one on the command line is an
 * error, not an override. */
static void check_type(const opfile *user, const char *type_name)
{
    if (user && type_name && optype_parse_type(type_name) != (int)user->op.type)
        die(2, "--type %s: the operator file %s says type %s\n(see redtune --help)", type_name,
            user->op.file, rt_type_name(user->op.type));
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

static int main_emit(cli_args *a)
{
    const opfile *user = a->op_file ? want_user(a->op_file) : NULL;
    const rt_family *f = a->cfg.family;
    check_type(user, a->type_name);
    if (user && !user->op.commutative && f->needs_commutative)
        die(2, "emit %s: the family needs a commutative operator, and '%s' (%s) is not "
            "commutative\n(see redtune families)", f->name, user->op.name, user->op.file);
    rt_err e;
    rt_clearerr(&e);
    int rc = cmd_emit(&a->cfg, a->have_op ? a->tune.op : RT_SUM, a->tune.type, user, &e);
    opfile_free(&user_op);
    if (rc)
        fail(&e);
    return 0;
}

/* export, merge, dump, load: exit 3 when an input was refused. */
static int main_ship(cli_args *a)
{
    rt_err e;
    store_ship_stats st;
    int rc;
    const char *db = a->db ? a->db : a->nfiles ? a->files[0] : "redtune.db";
    if (a->cmd == CLI_EXPORT || a->cmd == CLI_DUMP)
        check_input(db, "database");
    for (int i = 0; a->cmd != CLI_EXPORT && a->cmd != CLI_DUMP && i < a->nfiles; i++)
        check_input(a->files[i], a->cmd == CLI_LOAD ? "dump" : "database");
    rt_clearerr(&e);
    memset(&st, 0, sizeof st);
    if (a->cmd == CLI_EXPORT)
        rc = cmd_export(db, a->match, a->nmatch, a->with_measurements, a->out, a->force, &st,
                        &e);
    else if (a->cmd == CLI_MERGE)
        rc = cmd_merge(a->files, a->nfiles, a->out, a->force, &st, &e);
    else if (a->cmd == CLI_LOAD)
        rc = cmd_load(a->files, a->nfiles, a->out, a->force, &st, &e);
    else
        rc = cmd_dump(db, a->out, a->force, &st, &e);
    if (rc)
        die(st.refused ? 3 : 1, "%s", e.msg);
    return 0;
}

/* reduce: exit 3 when the database was refused, 4 when the data files were. */
static int main_reduce(cli_args *a)
{
    reduce_opts *o = &a->reduce;
    if (a->op_file) {
        o->user_op = &want_user(a->op_file)->op;
        check_type(&user_op, a->type_name);
        o->type = o->user_op->type;
    }
    if (o->db)
        check_input(o->db, "database");
    rt_err e;
    int refused;
    rt_clearerr(&e);
    int rc = cmd_reduce(o, &refused, &e);
    opfile_free(&user_op);
    if (rc)
        die(refused == REDUCE_BAD_DB ? 3 : refused == REDUCE_BAD_DATA ? 4 : 1, "%s", e.msg);
    return 0;
}

/* --cases-from FILE: the file read and planned whole first (refused: exit 4, nothing tuned),
 * then one tuning run per (operator, type, layout), as `redtune --op ...` would make it. */
static int tune_cases(cli_args *a, tune_opts *o, rt_err *e)
{
    cases_line *lines = NULL;
    cases_plan plan;
    char *notes = NULL;
    int count = 0, rc = cases_parse(a->cases_from, &lines, &count, &notes, e);
    memset(&plan, 0, sizeof plan);
    if (rc == RT_OK)
        rc = cases_plan_make(lines, count, &plan, &notes, e);
    free(lines);
    for (char *p = notes, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        fprintf(stderr, "redtune: %.*s\n", (int)(nl - p), p);
    }
    free(notes);
    if (rc)
        die(rc == RT_ENOMEM ? 1 : 4, "%s", e->msg);
    printf("redtune: %s: %d cases in %d tuning runs\n", a->cases_from, plan.ncases, plan.nruns);
    for (int i = 0; i < plan.nruns && rc == RT_OK; i++) {
        const cases_run *r = &plan.runs[i];
        char text[1024];
        cases_run_text(r, text, sizeof text);
        printf("redtune: run %d of %d: redtune %s\n", i + 1, plan.nruns, text);
        o->op = r->op;
        o->type = r->type;
        o->layout = r->layout;
        o->off64 = r->off64;
        o->nprofiles = r->nprofiles;
        memcpy(o->profiles, r->profiles, sizeof o->profiles);
        o->sizes = r->sizes;
        o->nsizes = r->nsizes;
        o->nshapes = r->nshapes;
        memcpy(o->shapes, r->shapes, sizeof o->shapes);
        rc = tune_run(o, e);
    }
    cases_plan_free(&plan);
    return rc;
}

/* One GPU's run of `--device LIST|all`, in its child process (devices.c): its exit status. */
static int run_one_device(tune_opts *o, void *arg, rt_err *e)
{
    cli_args *a = arg;
    return (a->cases_from ? tune_cases(a, o, e) : tune_run(o, e)) ? 1 : 0;
}

/* --device LIST|all: the GPUs checked against the machine's (exit 2 for one it does not
 * have, before anything is written), then one process per GPU; the exit status is the
 * worst of theirs. A single ordinal is checked too, then left to this process to tune, as
 * it always was (-1). */
static int tune_devices(cli_args *a, tune_opts *o)
{
    static devices_plan plan;   /* 24 KiB of device records */
    rt_err e;
    int worst = 0;
    rt_clearerr(&e);
    int rc = devices_plan_make(o->self_exe, a->devices, a->ndevices, a->device_all, a->split,
                               a->device_arg, &plan, &e);
    if (rc)
        die(rc == RT_EINVAL ? 2 : 1, "%s", e.msg);
    if (!a->device_all && a->ndevices == 1)
        return -1;   /* one GPU, named: this process tunes it */
    if ((rc = devices_tune(o, &plan, run_one_device, a, &worst, &e)))
        fail(&e);
    return worst;
}

/* report: exit 3 when the database was refused. */
static int main_report(cli_args *a)
{
    rt_err e;
    int refused = 0;
    check_input(a->tune.db_path, "database");
    rt_clearerr(&e);
    if (cmd_report(a->tune.db_path, a->device_match, a->out, a->force, a->peers, a->npeers,
                   &refused, &e))
        die(refused == 1 ? 3 : refused == 2 ? 4 : 1, "%s", e.msg);
    printf("report of %s written into %s\n", a->tune.db_path, a->out);
    return 0;
}

/* replay: exit 3 when a database was refused, 4 when a CSV was. */
static int main_replay(cli_args *a)
{
    rt_err e;
    int refused = 0;
    for (int i = 0; i < a->nfiles; i++)
        check_input(a->files[i], "database or CSV file");
    if (a->judge)
        check_input(a->judge, "database or CSV file");
    if (a->prior)
        check_input(a->prior, "database");
    const tune_opts *o = &a->tune;
    replay_opts r = {a->files, a->nfiles, strategy_find(o->strategy ? o->strategy
                                                                   : STRATEGY_DEFAULT),
                     o->budget, o->budget_pct, o->budget_min, o->strategy_seed,
                     a->op_name, a->type_name, a->format == RESULTS_CSV, o->verbose,
                     a->judge, a->prior};
    rt_clearerr(&e);
    if (replay_run(&r, stdout, &refused, &e))
        die(refused == 1 ? 3 : refused == 2 ? 4 : 1, "%s", e.msg);
    return 0;
}

/* tuning, compile, best, measurements. */
static int main_tune(cli_args *a, int argc, char **argv)
{
    tune_opts *o = &a->tune;
    rt_err e;
    int rc;
    rt_clearerr(&e);
    if (!o->jobs)
        o->jobs = pool_cores();
    if (!a->have_seed)
        o->seed = (unsigned long long)time(NULL);
    if (a->op_file) {
        o->user = want_user(a->op_file);
        check_type(o->user, a->type_name);
        a->op_name = o->user->op.name;
    }
    if (a->cmd != CLI_BEST && a->cmd != CLI_MEASUREMENTS)
        check_families(o->families, o->user);
    if (a->cmd != CLI_COMPILE || a->db)
        check_input(a->cmd == CLI_COMPILE ? a->db : o->db_path, "database");
    if (a->cmd == CLI_TUNE && access(o->db_path, F_OK) == 0) {
        /* An existing --db that is not a redtune database of a schema this build knows is
         * refused (exit 3) before the GPU is touched, as every other command refuses one;
         * a read-only look creates nothing. */
        store *s = NULL;
        if (store_open(o->db_path, STORE_READ, &s, &e))
            die(3, "%s", e.msg);
        store_close(s);
    }

    if (o->layout == SEG_LAYOUT_AXIS && o->nshapes == 0)
        o->nshapes = axisdata_default_shapes(o->shapes, TUNE_MAX_SHAPES);
    if (a->cmd == CLI_COMPILE) {
        rc = cmd_compile(a->arch, o, a->db, &e);
    } else if (a->cmd == CLI_BEST || a->cmd == CLI_MEASUREMENTS) {
        int refused = 0;
        results_filter f = {a->device_match, a->op_name, a->type_name, a->n_filter,
                            a->acc_name};
        if (a->cmd == CLI_BEST && a->format == RESULTS_TABLE)
            rc = cmd_best(o->db_path, a->device_match, a->op_name, a->type_name, a->acc_name,
                          a->n_filter, &refused, &e);
        else
            rc = cmd_results(o->db_path, a->cmd == CLI_BEST, &f, (results_format)a->format,
                             stdout, &refused, &e);
        if (rc)
            die(refused ? 3 : 1, "%s", e.msg);
    } else {
        if (o->nsizes == 0)
            o->nsizes = cli_default_sizes(o->layout != SEG_LAYOUT_FLAT, a->sizes, CLI_MAX_SIZES);
        if (o->layout != SEG_LAYOUT_FLAT && o->nprofiles == 0)
            for (int p = 0; p < segdata_profile_count() && p < TUNE_MAX_PROFILES; p++)
                o->profiles[o->nprofiles++] = p;
        o->sizes = a->sizes;
        char cmdline[2048] = "";
        for (int i = 0; i < argc; i++) {
            size_t used = strlen(cmdline);
            snprintf(cmdline + used, sizeof cmdline - used, "%s%s", i ? " " : "", argv[i]);
        }
        o->cmdline = cmdline;
        o->self_exe = self_exe(argv[0]);
        if (a->device_arg && (rc = tune_devices(a, o)) >= 0) {
            opfile_free(&user_op);
            return rc;
        }
        rc = a->cases_from ? tune_cases(a, o, &e) : tune_run(o, &e);
    }
    if (rc)
        fail(&e);
    opfile_free(&user_op);
    return 0;
}

int main(int argc, char **argv)
{
    rt_err e;
    int rc = cli_parse(argc, argv, &args, &e);
    if (rc)
        die(rc == RT_EINVAL ? 2 : 1, "%s", e.msg);
    switch (args.cmd) {
    case CLI_WORKER:
        return worker_main();
    case CLI_HELP:
        fputs(usage_text, stdout);
        return 0;
    case CLI_VERSION:
        printf("redtune %s\n", RT_VERSION_STRING);
        return 0;
    default:
        break;
    }
    if (family_error())
        die(1, "%s", family_error());
    store_set_wait_notice(wait_notice);
    switch (args.cmd) {
    case CLI_EMIT:
        rc = main_emit(&args);
        break;
    case CLI_FAMILIES:
        rc = cmd_families();
        break;
    case CLI_EXPORT:
    case CLI_MERGE:
    case CLI_DUMP:
    case CLI_LOAD:
        rc = main_ship(&args);
        break;
    case CLI_REDUCE:
        rc = main_reduce(&args);
        break;
    case CLI_REPORT:
        rc = main_report(&args);
        break;
    case CLI_REPLAY:
        rc = main_replay(&args);
        break;
    default:
        rc = main_tune(&args, argc, argv);
        break;
    }
    cli_free(&args);
    return rc;
}
