/*
 * seg.cu - `redtune_bench --segmented keys|offsets` (docs/bench.md, "Segmented"): for each
 * case (profile, n, op, type, regime), rt_reduce_keys or rt_reduce_offsets (the library's
 * pick: seg.h) against cub::DeviceReduce::ReduceByKey or cub::DeviceSegmentedReduce and the
 * bandwidth limit of the bytes that must move; tables, a summary and the GOAL lines of
 * issue 4.
 */
#include "seg.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace {

std::string seg_layout_key(int layout, int profile)
{
    return std::string(segdata_layout_name(layout)) + ":" + segdata_profile_name(profile);
}


struct segrow {
    int layout = 0, profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    int hot = 0;
    long long n = 0;
    unsigned long long nseg = 0;
    double mean = 0, bytes = 0, limit_us = 0;
    bool skipped = false;
    std::string skip_why;
    seg_redtune rt;
    size_t cub_temp = 0;
    impl_result cub;
};

const char SEG_CSV_HEADER[] =
    "device,arch,layout,profile,op,type,regime,n,nseg,seg_mean,bytes,limit_us,read_gbps,"
    "redtune_status,redtune_us,redtune_min_us,redtune_max_us,redtune_reps,redtune_over_limit,"
    "family,params,kernel_hash,lookup,tuned_n,tuned_nseg,tuned_regime,tuned_median_us,cubin,off64,"
    "cub_impl,cub_status,cub_us,cub_min_us,cub_max_us,cub_reps,cub_over_limit,cub_temp_bytes,"
    "ratio_redtune_cub,message\n";

void seg_csv_row(FILE *f, const segrow &c, double read_gbps)
{
    if (!f)
        return;
    std::string msg = c.skipped ? c.skip_why : "";
    if (!c.rt.res.msg.empty())
        msg += "redtune: " + c.rt.res.msg;
    if (!c.cub.msg.empty())
        msg += std::string(msg.empty() ? "" : "; ") + "cub: " + c.cub.msg;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%s,%s,%lld,%llu,%.3f,%.0f,%.4f,%.2f,", G.arch,
            segdata_layout_name(c.layout), segdata_profile_name(c.profile), rt_op_name(c.op),
            rt_type_name(c.type), regime_name(c.hot), c.n, c.nseg, c.mean, c.bytes, c.limit_us,
            read_gbps);
    fprintf(f, "%s,", c.skipped ? "skipped" : status_name(c.rt.res.status));
    if (c.rt.res.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,", c.rt.res.t.median_us, c.rt.res.t.min_us,
                c.rt.res.t.max_us, c.rt.res.t.reps, c.rt.res.t.median_us / c.limit_us);
    else
        fprintf(f, ",,,,,");
    const bench_pick &p = c.rt.pick.p;
    if (c.rt.pick.have && p.parsed) {
        csv_field(f, p.family);
        fputc(',', f);
        csv_field(f, p.params);
        fprintf(f, ",%s,", p.hash);
        csv_field(f, c.rt.pick.lookup);
        /* tuned_nseg: rt_explain_segmented gives the entry's mean segment length. */
        if (p.tuned_n > 0)
            fprintf(f, ",%lld,%lld,cold,%.3f,", p.tuned_n,
                    p.tuned_mean > 0 ? llround((double)p.tuned_n / p.tuned_mean) : 0LL,
                    p.tuned_median_us);
        else
            fprintf(f, ",,,,,");
        fprintf(f, "%s,%d,", p.from_db ? "stored" : "nvrtc", c.rt.off64);
    } else {
        fprintf(f, ",,,,,,,,,,");
    }
    fprintf(f, "%s,%s,", cub_seg_name(c.layout), c.skipped ? "skipped" : status_name(c.cub.status));
    if (c.cub.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.4f,%zu,", c.cub.t.median_us, c.cub.t.min_us,
                c.cub.t.max_us, c.cub.t.reps, c.cub.t.median_us / c.limit_us, c.cub_temp);
    else
        fprintf(f, ",,,,,,");
    if (c.rt.res.status == ST_OK && c.cub.status == ST_OK)
        fprintf(f, "%.4f,", c.rt.res.t.median_us / c.cub.t.median_us);
    else
        fputc(',', f);
    csv_field(f, msg);
    fputc('\n', f);
    fflush(f);
}

