/*
 * cases.h - `redtune --cases-from FILE`: a capture file of libredtune (REDTUNE_CAPTURE,
 * docs/api.md) read and checked, and turned into the tuning runs that cover its cases.
 */
#ifndef RT_CASES_H
#define RT_CASES_H

#include "../runtime/codegen.h"
#include "../runtime/family.h"
#include "tune.h"

/* One case of the file. */
typedef struct cases_line {
    int line;                      /* its line number, from 1 */
    char op[RT_NAME_MAX];
    int builtin;                   /* 1: op_id is a built-in operator; 0: a user operator */
    rt_op op_id;
    rt_type type;
    int layout;                    /* SEG_LAYOUT_* */
    long long n, nseg;             /* nseg 0 for flat; axis: n = O*L*I, nseg = O*I */
    axis_shape shape;              /* layout axis: the shape of "axis:OxLxI" */
    char fingerprint[RT_USER_OP_ID];   /* a user operator's definition; "" for built-ins */
} cases_line;

/* One tuning run, as `redtune --op OP --type T --sizes LIST [--segmented L --profiles P
 * [--off64]]` or `redtune --op OP --type T --axis --shapes LIST` would make it. */
typedef struct cases_run {
    rt_op op;
    rt_type type;
    int layout;
    int off64;
    int profiles[TUNE_MAX_PROFILES];
    int nprofiles;
    long long *sizes;              /* ascending, distinct; malloc'd */
    int nsizes;
    axis_shape shapes[TUNE_MAX_SHAPES];   /* layout axis: the shapes, distinct, as met */
    int nshapes;
} cases_run;

typedef struct cases_plan {
    cases_run *runs;
    int nruns;
    int ncases;                    /* the cases the runs cover */
    int nskipped;                  /* user operators' cases, left to --op-file runs */
} cases_plan;

/*
 * Read the capture file 'path' whole: *lines (malloc'd, *count of them) in file order.
 * Lines starting with '#' are comments (the header may recur: two processes that found the
 * file empty both write it); a last line without its newline (a process killed while
 * writing) is skipped with a note. RT_OK; RT_EIO when the file cannot be read, RT_EINVAL
 * when it is not a capture file or a line is bad ("FILE:LINE: ..."); RT_ENOMEM. Notes
 * (warnings, one per line, with their newline) are appended to *notes (malloc'd; may be set
 * on failure too).
 */
int cases_parse(const char *path, cases_line **lines, int *count, char **notes, rt_err *e);

/*
 * The runs that tune these cases: one per (op, type, layout), the sizes merged and made
 * distinct (axis cases: the shapes, up to TUNE_MAX_SHAPES a run, more in further runs); a segmented case tunes the profile nearest to its mean segment length (heavy,
 * told apart by its spread, which a capture does not see, is never chosen), offsets of
 * n >= 2^31 with 64-bit offsets. A user operator's cases need its file (--op-file): they are
 * counted in nskipped and named in *notes with the command that tunes them. Notes say how
 * each segmented case was mapped. RT_OK or RT_ENOMEM.
 */
int cases_plan_make(const cases_line *lines, int count, cases_plan *p, char **notes, rt_err *e);
void cases_plan_free(cases_plan *p);

/* The command line of run r ("--op sum --type f32 --sizes 1000,4096"), for messages. */
void cases_run_text(const cases_run *r, char *buf, size_t len);

#endif
