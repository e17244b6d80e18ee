/*
 * paper_seg.cu - `redtune_bench --paper-seg`: the paper's Fig. 5 (001_cc281ea25c4a6d8d.txt,
 * section V.B) on this GPU (docs/bench.md): keys, N = m * 2^20, the paper's segmented
 * families each at one fixed config, against cub::DeviceReduce::ReduceByKey and the limit;
 * with --db, rt_reduce_keys (the library's pick) gets a column too.
 *
 * The per-family columns time given configs, not the library's pick, so this mode uses
 * libredtune's internals (runtime/): codegen_emit generates each config's unit, NVRTC
 * compiles it, plan_load loads it and plan_seg_launch (rt_seg, then rt_seg_fix) launches it,
 * as the tuner's worker does. Nothing else in the bench looks past include/redtune.h except
 * api_check.cu.
 */
#include "seg.h"

extern "C" {
#include "../runtime/codegen.h"
#include "../runtime/family.h"
#include "../runtime/plan.h"
}

#include <cerrno>
#include <cstring>
#include <map>
#include <unistd.h>

namespace {

/* A paper config's segmented plan on the case (keys), launched as the tuner's worker does. */
void run_seg_plan(const plan *p, seg_case &c, int hot, const options &o, impl_result *res)
{
    rt_err e;
    rt_clearerr(&e);
    int rc = measure_ensure_temp(&G, plan_seg_temp_bytes(p, c.d.n, c.d.nseg), &e);
    if (rc) {
        res->status = ST_ERROR;
        res->msg = e.msg;
        return;
    }
    CUdeviceptr seg = SB.keys.p;
    unsigned long long n = c.d.n, nseg = c.d.nseg;
    auto enqueue = [&](rt_err *err) {
        return plan_seg_launch(p, SB.in.p, seg, n, nseg, SB.out.p, G.temp, G.stream, err);
    };
    auto poison = [&](rt_err *err) { return poison_out(c, err); };
    auto check = [&](std::string *why, int *ok, rt_err *err) { return check_direct(c, why, ok, err); };
    seg_verify_and_time(enqueue, poison, check, hot, o, res);
}



struct paper_cfg {
    std::string label, family, params;    /* params as given */
};

/* The paper's configs (001_cc281ea25c4a6d8d.txt, section V): TB2 R=2, D=2B (61440 blocks
 * at 30*2^20: B=256); TB4-warp R=4, D=4B (30720 blocks: B=256); Matrix and Persistent
 * Matrix H=W=32 (D=1024); DiffWarps P=8 C=1 (288 threads) H=W=32 and DiffWarps16 W=16
 * (Table II); plus redtune's load-balanced seg_lb for comparison. The same configs are in
 * bench/seg_paper_space.lua for a tuner run. */
std::vector<paper_cfg> paper_default_configs()
{
    return {
        {"TB2", "seg_tb2", "B=256 R=2 PAD=1"},
        {"TB4warp", "seg_tb4warp", "B=256 R=4"},
        {"Matrix", "seg_matrix", "B=256 H=32 W=32 PAD=1 PERSIST=0"},
        {"PMatrix", "seg_matrix", "B=256 H=32 W=32 PAD=1 PERSIST=1"},
        {"DiffWarps", "seg_diffwarps", "P=8 C=1 W=32 PAD=1"},
        {"DiffWarps16", "seg_diffwarps", "P=8 C=1 W=16 PAD=1"},
        {"seg_lb", "seg_lb", "B=256 R=8 STAGE=1 PERSIST=0"},
    };
}

paper_cfg parse_paper_config(const std::string &spec)
{
    paper_cfg c;
    size_t at = spec.find_first_not_of(" \t");
    std::string t = at == std::string::npos ? "" : spec.substr(at);
    size_t sp = t.find_first_of(" \t");
    std::string head = t.substr(0, sp);
    c.params = sp == std::string::npos ? "" : t.substr(sp + 1);   /* leading blanks are skipped later */
    size_t colon = head.find(':');
    c.family = head.substr(0, colon);
    c.label = colon == std::string::npos ? c.family : head.substr(colon + 1);
    if (c.family.empty() || c.label.empty())
        usage_error("--paper-config '%s': want \"FAMILY[:LABEL] NAME=V ...\"", spec.c_str());
    return c;
}

/* One paper config compiled for (op, type): a plan, or why not. */
struct paper_kernel {
    paper_cfg cfg;
    std::string full;          /* every parameter, as config_format writes them */
    bool skip = false;         /* family unknown or not a keys family: no column value */
    int rc = RT_OK;
    std::string err;
    plan p;
};

void compile_paper(paper_kernel &k, rt_op op, rt_type type)
{
    const rt_family *f = family_find(k.cfg.family.c_str());
    if (!f) {
        k.skip = true;
        k.err = "family " + k.cfg.family + " is not in this build (no templates/" + k.cfg.family +
                ".cu embedded when it was built): skipped";
        return;
    }
    if (f->plan != PLAN_SEGMENTED || !(f->layouts & FAMILY_LAYOUT_KEYS)) {
        k.skip = true;
        k.err = "family " + k.cfg.family + " is not a segmented family with the keys layout: skipped";
        return;
    }
    rt_err e;
    rt_clearerr(&e);
    rt_config c;
    config_default(f, &c);
    config_set(&c, "LAYOUT", SEG_LAYOUT_KEYS, &e);
    config_set(&c, "OFF64", 0, &e);
    rt_clearerr(&e);
    std::string ps = k.cfg.params;
    size_t at = 0;
    while (at < ps.size()) {
        size_t end = ps.find_first_of(" \t", at);
        std::string tok = ps.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? ps.size() : end + 1;
        if (tok.empty())
            continue;
        size_t eq = tok.find('=');
        char *stop = NULL;
        long long v = eq == std::string::npos ? 0 : strtoll(tok.c_str() + eq + 1, &stop, 10);
        if (eq == std::string::npos || eq == 0 || !stop || *stop || stop == tok.c_str() + eq + 1) {
            k.rc = RT_EINVAL;
            k.err = "'" + tok + "' is not NAME=VALUE";
            return;
        }
        if (config_set(&c, tok.substr(0, eq).c_str(), v, &e)) {
            k.rc = e.code;
            k.err = e.msg;
            return;
        }
    }
    char buf[512];
    config_format(&c, buf, sizeof buf);
    k.full = buf;
    char *src = NULL;
    if ((k.rc = codegen_emit(&c, op, type, &src, &e))) {
        k.err = e.msg;
        return;
    }
    watch(300, "NVRTC compiling %s (%s)", k.cfg.label.c_str(), buf);
    nvrtc_output out;
    k.rc = nvrtc_compile(src, f->name, G.arch, &out, &e);
    free(src);
    alarm(0);
    if (k.rc) {
        k.err = e.msg;
        return;
    }
    k.rc = plan_load(&k.p, out.cubin, PLAN_SEGMENTED, optype_acc_size(op, type), G.dev.sm_count, &e);
    nvrtc_output_free(&out);
    if (k.rc) {
        if (e.code == RT_EFAULT)
            die("loading %s: %s", k.cfg.label.c_str(), e.msg);
        k.err = e.msg;
    }
}

struct paperrow {
    int profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    int hot = 0;
    long long n = 0;
    unsigned long long nseg = 0;
    double mean = 0, bytes = 0, limit_us = 0;
    bool skipped = false;
    std::string skip_why;
    std::vector<impl_result> fam;     /* per paper config (status ST_NONE: skipped) */
    size_t cub_temp = 0;
    impl_result cub;
    seg_redtune rt;                   /* with --db */
};

const char PAPER_CSV_HEADER[] =
    "device,arch,profile,op,type,regime,m,n,nseg,seg_mean,bytes,limit_us,read_gbps,impl,family,"
    "params,status,us,min_us,max_us,reps,gbps,frac_read,message\n";

void paper_csv_one(FILE *f, const paperrow &c, double read_gbps, const std::string &impl,
                   const std::string &family, const std::string &params, const impl_result &r,
                   const std::string &note)
{
    if (!f)
        return;
    csv_field(f, G.dev.name);
    fprintf(f, ",%s,%s,%s,%s,%s,%lld,%lld,%llu,%.3f,%.0f,%.4f,%.2f,", G.arch,
            segdata_profile_name(c.profile), rt_op_name(c.op), rt_type_name(c.type),
            regime_name(c.hot), c.n >> 20, c.n, c.nseg, c.mean, c.bytes, c.limit_us, read_gbps);
    csv_field(f, impl);
    fputc(',', f);
    csv_field(f, family);
    fputc(',', f);
    csv_field(f, params);
    fprintf(f, ",%s,", c.skipped ? "skipped" : r.status == ST_NONE ? "skipped" : status_name(r.status));
    if (r.status == ST_OK)
        fprintf(f, "%.3f,%.3f,%.3f,%d,%.1f,%.4f,", r.t.median_us, r.t.min_us, r.t.max_us, r.t.reps,
                c.bytes / (r.t.median_us * 1e3), c.limit_us / r.t.median_us);
    else
        fprintf(f, ",,,,,,");
    csv_field(f, c.skipped ? c.skip_why : !r.msg.empty() ? r.msg : note);
    fputc('\n', f);
    fflush(f);
}

const char *paper_scenario(int profile)
{
    switch (profile) {
    case 0: return "(a) one segment";
    case 1: return "(b) random lengths 10..50";
    case 2: return "(c) segments of 3";
    default: return "(not one of the paper's scenarios)";
    }
}

std::string fmt_ms(const impl_result &r)
{
    char b[32];
    switch (r.status) {
    case ST_OK: snprintf(b, sizeof b, "%.4f", r.t.median_us * 1e-3); return b;
    case ST_WRONG: return "WRONG";
    case ST_ERROR: return "ERROR";
    default: return "-";
    }
}

void print_paper_table(const std::vector<paperrow> &rows, const std::vector<paper_kernel> &ks,
                       int profile, rt_op op, rt_type type, int hot, bool with_db, double read_gbps)
{
    printf("\npaper Fig. 5 %s (%s): keys, %s %s, %s; milliseconds (median), N = m*2^20\n",
           paper_scenario(profile), segdata_profile_name(profile), rt_op_name(op),
           rt_type_name(type), hot ? "hot (L2 not flushed)" : "cold (L2 flushed before each repetition)");
    /* A column is 9 characters, or its label's length when that is longer. */
    auto width = [&](size_t i) { return ks[i].cfg.label.size() > 9 ? (int)ks[i].cfg.label.size() : 9; };
    printf("%4s %9s", "m", "nseg");
    for (size_t i = 0; i < ks.size(); i++)
        printf(" %*s", width(i), ks[i].cfg.label.c_str());
    printf(" %9s", "CUB-RBK");
    if (with_db)
        printf(" %9s", "redtune");
    printf(" %9s\n", "limit");
    const paperrow *at30 = NULL;
    std::vector<std::string> notes;
    for (const paperrow &c : rows) {
        if (c.profile != profile || c.op != op || c.type != type || c.hot != hot)
            continue;
        if (c.skipped) {
            printf("%4lld  skipped: %s\n", c.n >> 20, c.skip_why.c_str());
            continue;
        }
        if (c.n == 30LL << 20)
            at30 = &c;
        printf("%4lld %9llu", c.n >> 20, c.nseg);
        for (size_t i = 0; i < ks.size(); i++)
            printf(" %*s", width(i), fmt_ms(c.fam[i]).c_str());
        printf(" %9s", fmt_ms(c.cub).c_str());
        if (with_db)
            printf(" %9s", fmt_ms(c.rt.res).c_str());
        printf(" %9.4f\n", c.limit_us * 1e-3);
        char b[64];
        snprintf(b, sizeof b, "m = %lld: ", c.n >> 20);
        for (size_t i = 0; i < ks.size(); i++)
            if (c.fam[i].status == ST_WRONG || c.fam[i].status == ST_ERROR)
                notes.push_back(b + ks[i].cfg.label + " " + fmt_ms(c.fam[i]) + ": " + c.fam[i].msg);
        if (c.cub.status == ST_WRONG || c.cub.status == ST_ERROR)
            notes.push_back(b + std::string("CUB ") + fmt_ms(c.cub) + ": " + c.cub.msg);
        if (with_db && (c.rt.res.status == ST_WRONG || c.rt.res.status == ST_ERROR))
            notes.push_back(b + std::string("redtune ") + fmt_ms(c.rt.res) + ": " + c.rt.res.msg);
    }
    for (const std::string &s : notes)
        printf("  %s\n", s.c_str());
    if (at30) {
        printf("  at N = 30*2^20 (%.0f MB must move), effective GB/s (bytes / time) and %% of the "
               "read bandwidth:\n   ", at30->bytes / 1e6);
        auto one = [&](const std::string &label, const impl_result &r) {
            if (r.status == ST_OK)
                printf(" %s %.0f (%.0f%%)", label.c_str(), at30->bytes / (r.t.median_us * 1e3),
                       100 * at30->limit_us / r.t.median_us);
        };
        for (size_t i = 0; i < ks.size(); i++)
            one(ks[i].cfg.label, at30->fam[i]);
        one("CUB-RBK", at30->cub);
        if (with_db)
            one("redtune", at30->rt.res);
        printf("\n");
    }
    (void)read_gbps;
    fflush(stdout);
}

} // namespace

