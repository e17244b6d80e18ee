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

int test_report_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(best_formats),
        cmocka_unit_test(measurements_formats),
        cmocka_unit_test(results_usage),
        cmocka_unit_test(report_html),
        cmocka_unit_test(report_bad_output),
    };
    return cmocka_run_group_tests_name("report", tests, make_db, remove_db);
}
