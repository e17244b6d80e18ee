/*
 * cli.h - the redtune program's command line: argv into a cli_args, with no exit(), no output
 * and no file opened, so that main.c (the only file that exits) and a fuzzer share one parser.
 */
#ifndef RT_CLI_H
#define RT_CLI_H

#include "tuner.h"

typedef enum cli_cmd {
    CLI_TUNE,       /* redtune --op ...: no command word */
    CLI_EMIT,
    CLI_COMPILE,
    CLI_FAMILIES,
    CLI_BEST,
    CLI_EXPORT,
    CLI_MERGE,
    CLI_DUMP,
    CLI_LOAD,
    CLI_REDUCE,
    CLI_MEASUREMENTS, /* every measurement, as best lists winners (tuner/results.c) */
    CLI_REPORT,     /* the HTML report (tuner/report_html.c) */
    CLI_REPLAY,     /* a strategy replayed over stored measurements (tuner/replay.c) */
    CLI_WORKER,     /* the tuner's own exec of itself; takes no arguments */
    CLI_HELP,
    CLI_VERSION
} cli_cmd;

#define CLI_MAX_SIZES 64
#define CLI_MAX_DEVICES 64

/*
 * Everything the command line says. Strings point into argv; 'files' and 'match' are
 * malloc'd (cli_free). What needs a file to decide (an --op-file's type and commutativity
 * against --type and --family) is left to the caller, which loads the file.
 */
typedef struct cli_args {
    cli_cmd cmd;
    const char *name;            /* the command word ("export"); "redtune" for tuning */
    int have_op;                 /* --op given (or compile's default, min) */
    const char *op_name;         /* --op as given; best: any name, a user operator's too */
    const char *type_name;       /* --type as given; NULL when absent */
    const char *acc_name;        /* tuning, reduce: --acc TYPE as given; NULL when absent */
    const char *result_name;     /* --result acc|element as given; NULL when absent; the
                                  * spec they make with --type is in tune.type and
                                  * reduce.type (checked with optype_resolve) */
    const char *op_file;         /* --op-file; NULL when absent */
    tune_opts tune;              /* tuning and compile: all but user, sizes, jobs when 0 (all
                                  * cores), seed unless have_seed, cmdline, self_exe */
    long long sizes[CLI_MAX_SIZES];   /* tune.nsizes of them; tune.sizes is left NULL */
    int have_seed;
    const char *arch;            /* compile --arch, checked: sm_XY with a known major */
    const char *device_match;    /* best, measurements, report --device */
    long long n_filter;          /* best, measurements --n; 0: every size */
    int format;                  /* best, measurements --format: a results_format */
    rt_config cfg;               /* emit: the family's config with the NAME=VALUE given */
    const char *db;              /* --db; NULL: the command's default */
    const char *out;             /* -o / --output */
    int force;
    int with_measurements;       /* export */
    const char **files;          /* merge, dump, load, replay: the input files; malloc'd */
    int nfiles;
    const char **match;          /* export --match (a list: may repeat); malloc'd */
    int nmatch;
    const char **peers;          /* report --peers (a list: may repeat); malloc'd */
    int npeers;
    reduce_opts reduce;          /* reduce: all but user_op */
    const char *cases_from;      /* --cases-from: a capture file's cases (tuner/cases.c) */
    const char *judge;           /* replay --judge FILE: another sweep of the same cases */
    const char *prior;           /* replay --prior FILE: winners of another tuning (a database) */
    const char *device_arg;      /* tuning's --device as given; NULL when absent */
    int devices[CLI_MAX_DEVICES];   /* tuning's --device LIST: distinct ordinals, in order */
    int ndevices;
    int device_all;              /* --device all */
    int split;                   /* --split: identical GPUs share the cases */
    int axis;                    /* --axis: reductions along an axis (tune.shapes) */
    int axis_shapes_given;       /* --shapes (tune.nshapes of them; none: main.c's defaults) */
    int segmented;               /* --segmented given */
} cli_args;

/*
 * Parse argv[0..argc) (argv[0] the program). RT_OK, or RT_EINVAL for a usage error (exit 2:
 * an unknown, abbreviated, repeated or valueless option, a bad value, an extra argument,
 * options that conflict), or another RT_E* for a failure (a template family that does not
 * parse: exit 1), with e's message naming the option as given and ending in a "(see redtune
 * ...)" line for usage errors. 'a' is filled as far as parsing got; cli_free it either way.
 * Resets getopt's state first, so it may be called any number of times.
 */
int cli_parse(int argc, char **argv, cli_args *a, rt_err *e);

/* Free what cli_parse allocated; a zeroed cli_args is a harmless no-op. */
void cli_free(cli_args *a);

/*
 * The sizes a tuning run takes without --sizes, into out[0..max): flat (segmented = 0) every
 * power of two 2^4 .. 2^14, then every second one to 2^30; segmented 2^14, 2^18, 2^22 and
 * 30 x 2^20. Returns how many (at most max).
 */
int cli_default_sizes(int segmented, long long *out, int max);

#endif
