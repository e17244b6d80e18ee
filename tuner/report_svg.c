/*
 * report_svg.c - `redtune report`'s charts (report_int.h): GB/s against n on a log2 axis as
 * inline SVG, with the read bandwidth as a dashed line, each family's configs as a band from
 * the slowest to the fastest at each n (the fastest as a line), the winners labelled by
 * family, the peers as dashed lines of open squares, and a legend. Well-formed XML only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"

/* ---------------------------------------------------------------- drawing */

#define W 760      /* the chart's size and its plot area inside the margins */
#define H 380
#define ML 64
#define MR 170
#define MT 46
#define MB 46
#define PW (W - ML - MR)
#define PH (H - MT - MB)

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NPALETTE (int)(sizeof palette / sizeof palette[0])

typedef struct axes {
    double x0, x1;   /* log2 n at the left and right edges */
    double ymax;     /* GB/s at the top */
    double ystep;
} axes;

static double px(const axes *a, long long n)
{
    return ML + (log2((double)n) - a->x0) / (a->x1 - a->x0) * PW;
}

static double py(const axes *a, double gbps)
{
    return MT + PH - gbps / a->ymax * PH;
}

/* A round step (1, 2 or 5 times a power of ten) that cuts 'range' into about five. */
static double nice_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static axes make_axes(const chart *c, double read_gbps)
{
    long long lo = 0, hi = 0;
    double top = read_gbps > 0 ? read_gbps : 0;
    for (int i = 0; i < c->nbands; i++) {
        long long n = c->bands[i].n;
        lo = !lo || n < lo ? n : lo;
        hi = n > hi ? n : hi;
        top = fmax(top, c->bands[i].hi);
    }
    for (int i = 0; i < c->nwins; i++) {
        long long n = c->wins[i].n;
        lo = !lo || n < lo ? n : lo;
        hi = n > hi ? n : hi;
        top = fmax(top, c->wins[i].gbps);
    }
    for (int i = 0; i < c->npeers; i++) {
        long long n = c->peers[i]->n;
        lo = !lo || n < lo ? n : lo;
        hi = n > hi ? n : hi;
        top = fmax(top, c->peers[i]->gbps);
    }
    axes a = {floor(log2((double)(lo ? lo : 1))), ceil(log2((double)(hi ? hi : 2))), 0, 0};
    if (a.x1 - a.x0 < 2) {
        a.x0 -= 1;
        a.x1 += 1;
    }
    top = top > 0 ? top * 1.1 : 100;
    a.ystep = nice_step(top);
    a.ymax = ceil(top / a.ystep) * a.ystep;
    return a;
}

/* The family's place in the chart's list of families (its colour); added when new. */
static int family_index(chart *c, const char *family)
{
    int k = 0;
    while (k < c->nfamilies && strcmp(c->families[k], family))
        k++;
    if (k == c->nfamilies && k < MAX_FAMILIES)
        c->families[c->nfamilies++] = family;
    return k;
}

static const char *family_colour(chart *c, const char *family)
{
    return palette[family_index(c, family) % NPALETTE];
}

static void draw_axes(text *t, const axes *a, double read_gbps)
{
    int every = a->x1 - a->x0 > 16 ? 2 : 1;
    report_put(t, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"plot\"/>\n", ML, MT, PW,
        PH);
    for (double y = 0; y <= a->ymax + 1e-9; y += a->ystep) {
        report_put(t, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
            "<text x=\"%d\" y=\"%.1f\" class=\"ytick\">%g</text>\n", ML, ML + PW, py(a, y),
            py(a, y), ML - 6, py(a, y) + 4, y);
    }
    for (int k = (int)a->x0; k <= (int)a->x1; k += every) {
        double x = ML + (k - a->x0) / (a->x1 - a->x0) * PW;
        report_put(t, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"grid\"/>"
            "<text x=\"%.1f\" y=\"%d\" class=\"xtick\">2<tspan dy=\"-6\" "
            "font-size=\"9\">%d</tspan></text>\n", x, x, MT, MT + PH, x, MT + PH + 16, k);
    }
    report_put(t, "<text x=\"%d\" y=\"%d\" class=\"xlabel\">n (elements, log2 axis)</text>\n"
        "<text x=\"14\" y=\"%d\" class=\"ylabel\" transform=\"rotate(-90 14 %d)\">GB/s</text>\n",
        ML + PW / 2, H - 6, MT + PH / 2, MT + PH / 2);
    if (read_gbps > 0)
        report_put(t, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"read\"/>"
            "<text x=\"%d\" y=\"%.1f\" class=\"readlabel\">read %.0f GB/s</text>\n", ML,
            ML + PW, py(a, read_gbps), py(a, read_gbps), ML + PW - 4, py(a, read_gbps) - 4,
            read_gbps);
}

