/*
 * report_int.h - what `redtune report`'s files share: the output text (report_html.c) and
 * the data of one chart, which report_svg.c draws.
 */
#ifndef RT_REPORT_INT_H
#define RT_REPORT_INT_H

#include <stddef.h>
#include "peers.h"

/* ---------------------------------------------------------------- the output text */

typedef struct text {
    char *p;
    size_t len, cap;
    int oom;
} text;

/* Append to t as printf would; out of memory sets t->oom and appends nothing more. */
void report_put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from the database, escaped for XML (element text and quoted attributes). */
void report_put_esc(text *t, const char *s);

/* ---------------------------------------------------------------- the data of one chart */

typedef struct band {      /* one family at one n: its verified configs' GB/s */
    char family[64];
    long long n;
    double lo, hi;
    long long configs;
} band;

typedef struct winner {
    long long n;
    double gbps, us, pct;
    long long nseg;
    double seg_mean;
    char family[64], params[160];
} winner;

#define MAX_FAMILIES 32

typedef struct chart {
    band *bands;             /* ordered by family, n */
    int nbands;
    winner *wins;            /* ordered by n */
    int nwins;
    const char *families[MAX_FAMILIES];   /* those of bands, then winners': their colours */
    int nfamilies;
    const peer_row **peers;  /* the peers' rows of this device and case, by peer, then n */
    int npeers;
} chart;

/* The chart of c as an <svg> element: axes, the families' bands, the peers, the winners, the
 * legend; read_gbps (0: none) draws the device's read bandwidth. */
void report_chart_svg(text *t, chart *c, double read_gbps);

#endif