int paper_main(const options &o)
{
    /* The database first (when given): rt_open reports a bad file before any GPU work. */
    rt_ctx *ctx = o.db ? bench_open(o) : NULL;
    FILE *csv = NULL;
    if (o.csv && !(csv = fopen(o.csv, "w")))
        die("%s: %s", o.csv, strerror(errno));
    double read_gbps = bench_start(o);
    std::vector<paper_cfg> cfgs;
    if (o.paper_configs.empty())
        cfgs = paper_default_configs();
    else
        for (const std::string &s : o.paper_configs)
            cfgs.push_back(parse_paper_config(s));
    printf("%s: the paper's Fig. 5 (001_cc281ea25c4a6d8d.txt): segmented %s over keys (owner "
           "array), N = m*2^20, each family at one fixed config generated and compiled here, "
           "verified per segment before timing; CUB-RBK = cub::DeviceReduce::ReduceByKey; limit = "
           "(values + keys + outputs) / read bandwidth%s\n", PROG,
           o.ops.size() == 1 && o.types.size() == 1
               ? (std::string(rt_op_name(o.ops[0])) + " " + rt_type_name(o.types[0])).c_str() : "",
           ctx ? "; redtune = rt_reduce_keys, the library's pick (rt_explain_segmented)" : "");
    /* The kernels, per (op, type). */
    std::map<std::pair<int, int>, std::vector<paper_kernel>> kernels;
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            std::vector<paper_kernel> &v = kernels[{op, type}];
            for (const paper_cfg &c : cfgs) {
                paper_kernel k;
                k.cfg = c;
                compile_paper(k, op, type);
                printf("%s: %-8s %s %s: %s%s\n", PROG, c.label.c_str(), rt_op_name(op),
                       rt_type_name(type), k.skip ? "" : k.rc ? "FAILED: " : (c.family + " " + k.full).c_str(),
                       k.skip || k.rc ? k.err.c_str() : "");
                v.push_back(k);
            }
        }
    if (csv)
        fputs(PAPER_CSV_HEADER, csv);
    std::vector<paperrow> rows;
    seg_walk(o, {SEG_LAYOUT_KEYS}, [&](seg_case &c, const std::string &skip) {
        c.layout = SEG_LAYOUT_KEYS;
        std::vector<paper_kernel> &ks = kernels[{c.op, c.type}];
        for (int hot : o.regimes) {
            paperrow row;
            row.profile = c.profile;
            row.op = c.op;
            row.type = c.type;
            row.hot = hot;
            row.n = (long long)c.d.n;
            row.nseg = c.d.nseg;
            row.mean = c.d.mean;
            row.bytes = segdata_bytes(&c.d, SEG_LAYOUT_KEYS, 0, optype_size(c.type),
                                      optype_acc_size(c.op, c.type));
            row.limit_us = row.bytes / (read_gbps * 1e3);
            row.fam.resize(ks.size());
            if (!skip.empty()) {
                row.skipped = true;
                row.skip_why = skip;
            } else {
                for (size_t i = 0; i < ks.size(); i++) {
                    if (ks[i].skip)
                        continue;
                    if (ks[i].rc) {
                        row.fam[i].status = ST_ERROR;
                        row.fam[i].msg = ks[i].err;
                        continue;
                    }
                    watch(120 + (unsigned)(row.n / 10000000), "paper %s %s N = %s (%s)",
                          ks[i].cfg.label.c_str(), segdata_profile_name(c.profile),
                          fmt_seg_n(row.n).c_str(), ks[i].full.c_str());
                    run_seg_plan(&ks[i].p, c, hot, o, &row.fam[i]);
                    alarm(0);
                }
                watch(120 + (unsigned)(row.n / 10000000), "paper CUB ReduceByKey %s N = %s",
                      segdata_profile_name(c.profile), fmt_seg_n(row.n).c_str());
                run_cub_seg(c, hot, o, &row.cub, &row.cub_temp);
                alarm(0);
                if (ctx) {
                    watch(300 + (unsigned)(row.n / 10000000), "paper redtune %s N = %s",
                          segdata_profile_name(c.profile), fmt_seg_n(row.n).c_str());
                    run_seg_lib(ctx, c, SEG_LAYOUT_KEYS, hot, o, &row.rt);
                    alarm(0);
                }
                std::string line;
                for (size_t i = 0; i < ks.size(); i++)
                    line += " " + ks[i].cfg.label + " " + fmt_ms(row.fam[i]);
                fprintf(stderr, "%s: [paper %s %s %s %s] N = %s, ms:%s CUB-RBK %s\n", PROG,
                        segdata_profile_name(c.profile), rt_op_name(c.op), rt_type_name(c.type),
                        regime_name(hot), fmt_seg_n(row.n).c_str(), line.c_str(),
                        fmt_ms(row.cub).c_str());
            }
            for (size_t i = 0; i < ks.size(); i++)
                paper_csv_one(csv, row, read_gbps, ks[i].cfg.label, ks[i].cfg.family,
                              ks[i].full.empty() ? ks[i].cfg.params : ks[i].full, row.fam[i],
                              ks[i].skip || ks[i].rc ? ks[i].err : "");
            paper_csv_one(csv, row, read_gbps, "CUB-RBK", cub_seg_name(SEG_LAYOUT_KEYS), "",
                          row.cub, "");
            if (ctx) {
                const lib_pick &k = row.rt.pick;
                bool known = k.have && k.p.parsed;
                paper_csv_one(csv, row, read_gbps, "redtune", known ? k.p.family : "",
                              known ? k.p.params : "", row.rt.res,
                              known ? "[" + k.lookup + "]" : k.text.substr(0, k.text.find('\n')));
            }
            rows.push_back(row);
        }
    });
    for (rt_op op : o.ops)
        for (rt_type type : o.types) {
            const std::vector<paper_kernel> &ks = kernels[{op, type}];
            for (int p : o.profiles)
                for (int hot : o.regimes)
                    print_paper_table(rows, ks, p, op, type, hot, ctx != NULL, read_gbps);
            for (const paper_kernel &k : ks)
                if (k.skip || k.rc)
                    printf("  %s: %s\n", k.cfg.label.c_str(), k.err.c_str());
        }
    int wrong = 0, errors = 0, timed = 0;
    for (const paperrow &c : rows) {
        for (const impl_result &r : c.fam) {
            wrong += r.status == ST_WRONG;
            errors += r.status == ST_ERROR;
            timed += r.status == ST_OK;
        }
        wrong += c.cub.status == ST_WRONG;
        errors += c.cub.status == ST_ERROR;
        timed += c.cub.status == ST_OK;
    }
    printf("\nsummary (paper-seg): %d timings, WRONG %d, errors %d\n", timed, wrong, errors);
    if (csv && fclose(csv) != 0)
        die("%s: %s", o.csv, strerror(errno));
    rt_close(ctx);
    return 0;
}