std::string fmt_us(const impl_result &r, bool have)
{
    return fmt_time(r, have);
}

void print_seg_table(const std::vector<segrow> &rows, int layout, rt_op op, rt_type type, int hot,
                     double read_gbps)
{
    printf("\n%s, %s %s, %s; limit = bytes that must move / %.1f GB/s; medians in microseconds\n",
           layout == SEG_LAYOUT_KEYS ? "keys (CUB: DeviceReduce::ReduceByKey)"
                                     : "offsets (CUB: DeviceSegmentedReduce)",
           rt_op_name(op), rt_type_name(type),
           hot ? "hot (L2 not flushed)" : "cold (L2 flushed before each repetition)", read_gbps);
    printf("%-9s %9s %9s %8s %10s %10s %10s %7s %7s %7s  %s\n", "profile", "n", "nseg", "mean",
           "redtune", "CUB", "limit", "rt/CUB", "rt/lim", "CUB/lim",
           "redtune (the library's pick): family params [lookup]");
    for (const segrow &c : rows) {
        if (c.layout != layout || c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%-9s %9s  skipped: %s\n", segdata_profile_name(c.profile),
                   fmt_seg_n(c.n).c_str(), c.skip_why.c_str());
            continue;
        }
        char ratio[32] = "-", rl[32] = "-", cl[32] = "-";
        if (c.rt.res.status == ST_OK && c.cub.status == ST_OK) {
            double q = c.rt.res.t.median_us / c.cub.t.median_us;
            snprintf(ratio, sizeof ratio, "%.2f%s", q, q > 1.0 ? "*" : " ");
        }
        if (c.rt.res.status == ST_OK)
            snprintf(rl, sizeof rl, "%.2f", c.rt.res.t.median_us / c.limit_us);
        if (c.cub.status == ST_OK)
            snprintf(cl, sizeof cl, "%.2f", c.cub.t.median_us / c.limit_us);
        std::string win = pick_label(c.rt.pick);
        printf("%-9s %9s %9llu %8.1f %10s %10s %10.2f %7s %7s %7s  %s\n",
               segdata_profile_name(c.profile), fmt_seg_n(c.n).c_str(), c.nseg, c.mean,
               fmt_us(c.rt.res, true).c_str(), fmt_us(c.cub, true).c_str(), c.limit_us,
               ratio, rl, cl, win.c_str());
        if (c.rt.res.status == ST_WRONG || c.rt.res.status == ST_ERROR)
            printf("%10s redtune %s: %s\n", "", c.rt.res.status == ST_WRONG ? "WRONG" : "ERROR",
                   c.rt.res.msg.c_str());
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            printf("%10s CUB %s: %s\n", "", c.cub.status == ST_WRONG ? "WRONG" : "ERROR",
                   c.cub.msg.c_str());
    }
    fflush(stdout);
}

/* The issue's goals (docs/bench.md): f32 min, cold, n = 30 * 2^20, the paper's three
 * scenarios. keys: redtune <= 0.65 x ReduceByKey; offsets: redtune <= 1.25 x the limit. */
const long long GOAL_N = 30LL << 20;

bool is_goal_row(const segrow &r)
{
    return r.profile <= 2 && r.op == RT_MIN && r.type == RT_F32 && r.hot == 0 && r.n == GOAL_N;
}

/* One GOAL line for 'layout' and 'profile' from its row (NULL: not run); returns 1 PASS,
 * 0 MISS, -1 not measured. */
