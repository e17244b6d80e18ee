/*
 * flat.h - the flat cases of redtune_bench, shared by the default mode (flat.cu) and
 * --every-n (everyn.cu): a case is (op, type, n, regime); rt_reduce and CUB run it on the
 * same input, each verified against the CPU reference before and after its timed
 * repetitions; then its table row, CSV row and summary.
 */
#ifndef BENCH_FLAT_H
#define BENCH_FLAT_H

#include "common.h"

struct flat_row {
    rt_op op;
    rt_type type;
    int hot;
    long long n;
    double bytes;
    bool skipped = false;
    std::string skip_why;
    /* redtune: the library's pick and rt_reduce's timing */
    lib_pick pick;
    impl_result rt;
    /* CUB */
    size_t cub_temp = 0;
    impl_result cub;
    double limit_us = 0;
    /* --every-n: launch + one DRAM round trip + bytes / read bandwidth (everyn.cu) */
    double floor_us = 0;
};

/* The CSV's first line; with 'floor' (--every-n) the columns floor_us and
 * ratio_redtune_floor come before the message. */
void flat_csv_header(FILE *f, bool floor);

/* A case that is not run, one row per regime of o, with the reason: in the table and CSV. */
void flat_skip_case(const flat_row &base, const char *why, const options &o, FILE *csv,
                    double read_gbps, std::vector<flat_row> &rows);

/* Run the case 'base' (op, type, n, bytes, limit) for each regime of o on the input 'in'
 * (n elements; 'ref' its CPU reference): rt_explain, rt_reduce, CUB; one row per regime
 * appended to 'rows' and written to csv (may be NULL). floor_us: per regime (index hot) the
 * floor of each row, or NULL (the default mode: no floor columns). */
void flat_run_case(rt_ctx *ctx, const flat_row &base, CUdeviceptr in, const data_ref &ref,
                   const options &o, const double *floor_us, FILE *csv, double read_gbps,
                   std::vector<flat_row> &rows);

/* The table of one (op, type, regime); with 'floor' the floor and rt/floor columns. */
void flat_print_table(const std::vector<flat_row> &rows, rt_op op, rt_type type, int hot,
                      double read_gbps, bool floor);

/* One line per (op, type) of o: where the library's picks come from (at n = o.sizes[0]). */
void flat_print_sources(rt_ctx *ctx, const options &o);

/* rt/CUB over the rows of one (op, type, regime) where both were timed: how many, their
 * geometric mean, the lowest and highest with their n, and those above 1 ("2^11 (1.02), ...",
 * in the order of the rows). */
struct flat_ratios {
    int pairs = 0, nslower = 0;
    double geomean = 0, lo = 0, hi = 0;
    long long lo_n = 0, hi_n = 0;
    std::string slower;
};
flat_ratios flat_ratios_of(const std::vector<flat_row> &rows, rt_op op, rt_type type, int hot);

/* The closing line of the summaries: slower cases, WRONG results, errors, built-in defaults. */
void flat_print_totals(const std::vector<flat_row> &rows, int slower, int pairs);

#endif
