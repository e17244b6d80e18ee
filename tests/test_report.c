/*
 * test_report.c - results as data and pictures, with no GPU: `redtune best --format`,
 * `redtune measurements` and `redtune report` over a small database made here through the
 * tuner's own store functions. tests/check_results.py (python3) checks the CSV, the JSON
 * schema and the report's structure (well-formed XML, every case, nothing fetched).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/store.h"
#include "tuner/axisdata.h"
#include "tuner/store_tune.h"

static char out[1 << 20];
static char dir[64], db[128];

/* Run a shell command with stdout and stderr captured into 'out'; the exit status. */
static int sh(const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Run "$REDTUNE_BIN " + the formatted arguments. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    const char *bin = getenv("REDTUNE_BIN");
    char cmd[4096];
    int used = snprintf(cmd, sizeof cmd, "%s ", bin ? bin : "build/redtune");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + used, sizeof cmd - (size_t)used, fmt, ap);
    va_end(ap);
    return sh(cmd);
}

#define EXPECT(code, text, ...)                                               \
    do {                                                                      \
        int rc_ = run(__VA_ARGS__);                                           \
        if (rc_ != (code) || !strstr(out, (text)))                           \
            print_error("-> %d:\n%s\n", rc_, out);                            \
        assert_int_equal(rc_, (code));                                        \
        assert_non_null(strstr(out, (text)));                                 \
    } while (0)