/* Each family: a band from its slowest to its fastest config at each n, and the fastest as
 * a line, so that a wide band says the parameters matter there. */
static void draw_bands(text *t, chart *c, const axes *a)
{
    for (int i = 0; i < c->nbands;) {
        int j = i;
        while (j < c->nbands && !strcmp(c->bands[j].family, c->bands[i].family))
            j++;
        const char *col = family_colour(c, c->bands[i].family);
        report_put(t, "<g class=\"family\" data-family=\"");
        report_put_esc(t, c->bands[i].family);
        report_put(t, "\"><polygon fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\" points=\"", col);
        for (int k = i; k < j; k++)
            report_put(t, "%.1f,%.1f ", px(a, c->bands[k].n), py(a, c->bands[k].hi));
        for (int k = j - 1; k >= i; k--)
            report_put(t, "%.1f,%.1f ", px(a, c->bands[k].n), py(a, c->bands[k].lo));
        report_put(t, "\"/><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"", col);
        for (int k = i; k < j; k++)
            report_put(t, "%.1f,%.1f ", px(a, c->bands[k].n), py(a, c->bands[k].hi));
        report_put(t, "\"/>\n");
        for (int k = i; k < j; k++) {
            const band *b = &c->bands[k];
            report_put(t, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"3\" stroke-opacity=\"0.5\"><title>", px(a, b->n), px(a, b->n),
                py(a, b->lo), py(a, b->hi), col);
            report_put_esc(t, b->family);
            report_put(t, " at n = %lld: %lld configs, %.1f to %.1f GB/s</title></line>\n", b->n,
                b->configs, b->lo, b->hi);
        }
        report_put(t, "</g>\n");
        i = j;
    }
}

/* The winners: a line through them, each point coloured by its family and labelled where the
 * family changes (every point names its config when hovered). */
static void draw_winners(text *t, chart *c, const axes *a)
{
    if (!c->nwins)
        return;
    report_put(t, "<g class=\"winners\"><polyline fill=\"none\" stroke=\"#000\" stroke-width=\"2\" "
        "points=\"");
    for (int i = 0; i < c->nwins; i++)
        report_put(t, "%.1f,%.1f ", px(a, c->wins[i].n), py(a, c->wins[i].gbps));
    report_put(t, "\"/>\n");
    for (int i = 0; i < c->nwins; i++) {
        const winner *w = &c->wins[i];
        double x = px(a, w->n), y = py(a, w->gbps);
        report_put(t, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"#000\">"
            "<title>n = %lld: ", x, y, family_colour(c, w->family), w->n);
        report_put_esc(t, w->family);
        report_put(t, " ");
        report_put_esc(t, w->params);
        report_put(t, ", %.2f us, %.1f GB/s</title></circle>\n", w->us, w->gbps);
        if (i && !strcmp(w->family, c->wins[i - 1].family))
            continue;
        report_put(t, "<text class=\"wlabel\" transform=\"translate(%.1f %.1f) rotate(-35)\">", x + 3,
            y - 7);
        report_put_esc(t, w->family);
        report_put(t, "</text>\n");
    }
    report_put(t, "</g>\n");
}

/* The peers' colours and dashes, by their place among the chart's peers. */
static const char *const peer_colour[] = {"#555555", "#008b8b", "#b8860b", "#c71585"};
static const char *const peer_dash[] = {"5 3", "2 2", "8 3 2 3", "1 3"};
#define NPEERSTYLE 4

/* The peers: each a dashed line of open squares, a title on each with its time and source. */
static void draw_peers(text *t, const chart *c, const axes *a)
{
    for (int i = 0, p = 0; i < c->npeers; p++) {
        int j = i;
        while (j < c->npeers && !strcmp(c->peers[j]->who, c->peers[i]->who))
            j++;
        const char *col = peer_colour[p % NPEERSTYLE];
        report_put(t, "<g class=\"peer\" data-peer=\"");
        report_put_esc(t, c->peers[i]->who);
        report_put(t, "\"><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"%s\" points=\"", col, peer_dash[p % NPEERSTYLE]);
        for (int k = i; k < j; k++)
            report_put(t, "%.1f,%.1f ", px(a, c->peers[k]->n), py(a, c->peers[k]->gbps));
        report_put(t, "\"/>\n");
        for (int k = i; k < j; k++) {
            const peer_row *r = c->peers[k];
            report_put(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"#fff\" "
                "stroke=\"%s\" stroke-width=\"1.5\"><title>n = %lld: ", px(a, r->n) - 3.5,
                py(a, r->gbps) - 3.5, col, r->n);
            report_put_esc(t, r->who);
            if (r->call[0]) {
                report_put(t, " (");
                report_put_esc(t, r->call);
                report_put(t, ")");
            }
            report_put(t, ", %.2f us, %.1f GB/s; ", r->us, r->gbps);
            report_put_esc(t, r->file);
            report_put(t, ":%d</title></rect>\n", r->line);
        }
        report_put(t, "</g>\n");
        i = j;
    }
}

static void draw_legend(text *t, const chart *c, double read_gbps)
{
    int row = 0, x = ML + PW + 16;
    for (int k = 0; k < c->nfamilies; k++) {
        int y = MT + 8 + 16 * row++;
        report_put(t, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"9\" fill=\"%s\" "
            "fill-opacity=\"0.5\"/><text x=\"%d\" y=\"%d\" class=\"legend\">", x, y - 8,
            palette[k % NPALETTE], x + 20, y);
        report_put_esc(t, c->families[k]);
        report_put(t, "</text>\n");
    }
    int y = MT + 8 + 16 * row++;
    report_put(t, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"2\"/>"
        "<text x=\"%d\" y=\"%d\" class=\"legend\">winner</text>\n", x, x + 14, y - 4, y - 4,
        x + 20, y);
    for (int i = 0, p = 0; i < c->npeers; p++) {
        int j = i;
        while (j < c->npeers && !strcmp(c->peers[j]->who, c->peers[i]->who))
            j++;
        y = MT + 8 + 16 * row++;
        report_put(t, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"%s\"/><text x=\"%d\" y=\"%d\" "
            "class=\"legend\">", x, x + 14, y - 4, y - 4, peer_colour[p % NPEERSTYLE],
            peer_dash[p % NPEERSTYLE], x + 20, y);
        report_put_esc(t, c->peers[i]->who);
        report_put(t, "</text>\n");
        i = j;
    }
    if (read_gbps > 0) {
        y = MT + 8 + 16 * row;
        report_put(t, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" class=\"read\"/>"
            "<text x=\"%d\" y=\"%d\" class=\"legend\">read bandwidth</text>\n", x, x + 14,
            y - 4, y - 4, x + 20, y);
    }
}

void report_chart_svg(text *t, chart *c, double read_gbps)
{
    axes a = make_axes(c, read_gbps);
    report_put(t, "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
    draw_axes(t, &a, read_gbps);
    draw_bands(t, c, &a);
    draw_peers(t, c, &a);
    draw_winners(t, c, &a);
    draw_legend(t, c, read_gbps);
    report_put(t, "</svg>\n");
}
