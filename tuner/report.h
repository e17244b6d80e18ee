/*
 * report.h - what a tuning run shows: the progress line on stderr (one line rewritten on a
 * terminal, a line every 10 s otherwise) and the table of winners on stdout.
 */
#ifndef RT_REPORT_H
#define RT_REPORT_H

#include <stddef.h>
#include "../runtime/err.h"
#include "../runtime/store.h"
#include "tune.h"

/* Seconds on the monotonic clock. */
double report_now(void);

/* "2^20" for a power of two, else the number. */
void report_fmt_n(long long n, char *buf, size_t len);

/* "flat", or "keys:PROFILE" / "offsets:PROFILE" for the pi-th profile of 'o': the layout
 * column of the database and the table. */
void report_layout(const tune_opts *o, int pi, char *buf, size_t len);

/* The progress of a run: candidates done (measured or skipped) of the total, and how many
 * were measured, from which the time left is estimated. */
typedef struct progress {
    double t0, last;
    int tty;
    long done, total, measured;
    long compiled, failed;      /* candidates compiled as they were picked, and failures */
    double compile_s;           /* the time that took (not the sweep's) */
    /* Where the sweep's time went (tune.c prints it): the cases' data made and copied, the
     * worker's loads and checks of candidates, its timing of them, the database's writes,
     * and the whole of the calls to the worker (the three and the messages between). */
    double data_s, check_s, timing_s, store_s, call_s;
} progress;

/* Show "WHAT  done/total  elapsed T  left ~T", at most every 0.2 s on a terminal and every
 * 10 s otherwise, unless 'force'. */
void report_progress(progress *p, const char *what, int force);

/* Erase the progress line on a terminal, before another line is printed. */
void report_progress_clear(progress *p);

/* The winners of the run's cases, a table per layout: 'o' gives the case and the sizes,
 * 'dev' and 'arch' the device, 'read_gbps' the yardstick of the heading. */
int report_table(store *s, const tune_opts *o, const char *op, const char *type,
                 const rt_device *dev, const char *arch, double read_gbps, rt_err *e);

#endif