int print_goal(const segrow *c, int layout, int profile)
{
    bool keys = layout == SEG_LAYOUT_KEYS;
    printf("GOAL %s %-9s ", segdata_layout_name(layout), segdata_profile_name(profile));
    std::string why;
    if (!c)
        why = "this run did not time f32 min cold at n = 30*2^20 with this profile";
    else if (c->skipped)
        why = c->skip_why;
    else if (c->rt.res.status != ST_OK)
        why = std::string("redtune ") + (c->rt.res.status == ST_WRONG ? "WRONG" : "ERROR") + ": " +
              c->rt.res.msg;
    else if (keys && c->cub.status != ST_OK)
        why = std::string("CUB ") + (c->cub.status == ST_WRONG ? "WRONG" : "ERROR") + ": " +
              c->cub.msg;
    if (!why.empty()) {
        printf("NOT MEASURED: %s\n", why.c_str());
        fflush(stdout);
        return -1;
    }
    double rt = c->rt.res.t.median_us;
    double base = keys ? c->cub.t.median_us : c->limit_us, bound = keys ? 0.65 : 1.25;
    double q = rt / base;
    bool ok = q <= bound;
    printf("%s: redtune %.2f us / %s %.2f us = %.3f (%s %.2f); nseg %llu; %s\n",
           ok ? "PASS" : "MISS", rt, keys ? "ReduceByKey" : "limit", base, q, ok ? "<=" : ">",
           bound, c->nseg, pick_label(c->rt.pick).c_str());
    fflush(stdout);
    return ok ? 1 : 0;
}

void print_seg_goals(const std::vector<segrow> &rows, int layout)
{
    bool keys = layout == SEG_LAYOUT_KEYS;
    printf("\ngoals (%s): f32 min, cold, n = 30*2^20; %s\n", segdata_layout_name(layout),
           keys ? "redtune's median <= 0.65 x cub::DeviceReduce::ReduceByKey's"
                : "redtune's median <= 1.25 x the bandwidth limit (values + 32-bit offsets + outputs)");
    int pass = 0, miss = 0, none = 0;
    for (int p = 0; p <= 2; p++) {
        const segrow *c = NULL;
        for (const segrow &r : rows)
            if (r.layout == layout && r.profile == p && is_goal_row(r))
                c = &r;
        int v = print_goal(c, layout, p);
        (v > 0 ? pass : v == 0 ? miss : none)++;
    }
    printf("goals (%s): %d PASS, %d MISS, %d not measured\n", segdata_layout_name(layout), pass,
           miss, none);
}

void print_seg_summary(const std::vector<segrow> &rows, const options &o)
{
    printf("\nsummary (%s): redtune / CUB and redtune / limit, medians (rt/CUB below 1: redtune "
           "faster)\n", segdata_layout_name(o.layout));
    int wrong_rt = 0, wrong_cub = 0, errors = 0, missing = 0, slower = 0, pairs = 0;
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes) {
                double lq = 0, ll = 0;
                int np = 0, nl = 0;
                std::string slow;
                for (const segrow &c : rows) {
                    if (c.op != op || c.type != type || c.hot != hot || c.skipped)
                        continue;
                    wrong_rt += c.rt.res.status == ST_WRONG;
                    wrong_cub += c.cub.status == ST_WRONG;
                    errors += (c.rt.res.status == ST_ERROR) + (c.cub.status == ST_ERROR);
                    missing += c.rt.pick.p.parsed && c.rt.pick.p.tuned_n <= 0;
                    if (c.rt.res.status == ST_OK) {
                        ll += log(c.rt.res.t.median_us / c.limit_us);
                        nl++;
                    }
                    if (c.rt.res.status == ST_OK && c.cub.status == ST_OK) {
                        double q = c.rt.res.t.median_us / c.cub.t.median_us;
                        lq += log(q);
                        np++;
                        if (q > 1.0) {
                            char b[96];
                            snprintf(b, sizeof b, "%s%s %s (%.2f)", slow.empty() ? "" : ", ",
                                     segdata_profile_name(c.profile), fmt_seg_n(c.n).c_str(), q);
                            slow += b;
                            slower++;
                        }
                    }
                }
                pairs += np;
                printf("  %-4s %-3s %-4s: ", rt_op_name(op), rt_type_name(type), regime_name(hot));
                if (!np && !nl) {
                    printf("nothing of redtune's timed\n");
                    continue;
                }
                if (np)
                    printf("rt/CUB geomean %.2f over %d cases", exp(lq / np), np);
                if (nl)
                    printf("%srt/limit geomean %.2f", np ? ", " : "", exp(ll / nl));
                printf("%s%s\n", slow.empty() ? "" : "; SLOWER than CUB at ", slow.c_str());
            }
    printf("  redtune slower than CUB in %d of %d cases timed side by side; WRONG: redtune %d, "
           "CUB %d; errors %d; cases on the built-in default (no winner the library could use) %d\n", slower, pairs, wrong_rt, wrong_cub,
           errors, missing);
}

} // namespace