/* The checks of tests/check_results.py; a skip where there is no python3. */
static void check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void check(const char *fmt, ...)
{
    char cmd[4096];
    int used = snprintf(cmd, sizeof cmd, "python3 tests/check_results.py ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + used, sizeof cmd - (size_t)used, fmt, ap);
    va_end(ap);
    int rc = sh(cmd);
    if (rc)
        print_error("%s -> %d:\n%s\n", cmd, rc, out);
    assert_int_equal(rc, 0);
}

static void put(store *s, long long dev, long long run, const char *hash, const char *op,
                const char *type, const char *layout, long long n, const char *status,
                double us, double gbps)
{
    rt_err e;
    int ok = !strcmp(status, "ok");
    store_measurement m = {dev, run, hash, op, type, layout, n, 0, status,
                           ok ? "" : "result 1 differs, \"x\"", ok ? us : 0, ok ? us * 0.9 : 0,
                           ok ? us * 1.2 : 0, ok ? 50 : 0, ok ? gbps : 0, ok ? gbps / 3000 : 0,
                           ok, ok ? 1 : -1, 0, 0, 0};
    axis_shape sh;
    if (axisdata_parse_layout(layout, &sh) == 0) {   /* as tuning stores an axis case */
        m.nseg = (long long)axisdata_outputs(&sh);
        m.seg_mean = (double)sh.len;
    } else if (strchr(layout, ':')) {
        m.nseg = n / 3;
        m.seg_mean = 3;
        m.seg_spread = 0.5;
    }
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
}

/*
 * Two devices. The first (a name that CSV must quote and HTML escape): min f32 flat at two
 * sizes, three kernels of two families, one wrong result; sum f64 keys:len3 at one size.
 * sum bf16 (accumulated in f32, an f32 result) flat at one size.
 * sum f32 along an axis (axis:64x2048x512).
 * The second: one measurement of min f32 flat, no read bandwidth.
 * 10 measurements, 6 best rows.
 */
static int make_db(void **state)
{
    (void)state;
    rt_err e;
    store *s;
    rt_device d;
    long long dev, dev2, run;
    snprintf(dir, sizeof dir, "/tmp/redtune-report-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/r.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "Fake \"GPU\", <rev> & 2");
    snprintf(d.uuid, sizeof d.uuid, "feedface");
    d.cc_major = 9;
    assert_int_equal(store_put_device(s, &d, 3000, &dev, &e), RT_OK);
    snprintf(d.name, sizeof d.name, "Other GPU");
    snprintf(d.uuid, sizeof d.uuid, "beef");
    assert_int_equal(store_put_device(s, &d, 0, &dev2, &e), RT_OK);
    assert_int_equal(store_begin_run(s, dev, "redtune --op min", 12040, &run, &e), RT_OK);
    assert_int_equal(store_put_kernel(s, "k1", "gridstride", "B=256 V=4 U=1 G=0", "//", &e),
                     RT_OK);
    assert_int_equal(store_put_kernel(s, "k2", "gridstride", "B=512 V=2 U=1 G=0", "//", &e),
                     RT_OK);
    assert_int_equal(store_put_kernel(s, "k3", "tb2", "B=256 R=2 PAD=1 PAD_PERIOD=32", "//",
                                      &e), RT_OK);
    put(s, dev, run, "k1", "min", "f32", "flat", 1024, "ok", 3.0, 1.4);
    put(s, dev, run, "k2", "min", "f32", "flat", 1024, "ok", 2.5, 1.6);
    put(s, dev, run, "k3", "min", "f32", "flat", 1024, "ok", 4.0, 1.0);
    put(s, dev, run, "k1", "min", "f32", "flat", 1 << 20, "ok", 2.0, 2100);
    put(s, dev, run, "k2", "min", "f32", "flat", 1 << 20, "wrong", 0, 0);
    put(s, dev, run, "k3", "min", "f32", "flat", 1 << 20, "ok", 1.6, 2600);
    put(s, dev, run, "k1", "sum", "f64", "keys:len3", 1 << 14, "ok", 5.0, 30);
    assert_int_equal(store_put_kernel(s, "k4", "axis_cols", "B=256 TX=32 CV=4 U=4 CHUNK=0",
                                      "//", &e), RT_OK);
    put(s, dev, run, "k4", "sum", "f32", "axis:64x2048x512", 64LL * 2048 * 512, "ok", 100.0,
        2700);
    assert_int_equal(store_update_best(s, dev, "sum", "f32", "axis:64x2048x512",
                                       64LL * 2048 * 512, 0, &e), RT_OK);
    put(s, dev2, 0, "k1", "min", "f32", "flat", 1 << 20, "ok", 2.2, 1900);
    /* A type spec: bf16 summed in f32 into an f32 result (schema version 3's acc, result). */
    store_measurement m = {dev, run, "k2", "sum", "bf16", "flat", 1 << 20, 0, "ok", "", 3.0,
                           2.9, 3.5, 50, 700, 0.23, 1, 1, 0, 0, 0, "f32", "f32"};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best_spec(s, dev, "sum", "bf16", "f32", "f32", "flat", 1 << 20,
                                            0, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1024, 0, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "sum", "f64", "keys:len3", 1 << 14, 0, &e),
                     RT_OK);
    assert_int_equal(store_update_best(s, dev2, "min", "f32", "flat", 1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_end_run(s, run, &e), RT_OK);
    store_close(s);
    return 0;
}

static int remove_db(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static int have_python(void)
{
    return sh("python3 -c 'import xml.etree.ElementTree, csv, json'") == 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* replay: a strategy run again over the stored measurements, from the database (the order
 * of the measurements' ids: k1, k2, k3) and from the CSV of `measurements`; per case the
 * config it chose against the best of all. */
static void replay_strategies(void **state)
{
    (void)state;
    char csv[160];
    snprintf(csv, sizeof csv, "%s/m.csv", dir);
    /* Exhaustive: every config, the best chosen (the wrong result at 2^20 is never it). */
    EXPECT(0, ",min,f32,f32,f32,flat,1048576,0,3,3,3,1.0000,1.600,1.600,1.0000,tb2,"
           "B=256 R=2 PAD=1 PAD_PERIOD=32,0\r\n",
           "replay %s --strategy exhaustive --format csv", db);
    assert_non_null(strstr(out, "device,op,type,acc,result,layout,n,hot,configs,timed,picks,"
                           "share,chosen_us,best_us,quality,chosen_family,chosen_params,meets"));
    /* The device (name and uuid) quoted as RFC 4180 has it: its comma and quotes. */
    assert_non_null(strstr(out, "\r\n\"Fake \"\"GPU\"\", <rev> & 2 feedface\",min,f32,"));
    /* A budget of one config: the first measured, k1 (3.0 us against k2's 2.5). */
    EXPECT(0, ",min,f32,f32,f32,flat,1024,0,3,1,1,0.3333,3.000,2.500,1.2000,gridstride,"
           "B=256 V=4 U=1 G=0,0\r\n", "replay %s --strategy exhaustive --budget 1 --format csv",
           db);
    EXPECT(0, "1024       3     1  0.333       3.00       2.50   1.200  misses", "replay %s --strategy exhaustive --budget 1 --op min",
           db);
    assert_null(strstr(out, "sum "));   /* --op filters */
    assert_non_null(strstr(out, "cases, 0 meet the goal"));
    /* The CSV of `measurements` replays the same. */
    assert_int_equal(run("measurements --db %s --format csv > %s", db, csv), 0);
    EXPECT(0, ",min,f32,f32,f32,flat,1048576,0,3,3,3,1.0000,1.600,1.600,1.0000,tb2,",
           "replay %s --strategy exhaustive --format csv", csv);
    EXPECT(0, "sum    bf16  flat", "replay %s --strategy local --budget 50%%,1", csv);
    /* --judge: the choice timed in another sweep, against that sweep's best (k2, chosen at
     * 1024, is 2.75 there against tb2's 2.5); a case the judge lacks is judged '-'. */
    char judge[160];
    snprintf(judge, sizeof judge, "%s/judge.csv", dir);
    write_text(judge, "op,type,layout,n,family,params,status,median_us\n"
                      "min,f32,flat,1024,gridstride,B=256 V=4 U=1 G=0,ok,3.0\n"
                      "min,f32,flat,1024,gridstride,B=512 V=2 U=1 G=0,ok,2.75\n"
                      "min,f32,flat,1024,tb2,B=256 R=2 PAD=1 PAD_PERIOD=32,ok,2.5\n");
    EXPECT(0, ",min,f32,f32,f32,flat,1024,0,3,3,3,1.0000,2.500,2.500,1.0000,gridstride,"
           "B=512 V=2 U=1 G=0,0,1.1000\r\n",
           "replay %s --strategy exhaustive --format csv --judge %s", db, judge);
    assert_non_null(strstr(out, ",meets,judged\r\n"));
    assert_non_null(strstr(out, "B=256 R=2 PAD=1 PAD_PERIOD=32,0,\r\n"));   /* 2^20: none */
    EXPECT(0, "1.100\n", "replay %s --strategy exhaustive --op min --judge %s", db, judge);
    assert_non_null(strstr(out, "judged by "));
    assert_non_null(strstr(out, ": worst 1.100"));
    EXPECT(4, "/none.csv: No such file or directory", "replay %s --judge %s/none.csv", db, dir);
    /* --prior: local search starts from the prior database's winner of the case where the
     * replay has chosen none yet (here the database's own best: k2 at 1024), so one config
     * timed is the best; without it, one config is the space's first family's centre. */
    EXPECT(0, ",min,f32,f32,f32,flat,1024,0,3,1,1,0.3333,2.500,2.500,1.0000,gridstride,"
           "B=512 V=2 U=1 G=0,0\r\n",
           "replay %s --strategy local --budget 1 --format csv --prior %s", db, db);
    EXPECT(0, ",min,f32,f32,f32,flat,1024,0,3,1,1,0.3333,",
           "replay %s --strategy local --budget 1 --format csv", db);
    assert_null(strstr(out, ",min,f32,f32,f32,flat,1024,0,3,1,1,0.3333,2.500,2.500,1.0000,"));
    EXPECT(3, "m.csv", "replay %s --prior %s", db, csv);   /* a prior is a database */
    EXPECT(3, "/none.db: No such file or directory", "replay %s --prior %s/none.db", db, dir);
}


/* replay: local search on a segmented case with nothing of its own profile replayed starts
 * from the choice of a profile of like mean length (rand10_50's, 30, for len3, 3), not from
 * one 2^17 times longer (one: a single segment of 2^22). A budget of one config: the start
 * is the choice. Each case lists its candidates in its rows' order, which puts seg_per's
 * centre first for rand10_50 and seg_lb's first for the two others. */
static void replay_starts_from_a_like_profile(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/seg.csv", dir);
    const char *per = "seg_per,LAYOUT=2 OFF64=0 B=256 LANES=1 STAGE=0 LONG=64 V=4";
    const char *lb = "seg_lb,LAYOUT=2 OFF64=0 B=256 R=16 V=4 STAGE=0 PERSIST=0 OST=0 MP=1 "
                     "FAST=1";
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "op,type,layout,n,family,params,status,median_us\n"
               "sum,f32,offsets:rand10_50,4194304,%s,ok,14.0\n"
               "sum,f32,offsets:rand10_50,4194304,%s,ok,50.0\n"
               "sum,f32,offsets:len3,4194304,%s,ok,57.0\n"
               "sum,f32,offsets:len3,4194304,%s,ok,14.3\n"
               "sum,f32,offsets:one,4194304,%s,ok,21.0\n"
               "sum,f32,offsets:one,4194304,%s,ok,2110.0\n", per, lb, lb, per, lb, per);
    assert_int_equal(fclose(f), 0);
    EXPECT(0, ",sum,f32,f32,f32,offsets:len3,4194304,0,2,1,1,0.5000,14.300,14.300,1.0000,"
           "seg_per,", "replay %s --strategy local --budget 1 --format csv", path);
    assert_non_null(strstr(out, ",sum,f32,f32,f32,offsets:rand10_50,4194304,0,2,1,1,0.5000,"
                           "14.000,14.000,1.0000,seg_per,"));
    assert_non_null(strstr(out, ",sum,f32,f32,f32,offsets:one,4194304,0,2,1,1,0.5000,"
                           "21.000,21.000,1.0000,seg_lb,"));
}

/* replay's bad inputs: a CSV that is not of measurements (exit 4, FILE:LINE), a file that
 * is missing (4), a database that is not redtune's (3), rows of no config this build knows
 * (1, and they are counted). */
static void replay_bad_inputs(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    write_text(path, "op,type,layout,n,family,params,status\n"
                     "min,f32,flat,1024,gridstride,B=256,ok\n");
    EXPECT(4, ":1: no column median_us: not the CSV of `redtune measurements --format csv`",
           "replay %s", path);
    write_text(path, "op,type,layout,n,family,params,status,median_us\n"
                     "min,f32,flat,1024,gridstride,B=256,ok,2.5\n"
                     "min,f32,flat,x,gridstride,B=256,ok,2\n");
    EXPECT(4, "bad.csv:3: column n: 'x' is not a number of at least 1", "replay %s", path);
    EXPECT(4, "/none.csv: No such file or directory", "replay %s/none.csv", dir);
    write_text(path, "op,type,layout,n,family,params,status,median_us\n"
                     "min,f32,flat,1024,nosuch,B=256,ok,2.5\n");
    EXPECT(1, "replay: no measurement of a config this build knows", "replay %s", path);
    assert_non_null(strstr(out, "1 row left out: configs this build does not know (e.g. nosuch "
                           "B=256)"));
    EXPECT(3, "tests/db/foreign.db", "replay tests/db/foreign.db");
    /* The database itself is left as it was: replay only reads. */
    char before[64], after[64];
    assert_int_equal(sh("md5sum < tests/db/foreign.db"), 0);
    snprintf(before, sizeof before, "%s", out);
    assert_int_equal(run("replay %s --strategy local", db), 0);
    assert_int_equal(sh("md5sum < tests/db/foreign.db"), 0);
    snprintf(after, sizeof after, "%s", out);
    assert_string_equal(before, after);
}

/* best --format: the table as it was, CSV quoted, JSON of the schema. */
static void best_formats(void **state)
{
    (void)state;
    EXPECT(0, "device                       arch   op       type acc  result layout", "best --db %s",
           db);
    assert_non_null(strstr(out, " sum      bf16 f32  f32    flat "));
    EXPECT(0, "device,arch,uuid,read_gbps,op,type,acc,result,n,layout,hot,segments,seg_mean,seg_spread,"
              "family,params,kernel,median_us,min_us,max_us,reps,gbps,read_pct,status,message,"
              "verified,deterministic,deterministic_checked,run_id,run_started_at,run_ended_at,"
              "measured_at\r\n", "best --db %s --format csv", db);
    assert_non_null(strstr(out, "\r\n\"Fake \"\"GPU\"\", <rev> & 2\",sm_90,feedface,3000.0,min,"
                                "f32,f32,f32,1048576,flat,0,0,0.0,0.0,tb2,B=256 R=2 PAD=1 "
                                "PAD_PERIOD=32,k3,1.6,"));
    EXPECT(0, "{\"format\":\"redtune-results\",\"version\":1,\"what\":\"best\",\"rows\":[",
           "best --db %s --format json", db);
    assert_non_null(strstr(out, "\"parameters\":{\"B\":256,\"R\":2,\"PAD\":1,\"PAD_PERIOD\":32}"));
    assert_non_null(strstr(out, "\"segmentation\":{\"layout\":\"keys\",\"profile\":\"len3\","
                                "\"segments\":5461,\"mean_length\":3.0,\"spread\":0.5}"));
    assert_non_null(strstr(out, "\"deterministic\":true"));
    assert_non_null(strstr(out, "\"layout\":\"axis:64x2048x512\",\"hot\":false,"
                                "\"segmentation\":{\"layout\":\"axis\",\"shape\":"
                                "\"64x2048x512\",\"outputs\":32768,\"len\":2048}"));
    assert_non_null(strstr(out, "\"case\":{\"op\":\"sum\",\"type\":\"bf16\",\"acc\":\"f32\","
                                "\"result\":\"f32\",\"n\":1048576,"));
    assert_non_null(strstr(out, "\"run\":{\"id\":1,\"started_at\":\""));
    /* The filters as best has them. */
    EXPECT(0, "\"rows\":[{\"device\":{\"name\":\"Other GPU\",\"arch\":\"sm_90\",\"uuid\":"
              "\"beef\",\"read_gbps\":null}", "best --db %s --format json --device other", db);
    assert_null(strstr(out, "Fake"));
    EXPECT(0, "\"rows\":[]}", "best --db %s --format json --op max", db);
    EXPECT(1, "nothing stored as best for that filter", "best --db %s --op max", db);
    /* --acc: the rows accumulated in that type. */
    EXPECT(0, " sum      bf16 f32  f32    flat ", "best --db %s --type bf16 --acc f32", db);
    assert_null(strstr(out, " min "));
    EXPECT(1, "nothing stored as best for that filter", "best --db %s --type bf16 --acc f64", db);
    EXPECT(0, "\"rows\":[{", "measurements --db %s --acc f32 --type bf16 --format json", db);
    assert_non_null(strstr(out, "\"acc\":\"f32\""));
    assert_null(strstr(out, "\"type\":\"f32\""));
    EXPECT(0, "\"rows\":[]", "measurements --db %s --acc f64 --type bf16 --format json", db);
    EXPECT(0, " sum      f32  f32  f32    axis:64x2048x512  flush     67108864  axis_cols",
           "best --db %s --type f32 --op sum", db);
    if (!have_python())
        skip();
    assert_int_equal(run("best --db %s --format csv > %s/b.csv", db, dir), 0);
    check("csv %s/b.csv 6", dir);
    assert_int_equal(run("best --db %s --format json > %s/b.json", db, dir), 0);
    check("json %s/b.json best 6", dir);
}

/* measurements: every row, failed ones too, in the three formats and with the filters. */
static void measurements_formats(void **state)
{
    (void)state;
    EXPECT(0, "status  det", "measurements --db %s", db);
    assert_non_null(strstr(out, "wrong"));
    EXPECT(0, "\"status\":\"wrong\",\"message\":\"result 1 differs, \\\"x\\\"\","
              "\"verified\":false", "measurements --db %s --format json", db);
    EXPECT(0, "\"what\":\"measurements\"", "measurements --db %s --format json --n 1024 "
           "--type f32 --op min", db);
    assert_null(strstr(out, "1048576"));
    EXPECT(0, ",wrong,\"result 1 differs, \"\"x\"\"\",0,1,,1,", "measurements --db %s "
           "--format csv", db);
    EXPECT(1, "nothing measured for that filter", "measurements --db %s --op max", db);
    EXPECT(0, "measured_at\r\n", "measurements --db %s --op max --format csv", db);
    if (!have_python())
        skip();
    assert_int_equal(run("measurements --db %s --format csv > %s/m.csv", db, dir), 0);
    check("csv %s/m.csv 10", dir);
    assert_int_equal(run("measurements --db %s --format json > %s/m.json", db, dir), 0);
    check("json %s/m.json measurements 10", dir);
    assert_int_equal(run("measurements --db %s --format csv --op max > %s/e.csv", db, dir), 0);
    check("csv %s/e.csv 0", dir);
}

/* Bad --format values and options: usage errors, exit 2; refused databases, exit 3. */
static void results_usage(void **state)
{
    (void)state;
    EXPECT(2, "--format: 'xml' is not a format (table, csv, json)\n(see redtune --help)",
           "best --db %s --format xml", db);
    EXPECT(2, "--format: 'JSON' is not a format", "measurements --format JSON");
    EXPECT(2, "option --format needs a value", "measurements --format");
    EXPECT(2, "--format given twice ('csv', then 'json')", "best --format csv --format json");
    EXPECT(2, "unknown option '--format'", "families --format csv");
    EXPECT(2, "unknown option '--format'", "report --format csv -o x.html");
    EXPECT(2, "measurements: unexpected argument 'extra'", "measurements extra");
    EXPECT(3, "tests/db/foreign.db", "measurements --db tests/db/foreign.db --format json");
    EXPECT(3, "not a redtune database", "report --db tests/db/not_sqlite.db -o %s/x.html", dir);
}

/* report: one self-contained file, every case there; outputs refused as export refuses them. */
static void report_html(void **state)
{
    (void)state;
    char html[256];
    struct stat st;
    snprintf(html, sizeof html, "%s/report.html", dir);
    EXPECT(0, "written into", "report --db %s -o %s", db, html);
    assert_int_equal(stat(html, &st), 0);
    EXPECT(1, "report.html: exists (--force overwrites it)", "report --db %s -o %s", db, html);
    EXPECT(0, "written into", "report --db %s -o %s --force", db, html);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "grep -c '<section class=\"device\">' %s", html);
    assert_int_equal(sh(cmd), 0);
    assert_string_equal(out, "2\n");
    if (have_python())
        check("report %s 'min f32 flat flush' 'sum f64 keys:len3 flush' "
              "'sum f32 axis:64x2048x512 flush' "
              "'sum bf16:acc=f32:result=f32 flat flush'", html);
    snprintf(cmd, sizeof cmd, "grep -c '<h3>sum bf16 (f32 accumulator, f32 result), flat' %s",
             html);
    assert_int_equal(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -c '<h3>sum f32, along an axis, shape 64x2048x512 (outer "
             "x len x inner), L2 flushed</h3>' %s", html);
    assert_int_equal(sh(cmd), 0);
    /* One device, by a part of its name. */
    EXPECT(0, "written into", "report --db %s --device OTHER -o %s --force", db, html);
    snprintf(cmd, sizeof cmd, "grep -c 'Fake' %s", html);
    assert_int_equal(sh(cmd), 1);   /* not there */
    EXPECT(1, "no results to report for that device", "report --db %s --device A100 -o %s/n.html",
           db, dir);
}

static void report_bad_output(void **state)
{
    (void)state;
    char link[256], cmd[512];
    EXPECT(2, "report: which output? -o FILE is required", "report --db %s", db);
    EXPECT(2, "-o: empty path", "report --db %s -o ''", db);
    EXPECT(1, "/nonexistent-dir/r.html: cannot create: directory /nonexistent-dir: No such file",
           "report --db %s -o /nonexistent-dir/r.html", db);
    EXPECT(1, "r.db: is the input", "report --db %s -o %s --force", db, db);
    EXPECT(1, "is a directory", "report --db %s -o %s --force", db, dir);
    snprintf(link, sizeof link, "%s/link.html", dir);
    assert_int_equal(symlink("/dev/stdout", link), 0);
    EXPECT(1, "link.html: is a symbolic link", "report --db %s -o %s --force", db, link);
    /* No temporary file left behind, and the link untouched. */
    snprintf(cmd, sizeof cmd, "ls -A %s | grep '^\\.'", dir);
    assert_int_equal(sh(cmd), 1);
    snprintf(cmd, sizeof cmd, "readlink %s", link);
    assert_int_equal(sh(cmd), 0);
    assert_string_equal(out, "/dev/stdout\n");
}

/* Write 'text' into dir/name; its path into 'path'. */
static void write_file(const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* report --peers: the benches' CSV files drawn on the charts of their device and case. */
static void report_peers(void **state)
{
    (void)state;
    char flat[256], axis[256], torch[256], html[256], cmd[1024];
    /* redtune_bench's flat CSV (columns in its order, a few left out): the first device's
     * name quoted as CSV quotes it; a case without CUB ("-"); one of a GPU not in the
     * database. */
    write_file("flat.csv",
               "device,arch,op,type,regime,n,bytes,limit_us,redtune_us,family,cub_status,"
               "cub_us,message\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",sm_90,min,f32,cold,1024,4096,0.001,2.9,"
               "\"gridstride\",ok,5.000,\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",sm_90,min,f32,cold,1048576,4194304,1.3,2.0,"
               "tb2,ok,2.000,\"a, b\"\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",sm_90,min,f32,hot,1048576,4194304,1.3,2.0,"
               "tb2,-,0,no CUB\n"
               "Other GPU,sm_90,min,f32,cold,1048576,4194304,1.3,2.0,tb2,ok,2.500,\n"
               "Nope GPU,sm_90,min,f32,cold,1048576,4194304,1.3,2.0,tb2,ok,2.500,\n",
               flat, sizeof flat);
    write_file("axis.csv",
               "device,arch,case,outer,len,inner,op,type,result,regime,bytes_in,bytes_out,"
               "cub_call,cub_status,cub_us\r\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",sm_90,3-D,64,2048,512,sum,f32,f32,cold,"
               "268435456,131072,\"DeviceSegmentedReduce::Reduce(+, 0)\",ok,120.0\r\n",
               axis, sizeof axis);
    write_file("torch.csv",
               "device,shape_label,shape,dim,dtype,op,bytes,limit_us,read_gbps,who,"
               "implementation,status,median_us,min_us,max_us,note\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",3-D,64x2048x512,1,float32,sum,268566528,80,"
               "3000,eager,\"torch.sum(x, 1)\",ok,130.0,129,131,\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",3-D,64x2048x512,-2,float32,sum,268566528,80,"
               "3000,Inductor,\"torch.compile(torch.sum(x, 1))\",ok,110.0,109,111,\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",3-D,64x2048x512,1,float32,sum,268566528,80,"
               "3000,redtune,\"redtune.sum(x, dim=1)\",ok,100.0,99,101,\n"
               "\"Fake \"\"GPU\"\", <rev> & 2\",3-D,64x2048x512,1,float32,sum,268566528,80,"
               "3000,eager,\"torch.sum(x, 1)\",ERROR,0,0,0,\"out of memory\"\n",
               torch, sizeof torch);
    snprintf(html, sizeof html, "%s/peers.html", dir);
    EXPECT(0, "redtune report: 1 row of --peers matched no case of",
           "report --db %s -o %s --peers %s --peers %s --peers %s", db, html, flat, axis, torch);
    /* CUB on the first device's min f32 chart and the axis chart, and on the second's. */
    snprintf(cmd, sizeof cmd, "grep -c 'data-peer=\"CUB\"' %s", html);
    assert_int_equal(sh(cmd), 0);
    assert_string_equal(out, "3\n");
    /* PyTorch eager and Inductor on the axis chart (dim -2 of a 3-D shape is dim 1); neither
     * redtune's own row nor the failed one. */
    snprintf(cmd, sizeof cmd, "grep -c 'data-peer=\"PyTorch eager\"\\|data-peer=\"PyTorch "
             "Inductor\"' %s", html);
    assert_int_equal(sh(cmd), 0);
    assert_string_equal(out, "2\n");
    snprintf(cmd, sizeof cmd, "grep -c '>130.00<\\|>129.00<\\|>100.00</td><td>1.000' %s", html);
    assert_int_equal(sh(cmd), 0);
    assert_string_equal(out, "1\n");
    /* The winner against CUB at n = 1024: 2.50 us (k2) against 5.00 us; 4096 bytes / 5 us. */
    snprintf(cmd, sizeof cmd, "grep -c '<td>1024</td><td>CUB</td><td>cub::DeviceReduce</td>"
             "<td>5.00</td><td>0.8</td><td>2.50</td><td>0.500</td>' %s", html);
    assert_int_equal(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "grep -c 'DeviceSegmentedReduce::Reduce(+, 0)</td><td>120.00</td>'"
             " %s", html);
    assert_int_equal(sh(cmd), 0);
    if (have_python())
        check("report %s 'min f32 flat flush' 'sum f32 axis:64x2048x512 flush'", html);
}

/* A peers file that is not what it should be: exit 4, the file and line named, nothing
 * written. */
static void report_bad_peers(void **state)
{
    (void)state;
    char path[256], html[256];
    struct stat st;
    static const char head[] = "device,op,type,regime,n,bytes,cub_status,cub_us\n";
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "bad.csv: empty: no header row"},
        {head, "bad.csv: a header and no rows"},
        {"x,y\n1,2\n", "bad.csv:1: a header of no bench this report reads (closest: "
         "redtune_bench's flat or --every-n CSV, which lacks device, op, type, regime, n, "
         "bytes, cub_status, cub_us); see docs/results-format.md"},
        {"device,op,dtype,shape,dim,bytes,who,status\n", "bad.csv:1: a header of no bench this "
         "report reads (closest: bench/torch_axis.py's CSV, which lacks median_us)"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\nG,min,f32,cold,8,32,ok,1,9\n",
         "bad.csv:2: 9 fields, the header has 8"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\nG,min,f32,cold,8,32,ok,fast\n",
         "bad.csv:2: column cub_us: 'fast' is not a positive number"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\n\nG,median,f32,cold,8,32,ok,1\n",
         "bad.csv:3: column op: 'median' is not an operator"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\nG,min,f32,warm,8,32,ok,1\n",
         "bad.csv:2: column regime: 'warm' is not cold or hot"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\nG,min,f32,cold,0,32,ok,1\n",
         "bad.csv:2: column n: '0' is not an integer of at least 1"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\n\"G,min,f32,cold,8,32,ok,1\n",
         "bad.csv:2: a quoted field is not closed"},
        {"device,op,type,regime,n,bytes,cub_status,cub_us\nG\"x\",min,f32,cold,8,32,ok,1\n",
         "bad.csv:2: field 1: a quote inside an unquoted field"},
        {"device,op,dtype,shape,dim,bytes,who,status,median_us\n"
         "G,sum,float32,4x5x6,3,480,eager,ok,2\n",
         "bad.csv:2: column dim: '3' is not a dimension of a 3-D shape"},
        {"device,op,dtype,shape,dim,bytes,who,status,median_us\n"
         "G,sum,float32,4xx6,1,480,eager,ok,2\n",
         "bad.csv:2: column shape: '4xx6' is not a shape"},
        {"device,op,dtype,shape,dim,bytes,who,status,median_us\n"
         "G,sum,complex64,4x6,1,480,eager,ok,2\n",
         "bad.csv:2: column dtype: 'complex64' is not a torch dtype"},
    };
    snprintf(html, sizeof html, "%s/bad.html", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file("bad.csv", bad[i].text, path, sizeof path);
        EXPECT(4, bad[i].msg, "report --db %s -o %s --peers %s", db, html, path);
        assert_int_equal(stat(html, &st), -1);
    }
    EXPECT(4, "--peers /nonexistent.csv: No such file or directory",
           "report --db %s -o %s --peers /nonexistent.csv", db, html);
    EXPECT(2, "--peers: empty path", "report --db %s -o %s --peers ''", db, html);
    EXPECT(2, "unknown option '--peers'", "best --db %s --peers %s", db, path);
    assert_int_equal(stat(html, &st), -1);
}

int test_report_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(best_formats),
        cmocka_unit_test(measurements_formats),
        cmocka_unit_test(results_usage),
        cmocka_unit_test(report_html),
        cmocka_unit_test(report_bad_output),
        cmocka_unit_test(report_peers),
        cmocka_unit_test(report_bad_peers),
        cmocka_unit_test(replay_strategies),
        cmocka_unit_test(replay_starts_from_a_like_profile),
        cmocka_unit_test(replay_bad_inputs),
    };
    return cmocka_run_group_tests_name("report", tests, make_db, remove_db);
}