int seg_main(const options &o)
{
    int layout = o.layout;
    /* The database first: rt_open reports a missing or foreign file before any GPU work. */
    rt_ctx *ctx = bench_open(o);
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    printf("%s: segmented, layout %s: %s (the library's pick for n and the mean segment "
           "length, rt_explain_segmented) against %s and the bandwidth limit of the bytes that "
           "must move (values, %s, one output per segment)\n", PROG, segdata_layout_name(layout),
           layout == SEG_LAYOUT_KEYS ? "rt_reduce_keys" : "rt_reduce_offsets",
           cub_seg_name(layout), layout == SEG_LAYOUT_KEYS ? "u32 keys" : "32-bit offsets");
    if (csv)
        fputs(SEG_CSV_HEADER, csv);

    std::vector<segrow> rows;
    seg_walk(o, {layout}, [&](seg_case &c, const std::string &skip) {
        c.layout = layout;
        for (int hot : o.regimes) {
            segrow row;
            row.layout = layout;
            row.profile = c.profile;
            row.op = c.op;
            row.type = c.type;
            row.hot = hot;
            row.n = (long long)c.d.n;
            row.nseg = c.d.nseg;
            row.mean = c.d.mean;
            row.bytes = segdata_bytes(&c.d, layout, 0, optype_size(c.type), optype_acc_size(c.op, c.type));
            row.limit_us = row.bytes / (read_gbps * 1e3);
            if (!skip.empty()) {
                row.skipped = true;
                row.skip_why = skip;
            } else {
                watch(300 + (unsigned)(row.n / 10000000), "redtune %s %s %s n = %s %s",
                      rt_op_name(c.op), rt_type_name(c.type),
                      seg_layout_key(layout, c.profile).c_str(), fmt_seg_n(row.n).c_str(),
                      regime_name(hot));
                run_seg_lib(ctx, c, layout, hot, o, &row.rt);
                watch(120 + (unsigned)(row.n / 10000000), "%s %s %s n = %s %s %s", cub_seg_name(layout),
                      rt_op_name(c.op), rt_type_name(c.type), fmt_seg_n(row.n).c_str(),
                      segdata_profile_name(c.profile), regime_name(hot));
                run_cub_seg(c, hot, o, &row.cub, &row.cub_temp);
                alarm(0);
                fprintf(stderr, "%s: [%s %s %s %s] n = %s: redtune %s, CUB %s, limit %.2f us\n", PROG,
                        seg_layout_key(layout, c.profile).c_str(), rt_op_name(c.op),
                        rt_type_name(c.type), regime_name(hot), fmt_seg_n(row.n).c_str(),
                        fmt_us(row.rt.res, true).c_str(), fmt_us(row.cub, true).c_str(),
                        row.limit_us);
            }
            seg_csv_row(csv, row, read_gbps);
            rows.push_back(row);
            if (is_goal_row(row))   /* at once too, in case the run is cut short */
                print_goal(&row, layout, row.profile);
        }
    });
    for (rt_op op : o.ops)
        for (rt_type type : o.types)
            for (int hot : o.regimes)
                print_seg_table(rows, layout, op, type, hot, read_gbps);
    print_seg_summary(rows, o);
    print_seg_goals(rows, layout);
    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    rt_close(ctx);
    return 0;
}

