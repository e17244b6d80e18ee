/*
 * test_tune.c - the tuning run without a GPU: tune_run against a fake worker (this test binary
 * run as `all worker`, which speaks the pipe protocol of proto.h and times nothing), and the
 * exhaustive strategy over a fake candidate list. What is checked is the tuner's side: the
 * order in which candidates are measured, what a rerun skips, how a faulting worker is
 * replaced, and what is printed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <sqlite3.h>

#include "runtime/optype.h"
#include "tuner/axisdata.h"
#include "tuner/proto.h"
#include "tuner/segdata.h"
#include "tuner/split.h"
#include "tuner/strategy.h"
#include "tuner/tuner.h"

/* ---- the fake worker ---- */

/* A made-up median for a CUBIN: FNV-1a of its bytes into 10..30 us, so each candidate has its
 * own time and reruns agree. */
static double fake_median(const unsigned char *p, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return 10.0 + (double)(h % 2000) / 100.0;
}

/* The fake machine's GPU 'ordinal': REDTUNE_FAKE_DEVICES lists the names of its GPUs,
 * comma-separated (unset: one, "Fake GPU"); the uuid differs by ordinal. 0: no such GPU. */
static int fake_device(int ordinal, rt_device *d)
{
    const char *names = getenv("REDTUNE_FAKE_DEVICES");
    char name[256] = "Fake GPU";
    if (names) {
        const char *p = names;
        for (int i = 0; i < ordinal && p; i++)
            if ((p = strchr(p, ',')))
                p++;
        if (!p)
            return 0;
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    } else if (ordinal != 0) {
        return 0;
    }
    rt_err e;
    memset(d, 0, sizeof *d);
    device_for_arch("sm_90", d, &e);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->ordinal = ordinal;
    d->mem_clock_khz = 2619000;
    d->bus_width_bits = 5120;
    d->driver_version = 13000;
    d->total_mem = 80LL << 30;
    snprintf(d->uuid, sizeof d->uuid, "00112233445566778899aabbccddee%02x", 0xff - ordinal);
    return 1;
}

/* The worker's loop: answers every request as a healthy GPU would. When the file named by
 * REDTUNE_FAKE_FAULT exists, the first MEASURE removes it and dies, as a faulting kernel
 * takes the worker down. The worker of the GPU whose ordinal REDTUNE_FAKE_DEAD names dies
 * at every PREPARE, as a GPU that has fallen off the bus. */
int test_tune_fake_worker(void)
{
    int ordinal = -1;
    for (;;) {
        uint32_t kind;
        void *data;
        size_t len;
        if (proto_recv(0, &kind, &data, &len, -1))
            return 1;
        int rc = 0;
        if (kind == MSG_QUIT) {
            free(data);
            return 0;
        } else if (kind == MSG_DEVICES) {
            devices_resp *r = calloc(1, sizeof *r);
            if (!r)
                return 1;
            while (r->count < PROTO_MAX_DEVICES && fake_device(r->count, &r->dev[r->count]))
                r->count++;
            rc = proto_send(1, kind, r, sizeof *r, NULL, 0);
            free(r);
        } else if (kind == MSG_HELLO) {
            hello_resp r;
            memset(&r, 0, sizeof r);
            ordinal = ((const hello_req *)data)->device;
            if (!fake_device(ordinal, &r.dev)) {
                r.h.code = RT_EINVAL;
                snprintf(r.h.msg, sizeof r.h.msg, "device %d does not exist", ordinal);
            }
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        } else if (kind == MSG_BANDWIDTH) {
            bw_resp r;
            memset(&r, 0, sizeof r);
            r.median_us = 100;
            r.gbps = 3000;
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        } else if (kind == MSG_OPERATOR) {
            resp_head r;
            memset(&r, 0, sizeof r);
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        } else if (kind == MSG_PREPARE) {
            const prepare_req *q = data;
            const char *dead = getenv("REDTUNE_FAKE_DEAD");
            if (dead && atoi(dead) == ordinal) {
                free(data);
                return 3;
            }
            prepare_resp r;
            memset(&r, 0, sizeof r);
            r.bytes = (double)q->n * optype_size((rt_type)q->type);
            if (q->layout == SEG_LAYOUT_AXIS) {   /* as worker_prepare.c answers */
                axis_shape sh = {q->outer, q->len, q->inner};
                if (axisdata_n(&sh) != q->n) {
                    free(data);
                    return 4;
                }
                r.nseg = axisdata_outputs(&sh);
                r.mean = (double)q->len;
                r.bytes = axisdata_bytes(&sh, optype_size((rt_type)q->type),
                                         optype_res_size((rt_op)q->op, (rt_type)q->type));
            } else if (q->layout != SEG_LAYOUT_FLAT) {
                r.nseg = q->n / 100 + 1;
                r.mean = (double)q->n / r.nseg;
                r.bytes += (double)q->n * 4;
            }
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        } else if (kind == MSG_MEASURE) {
            const char *fault = getenv("REDTUNE_FAKE_FAULT");
            if (fault && unlink(fault) == 0) {
                free(data);
                return 3;
            }
            measure_resp r;
            memset(&r, 0, sizeof r);
            snprintf(r.status, sizeof r.status, "ok");
            r.median_us = fake_median((const unsigned char *)data + sizeof(measure_req),
                                      len - sizeof(measure_req));
            r.min_us = r.median_us * 0.99;
            r.max_us = r.median_us * 1.01;
            r.reps = ((const measure_req *)data)->max_reps;   /* as the pick asked */
            r.deterministic = 1;
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        }
        free(data);
        if (rc)
            return 1;
    }
}

/* ---- tune_run against it ---- */

static char out_text[1 << 16], err_text[1 << 16];

/* Read a whole small file into 'buf'. */
static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* tune_run with stdout and stderr captured into out_text and err_text. */
static int tune_captured(const tune_opts *o, rt_err *e)
{
    char out_path[] = "/tmp/redtune_tune_outXXXXXX", err_path[] = "/tmp/redtune_tune_errXXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    assert_true(fo >= 0 && fe >= 0);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = tune_run(o, e);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(fo);
    close(fe);
    slurp(out_path, out_text, sizeof out_text);
    slurp(err_path, err_text, sizeof err_text);
    unlink(out_path);
    unlink(err_path);
    return rc;
}

static const long long tune_sizes[] = {1000, 4096};

static tune_opts fake_opts(const char *db)
{
    tune_opts o;
    memset(&o, 0, sizeof o);
    o.op = RT_SUM;
    o.type = RT_F32;
    o.sizes = tune_sizes;
    o.nsizes = 2;
    o.space_path = "tests/lua/mixed_small.lua";
    o.db_path = db;
    o.jobs = 1;
    o.verbose = 1;
    o.seed = 1;
    o.cmdline = "redtune --op sum (test_tune)";
    o.self_exe = "/proc/self/exe";
    o.layout = SEG_LAYOUT_FLAT;
    return o;
}

/* The lines of err_text that report a measurement ("redtune: n=..."), one per line. */
static void measured_lines(char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t used = 0;
    for (const char *p = err_text; (p = strstr(p, "redtune: n=")); ) {
        const char *end = strchr(p, '\n');
        size_t l = end ? (size_t)(end - p + 1) : strlen(p);
        if (used + l < cap) {
            memcpy(buf + used, p, l);
            used += l;
            buf[used] = '\0';
        }
        p += l;
    }
}

static void db_exec(const char *db, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* A fresh run measures every candidate of every size in the space's order; a rerun
 * measures nothing; a rerun after some measurements are gone measures exactly those, in
 * the same order. */
static void tune_order_and_resume(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "redtune: Fake GPU (sm_90, 132 SMs, 50 MiB L2), driver 13000"));
    assert_non_null(strstr(out_text, "redtune: 4 configs from tests/lua/mixed_small.lua: compiled 4, "
                                     "reused 0 from the database, 0 failed"));
    assert_non_null(strstr(out_text, "redtune: measured read bandwidth 3000.0 GB/s"));
    assert_non_null(strstr(out_text, "best for sum f32 flat on Fake GPU (sm_90, L2 flushed), "
                                     "read bandwidth 3000.0 GB/s:"));
    assert_non_null(strstr(out_text, "8 configs measured in this run"));
    char first[4096];
    measured_lines(first, sizeof first);
    /* The space's order within each size, the sizes in the order given. */
    const char *order[] = {"n=1000 gridstride", "n=1000 tree_sequential", "n=1000 tb2",
                           "n=1000 tb4warp", "n=2^12 gridstride", "n=2^12 tree_sequential",
                           "n=2^12 tb2", "n=2^12 tb4warp"};
    const char *p = first;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        char want[64];
        snprintf(want, sizeof want, "redtune: %s ", order[i]);
        const char *q = strstr(p, want);
        if (!q)
            print_error("no '%s' after:\n%s\n", want, p);
        assert_non_null(q);
        p = q + 1;
    }

    /* A rerun: everything is in the database already. */
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "compiled 0, reused 4 from the database"));
    assert_non_null(strstr(out_text, "0 configs measured in this run"));
    assert_null(strstr(err_text, "redtune: n="));

    /* Two measurements gone: those two are measured again, nothing else. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements WHERE n = 4096 AND kernel_hash IN "
                "(SELECT hash FROM kernels WHERE family IN ('tb2', 'gridstride'))");
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "2 configs measured in this run"));
    char again[4096];
    measured_lines(again, sizeof again);
    const char *g = strstr(again, "redtune: n=2^12 gridstride "), *t = strstr(again, "redtune: n=2^12 tb2 ");
    assert_non_null(g);
    assert_non_null(t);
    assert_true(g < t);
    assert_null(strstr(again, "n=1000"));
    /* The same lines as the first run printed for them. */
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(strchr(g, '\n') - g), g);
    assert_non_null(strstr(first, line));
    /* best was recomputed for both sizes. */
    assert_non_null(strstr(out_text, "        1000   1000  "));
    assert_non_null(strstr(out_text, "        4096   2^12  "));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A family's @max_n (oneblock: 2^18) leaves its configs out of larger sizes: measured at 1000,
 * not at 2^19, and the progress still counts the case as done. */
static void tune_max_n(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    static const long long sizes[] = {1000, 1 << 19};
    o.sizes = sizes;
    o.space_path = "tests/lua/oneblock_small.lua";
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "3 configs measured in this run"));
    char lines[4096];
    measured_lines(lines, sizeof lines);
    assert_non_null(strstr(lines, "redtune: n=1000 oneblock "));
    assert_non_null(strstr(lines, "redtune: n=1000 gridstride "));
    assert_non_null(strstr(lines, "redtune: n=2^19 gridstride "));
    assert_null(strstr(lines, "redtune: n=2^19 oneblock "));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A kernel that takes the worker down is stored as a fault, a new worker is started and
 * prepared again, and the run goes on with the next candidate. */
static void tune_fault_restarts_worker(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], flag[128];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    snprintf(flag, sizeof flag, "%s/fault", dir);
    int fd = open(flag, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    setenv("REDTUNE_FAKE_FAULT", flag, 1);
    tune_opts o = fake_opts(db);
    o.verbose = 0;
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    unsetenv("REDTUNE_FAKE_FAULT");
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(err_text, "redtune: n=1000 gridstride B=256 V=1 U=2 G=2: fault: the "
                                     "worker died while running this kernel\n"));
    assert_non_null(strstr(out_text, "8 configs measured in this run"));
    /* The others were measured (verbose is off: only the fault is printed). */
    assert_null(strstr(err_text, "redtune: n=1000 tb2"));
    assert_non_null(strstr(out_text, "        1000   1000  "));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* One text value of an SQL query on the database. */
static void db_text(const char *db, const char *sql, char *buf, size_t cap)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
}

/* Successive halving through the run: per size, the 4 candidates timed briefly (3
 * repetitions), the best 2 at the full rule; every timing stored with its repetitions, best
 * chosen from the full ones. A rerun measures nothing; with the winner's row gone, a rerun
 * times it briefly and then fully again (a row with fewer repetitions than a round asks for
 * is timed again), and nothing else. Then a local search of one config at a new size starts
 * from that best, and one of another operator from the best of the nearest similar case. */
static void tune_halving_resume_and_local_start(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[256], want[256];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    o.strategy = "halving";
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "12 configs measured in this run"));
    db_text(db, "SELECT group_concat(n || ':' || reps, ' ') FROM (SELECT n, reps FROM "
                "measurements ORDER BY n, reps)", got, sizeof got);
    assert_string_equal(got, "1000:3 1000:3 1000:200 1000:200 4096:3 4096:3 4096:200 4096:200");
    /* best: a full timing, and the fastest of all four (the fake's times ignore reps). */
    db_text(db, "SELECT count(*) FROM best b WHERE b.reps = 200 AND b.median_us = (SELECT "
                "min(median_us) FROM measurements m WHERE m.n = b.n)", got, sizeof got);
    assert_string_equal(got, "2");

    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "0 configs measured in this run"));

    db_exec(db, "DELETE FROM measurements WHERE n = 4096 AND kernel_hash = (SELECT kernel_hash "
                "FROM best WHERE n = 4096)");
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "2 configs measured in this run"));
    db_text(db, "SELECT group_concat(reps, ' ') FROM (SELECT reps FROM measurements WHERE n = "
                "4096 ORDER BY reps)", got, sizeof got);
    assert_string_equal(got, "3 3 200 200");
    db_text(db, "SELECT count(*) FROM best WHERE reps = 200", got, sizeof got);
    assert_string_equal(got, "2");

    /* local, one config at 2^11: the best known at the nearest size. */
    static const long long at[] = {2048};
    o.strategy = "local";
    o.budget = 1;
    o.sizes = at;
    o.nsizes = 1;
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "1 configs measured in this run"));
    db_text(db, "SELECT k.family || ' ' || k.params FROM best b JOIN kernels k ON k.hash = "
                "b.kernel_hash WHERE b.n = 4096", want, sizeof want);
    db_text(db, "SELECT k.family || ' ' || k.params FROM measurements m JOIN kernels k ON "
                "k.hash = m.kernel_hash WHERE m.n = 2048", got, sizeof got);
    assert_string_equal(got, want);
    /* Another operator, nothing of it known: the best of a similar case (sum of this GPU and
     * layout) nearest in input bytes, sum's 4096, rather than each family's centre. */
    db_exec(db, "UPDATE best SET kernel_hash = (SELECT hash FROM kernels WHERE family = "
                "'tb4warp') WHERE n = 4096");   /* not the first family's, where seeds begin */
    db_text(db, "SELECT k.family || ' ' || k.params FROM best b JOIN kernels k ON k.hash = "
                "b.kernel_hash WHERE b.n = 4096", want, sizeof want);
    assert_non_null(strstr(want, "tb4warp"));
    static const long long at4k[] = {4096};
    o.op = RT_MAX;
    o.sizes = at4k;
    o.cmdline = "redtune --op max (test_tune)";
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "1 configs measured in this run"));
    db_text(db, "SELECT k.family || ' ' || k.params FROM measurements m JOIN kernels k ON "
                "k.hash = m.kernel_hash WHERE m.n = 4096 AND m.op = 'max'", got, sizeof got);
    assert_string_equal(got, want);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* random with a budget of 2 configs per case: 2 of the 4 per size, the same on a rerun (which
 * measures nothing), and the progress line's total is the budget's. */
static void tune_random_budget(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[64];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    o.strategy = "random";
    o.budget = 2;
    o.strategy_seed = 5;
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "4 configs measured in this run"));
    assert_non_null(strstr(err_text, "4/4"));
    db_text(db, "SELECT count(*) FROM measurements WHERE reps = 200", got, sizeof got);
    assert_string_equal(got, "4");
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "0 configs measured in this run"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}


/* random with --budget 40%: 40% of the 4 configs of each case rounded up is 2, so the same
 * sample as --budget 2 (a rerun with that measures nothing), and the progress line's total
 * counts 2 per case. */
static void tune_random_budget_pct(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[64];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    o.strategy = "random";
    o.budget_pct = 40;
    o.strategy_seed = 5;
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "4 configs measured in this run"));
    assert_non_null(strstr(err_text, "4/4"));
    db_text(db, "SELECT count(*) FROM measurements WHERE reps = 200", got, sizeof got);
    assert_string_equal(got, "4");
    o.budget_pct = 0;
    o.budget = 2;
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "0 configs measured in this run"));
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* An axis run: a case per shape, each with the configs its own expansion of the space gives
 * (rows configs only where inner == 1), stored under layout axis:OxLxI with n = O*L*I,
 * nseg = O*I, seg_mean = L, seg_spread = 0 and GB/s from O*L*I elements and O*I results; a
 * rerun measures nothing; --split takes every other shape. */
static void tune_axis_cases(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    tune_opts o = fake_opts(db);
    o.layout = SEG_LAYOUT_AXIS;
    o.sizes = NULL;
    o.nsizes = 0;
    o.space_path = "tests/lua/axis_small.lua";
    o.shapes[0] = (axis_shape){65536, 128, 1};
    o.shapes[1] = (axis_shape){64, 2048, 512};
    o.shapes[2] = (axis_shape){5, 333, 1};
    o.nshapes = 3;
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(&o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "redtune: 3 configs from tests/lua/axis_small.lua: compiled 3"));
    assert_non_null(strstr(out_text, "7 configs measured in this run"));
    assert_non_null(strstr(out_text, "best for sum f32 axis:65536x128x1 on Fake GPU"));
    assert_non_null(strstr(out_text, "best for sum f32 axis:64x2048x512 on Fake GPU"));
    assert_non_null(strstr(err_text, "redtune: n=2^23 axis_rows "));
    db_text(db, "SELECT group_concat(x, ' ') FROM (SELECT m.layout || '/' || m.n || '/' || "
                "m.nseg || '/' || m.seg_mean || '/' || m.seg_spread || '/' || k.family AS x "
                "FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash ORDER BY m.id)",
            got, sizeof got);
    assert_string_equal(got, "axis:65536x128x1/8388608/65536/128.0/0.0/axis_rows "
                             "axis:65536x128x1/8388608/65536/128.0/0.0/axis_rows "
                             "axis:65536x128x1/8388608/65536/128.0/0.0/axis_cols "
                             "axis:64x2048x512/67108864/32768/2048.0/0.0/axis_cols "
                             "axis:5x333x1/1665/5/333.0/0.0/axis_rows "
                             "axis:5x333x1/1665/5/333.0/0.0/axis_rows "
                             "axis:5x333x1/1665/5/333.0/0.0/axis_cols");
    /* GB/s of bytes moved: O*L*I elements of 4 bytes and O*I results of 4 bytes. */
    db_text(db, "SELECT count(*) FROM measurements WHERE layout = 'axis:64x2048x512' AND "
                "abs(gbps - (64.0 * 2048 * 512 * 4 + 64 * 512 * 4) / (median_us * 1e-6) / 1e9) "
                "< 1e-6 * gbps", got, sizeof got);
    assert_string_equal(got, "1");
    db_text(db, "SELECT group_concat(layout || '/' || n, ' ') FROM (SELECT layout, n FROM best "
                "ORDER BY n)", got, sizeof got);
    assert_string_equal(got, "axis:5x333x1/1665 axis:65536x128x1/8388608 "
                             "axis:64x2048x512/67108864");

    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "0 configs measured in this run"));

    /* --split by cost (configs x (SPLIT_CONFIG_BYTES + bytes)): 65536x128x1 (3 configs of
     * 32 MiB) is the costliest and the first GPU's; 5x333x1 (3 of 6.5 KiB) and 64x2048x512
     * (1 of 256 MiB) go to the second, whose load stays below the first's. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 1;
    o.split_count = 2;
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "--split: 2 of the 3 cases here"));
    assert_non_null(strstr(out_text, "4 configs measured in this run"));
    db_text(db, "SELECT group_concat(layout, ' ') FROM (SELECT DISTINCT layout FROM "
                "measurements ORDER BY layout)", got, sizeof got);
    assert_string_equal(got, "axis:5x333x1 axis:64x2048x512");
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 0;
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "--split: 1 of the 3 cases here"));
    db_text(db, "SELECT group_concat(DISTINCT layout) FROM measurements", got, sizeof got);
    assert_string_equal(got, "axis:65536x128x1");

    /* --budget 50%: per shape, half of its own configs rounded up (3 -> 2, 1 -> 1, 3 -> 2),
     * and the progress line's total is theirs. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 0;
    o.split_count = 0;
    o.budget_pct = 50;
    rc = tune_captured(&o, &e);
    assert_int_equal(rc, RT_OK);
    assert_non_null(strstr(out_text, "5 configs measured in this run"));
    assert_non_null(strstr(err_text, "5/5"));
    db_text(db, "SELECT group_concat(x, ' ') FROM (SELECT layout || ':' || count(*) AS x FROM "
                "measurements GROUP BY layout ORDER BY layout)", got, sizeof got);
    assert_string_equal(got, "axis:5x333x1:2 axis:64x2048x512:1 axis:65536x128x1:2");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* --split's division (split.c): the costliest case first, each to the least loaded share;
 * equal costs in order, ties to the lowest share; `--op min`'s eleven sizes of 2^10 .. 2^30
 * on two GPUs put 2^30 alone on one; on random costs every case has one share, no share is
 * empty, and the loads differ by at most the largest cost. */
static void split_divides_by_cost(void **state)
{
    (void)state;
    int owner[32];
    const double even[3] = {1, 1, 1};
    assert_int_equal(split_assign(even, 3, 2, owner), 0);
    assert_int_equal(owner[0], 0);
    assert_int_equal(owner[1], 1);
    assert_int_equal(owner[2], 0);

    double cost[32];
    for (int i = 0; i < 11; i++)
        cost[i] = split_case_cost(88, 4.0 * (double)(1LL << (10 + 2 * i)));
    assert_int_equal(split_assign(cost, 11, 2, owner), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal(owner[i], 1);
    assert_int_equal(owner[10], 0);

    unsigned long long x = 12345;
    for (int trial = 0; trial < 50; trial++) {
        int k = 2 + trial % 4, nc = k + (int)(x % 20);
        double load[8] = {0}, top = 0;
        int used[8] = {0};
        for (int i = 0; i < nc; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            cost[i] = 1 + (double)(x >> 40);
            top = cost[i] > top ? cost[i] : top;
        }
        assert_int_equal(split_assign(cost, nc, k, owner), 0);
        for (int i = 0; i < nc; i++) {
            assert_true(owner[i] >= 0 && owner[i] < k);
            load[owner[i]] += cost[i];
            used[owner[i]] = 1;
        }
        double lo = load[0], hi = load[0];
        for (int j = 0; j < k; j++) {
            assert_true(used[j]);
            lo = load[j] < lo ? load[j] : lo;
            hi = load[j] > hi ? load[j] : hi;
        }
        assert_true(hi - lo <= top);
    }
}

/* --budget P%: P percent of the case's configs rounded up, at least 1, at most all; whole
 * percentages and tenths exactly as integer arithmetic rounds them (0.2 * 80 in doubles is
 * above 16); a count or no budget passes through. */
static void budget_percentage_rounds_up(void **state)
{
    (void)state;
    assert_int_equal(strategy_budget(0, 20, 81), 17);
    assert_int_equal(strategy_budget(0, 20, 80), 16);
    assert_int_equal(strategy_budget(0, 0.1, 10), 1);
    assert_int_equal(strategy_budget(0, 0.001, 700), 1);
    assert_int_equal(strategy_budget(0, 100, 81), 81);
    assert_int_equal(strategy_budget(0, 12.5, 8), 1);
    assert_int_equal(strategy_budget(0, 33.3, 1000), 333);
    assert_int_equal(strategy_budget(0, 50, 0), 0);
    assert_int_equal(strategy_budget(7, 0, 81), 7);
    assert_int_equal(strategy_budget(0, 0, 81), 0);
    for (long n = 1; n <= 1000; n++)
        for (long t = 1; t <= 1000; t++) {   /* t tenths of a percent */
            long want = (t * n + 999) / 1000;
            if (strategy_budget(0, (double)t / 10, (int)n) != want)
                fail_msg("%.1f%% of %ld: %ld, not %ld", (double)t / 10, n,
                         strategy_budget(0, (double)t / 10, (int)n), want);
        }
    /* --budget P%,N: the share, but at least N configs (and never more than there are);
     * a count or no share has no floor. */
    assert_int_equal(strategy_budget_min(0, 15, 8, 33), 8);
    assert_int_equal(strategy_budget_min(0, 15, 8, 80), 12);
    assert_int_equal(strategy_budget_min(0, 15, 8, 5), 5);
    assert_int_equal(strategy_budget_min(0, 15, 0, 33), 5);
    assert_int_equal(strategy_budget_min(0, 0, 8, 80), 0);
    assert_int_equal(strategy_budget_min(7, 0, 8, 80), 7);
    /* halving: a percentage is its first round's sample, as a count is. */
    assert_int_equal(strategy_halving.planned(81, strategy_budget(0, 20, 81)), 17 + 6 + 2);
}

/* ---- the exhaustive strategy over a fake candidate list ---- */

/* Every candidate once, in the space's order, whatever is observed; the candidates that did
 * not compile or that the database holds are offered too (the run skips them and counts
 * them as done), so a resumed case offers exactly what a fresh one does. */
static void exhaustive_order_and_resume(void **state)
{
    (void)state;
    cand c[5];
    memset(c, 0, sizeof c);
    c[1].rc = RT_ENVRTC;   /* did not compile */
    const strategy_ops *x = &strategy_exhaustive;
    assert_string_equal(x->name, "exhaustive");
    assert_int_equal(x->planned(5, 0), 5);
    assert_int_equal(x->planned(0, 0), 0);
    assert_int_equal(x->planned(5, 3), 3);
    strategy_case cs = {c, 5, 4096, 1, 0, -1};
    store_measurement ok = {.status = "ok", .median_us = 12.5};
    store_measurement fault = {.status = "fault"};
    /* A fresh case: measured, uncompiled, fault, ok, ok. A resumed one: all stored but the
     * last. The picks are the same. */
    const int outcome[2][5] = {
        {STRATEGY_MEASURED, STRATEGY_UNCOMPILED, STRATEGY_MEASURED, STRATEGY_MEASURED,
         STRATEGY_MEASURED},
        {STRATEGY_STORED, STRATEGY_UNCOMPILED, STRATEGY_STORED, STRATEGY_STORED,
         STRATEGY_MEASURED},
    };
    for (int run = 0; run < 2; run++) {
        strategy s = {x, NULL};
        rt_err e;
        assert_int_equal(x->init(&s, &cs, &e), RT_OK);
        strategy_pick p;
        int k = 0;
        while (x->next(&s, 0, &p)) {
            assert_true(k < 5);
            assert_int_equal(p.cand, k);
            /* How the tuner has always timed a candidate. */
            assert_int_equal(p.min_reps, 10);
            assert_int_equal(p.max_reps, 200);
            assert_true(p.budget_s == 0.25);
            strategy_result r = {p.cand, outcome[run][k],
                                 outcome[run][k] != STRATEGY_MEASURED ? NULL
                                 : k == 2 ? &fault : &ok};
            x->observe(&s, &r);
            k++;
        }
        assert_int_equal(k, 5);
        assert_int_equal(x->next(&s, 0, &p), 0);   /* done stays done */
        x->fini(&s);
        assert_null(s.state);
        x->fini(&s);   /* harmless twice: the run's error path calls it again */
    }
    /* A case with no candidates is done at once. */
    strategy_case none = {c, 0, 4096, 1, 0, -1};
    strategy s = {x, NULL};
    rt_err e;
    assert_int_equal(x->init(&s, &none, &e), RT_OK);
    strategy_pick p;
    assert_int_equal(x->next(&s, 0, &p), 0);
    x->fini(&s);
}

/* ---- the other strategies over a fake candidate list ---- */

/* A grid of gridstride configs (B 128..1024, V 1/4, U 1..8, G 1..8) with the holes a space's
 * constraint makes (B * G <= 2048), then a few tree_sequential ones; one did not compile. */
typedef struct fake_space {
    cand c[160];
    int n;
} fake_space;

static void fake_space_make(fake_space *f)
{
    memset(f, 0, sizeof *f);
    const rt_family *gs = family_find("gridstride"), *ts = family_find("tree_sequential");
    assert_non_null(gs);
    assert_non_null(ts);
    for (long long b = 128; b <= 1024; b *= 2)
        for (long long v = 1; v <= 4; v += 3)
            for (long long u = 1; u <= 8; u *= 2)
                for (long long g = 1; g <= 8; g *= 2) {
                    if (b * g > 2048)
                        continue;
                    rt_config *k = &f->c[f->n++].cfg;
                    config_default(gs, k);
                    k->values[0] = b, k->values[1] = v, k->values[2] = u, k->values[3] = g;
                }
    for (long long b = 128; b <= 1024; b *= 2)
        for (long long r = 1; r <= 16; r *= 4) {
            rt_config *k = &f->c[f->n++].cfg;
            config_default(ts, k);
            k->values[0] = b, k->values[1] = r;
        }
    f->c[5].rc = RT_ENVRTC;
}

/* A unimodal cost: the best is gridstride B=256 V=4 U=4 G=2 (20 us), each step away costs
 * more; tree_sequential is slower still. */
static double fake_cost(const cand *c)
{
    const rt_config *k = &c->cfg;
    double d = fabs(log2((double)k->values[0]) - 8);
    if (!strcmp(k->family->name, "gridstride"))
        return 20 + 3 * d + (k->values[1] == 4 ? 0 : 5)
               + 2 * fabs(log2((double)k->values[2]) - 2) + fabs(log2((double)k->values[3]) - 1);
    return 60 + d + fabs(log2((double)k->values[1]) - 2);
}

/* Run a strategy over the fake space as sweep.c does, measuring with fake_cost: the picks
 * into 'picks' (their count returned); 'time_up_after' picks, then time is up (-1: never). */
static int fake_search(const strategy_ops *x, const strategy_case *cs, strategy_pick *picks,
                       int cap, int time_up_after)
{
    strategy s = {x, NULL};
    rt_err e;
    assert_int_equal(x->init(&s, cs, &e), RT_OK);
    strategy_pick p;
    int k = 0;
    while (x->next(&s, time_up_after >= 0 && k >= time_up_after, &p)) {
        assert_true(k < cap);
        assert_true(p.cand >= 0 && p.cand < cs->n);
        assert_int_equal(cs->c[p.cand].rc, RT_OK);   /* only compiled candidates */
        picks[k++] = p;
        store_measurement m = {.status = "ok", .median_us = fake_cost(&cs->c[p.cand]),
                               .reps = p.max_reps};
        strategy_result r = {p.cand, STRATEGY_MEASURED, &m};
        x->observe(&s, &r);
    }
    assert_int_equal(x->next(&s, 0, &p), 0);   /* done stays done */
    x->fini(&s);
    assert_null(s.state);
    x->fini(&s);
    return k;
}

static int best_of(const fake_space *f)
{
    int best = -1;
    for (int i = 0; i < f->n; i++)
        if (!f->c[i].rc && (best < 0 || fake_cost(&f->c[i]) < fake_cost(&f->c[best])))
            best = i;
    return best;
}

/* random: the budget's number of distinct compiled candidates at the full rule, the same
 * ones in the same order for the same seed and size, others for another seed. */
static void random_seeded_within_budget(void **state)
{
    (void)state;
    static fake_space f;
    fake_space_make(&f);
    const strategy_ops *x = strategy_find("random");
    assert_ptr_equal(x, &strategy_random);
    assert_int_equal(x->planned(f.n, 10), 10);
    assert_int_equal(x->planned(f.n, 0), f.n);
    strategy_pick a[200], b[200], c[200];
    strategy_case cs = {f.c, f.n, 1 << 20, 7, 10, -1};
    int na = fake_search(x, &cs, a, 200, -1), nb = fake_search(x, &cs, b, 200, -1);
    assert_int_equal(na, 10);
    assert_int_equal(nb, 10);
    assert_memory_equal(a, b, sizeof a[0] * 10);
    for (int i = 0; i < na; i++) {
        assert_int_equal(a[i].min_reps, STRATEGY_FULL_MIN);
        assert_int_equal(a[i].max_reps, STRATEGY_FULL_MAX);
        for (int j = 0; j < i; j++)
            assert_int_not_equal(a[i].cand, a[j].cand);   /* without replacement */
    }
    cs.seed = 8;
    fake_search(x, &cs, c, 200, -1);
    assert_true(memcmp(a, c, sizeof a[0] * 10) != 0);
    /* No budget: every compiled candidate once; time up: no more. */
    cs.budget = 0;
    assert_int_equal(fake_search(x, &cs, c, 200, -1), f.n - 1);
    assert_int_equal(fake_search(x, &cs, c, 200, 3), 3);
}

/* halving: rounds of 3 and 9 repetitions over fewer and fewer candidates, each a subset of
 * the last round's best third; the best survives to the final round at the full rule, and
 * the picks stay within planned. With a budget, round 0 is a sample of that many. When time
 * is up, the leader so far gets one full timing. */
static void halving_keeps_the_best(void **state)
{
    (void)state;
    static fake_space f;
    fake_space_make(&f);
    const strategy_ops *x = strategy_find("halving");
    strategy_pick p[400];
    strategy_case cs = {f.c, f.n, 1 << 20, 1, 0, -1};
    int k = fake_search(x, &cs, p, 400, -1), best = best_of(&f);
    assert_true(k <= x->planned(f.n, 0));
    /* Round 0: every compiled candidate, briefly. */
    int r0 = 0;
    while (r0 < k && p[r0].max_reps == 3)
        r0++;
    assert_int_equal(r0, f.n - 1);
    /* The last picks are the final round: at most 3, at the full rule, the best among them. */
    int fin = k;
    while (fin > 0 && p[fin - 1].min_reps == STRATEGY_FULL_MIN)
        fin--;
    assert_true(k - fin >= 1 && k - fin <= 3);
    int seen_best = 0;
    for (int i = fin; i < k; i++) {
        assert_int_equal(p[i].max_reps, STRATEGY_FULL_MAX);
        seen_best |= p[i].cand == best;
    }
    assert_true(seen_best);
    /* Brief timings never reach the full rule's floor (best leaves them out). */
    for (int i = 0; i < fin; i++)
        assert_true(p[i].max_reps < STRATEGY_FULL_MIN);
    assert_int_equal(x->planned(9, 0), 9 + 3);
    assert_int_equal(x->planned(100, 30), 30 + 10 + 4 + 2);

    /* A budget of 12: 12 briefly, 4 again, 2 at the full rule. */
    cs.budget = 12;
    k = fake_search(x, &cs, p, 400, -1);
    assert_int_equal(k, 12 + 4 + 2);
    assert_int_equal(p[12].max_reps, 9);
    assert_int_equal(p[16].max_reps, STRATEGY_FULL_MAX);

    /* Time up after 5 brief picks: the fastest of them, once more at the full rule. */
    cs.budget = 0;
    k = fake_search(x, &cs, p, 400, 5);
    assert_int_equal(k, 6);
    int lead = p[0].cand;
    for (int i = 1; i < 5; i++)
        if (fake_cost(&f.c[p[i].cand]) < fake_cost(&f.c[lead]))
            lead = p[i].cand;
    assert_int_equal(p[5].cand, lead);
    assert_int_equal(p[5].min_reps, STRATEGY_FULL_MIN);
}

/* local: from a far corner (or from another family) to the optimum of a unimodal cost,
 * visiting each candidate once, every pick one step from a config visited before (or the
 * start), and far fewer than all; the budget stops it. With nothing known it times the
 * centre of each family first (gridstride's, then tree_sequential's: the parameters' median
 * values) and goes on from the better. */
static void local_finds_the_optimum(void **state)
{
    (void)state;
    static fake_space f;
    fake_space_make(&f);
    const strategy_ops *x = strategy_find("local");
    int best = best_of(&f), corner = -1, tree = -1;
    for (int i = 0; i < f.n; i++) {
        const rt_config *k = &f.c[i].cfg;
        if (!strcmp(k->family->name, "gridstride") && k->values[0] == 1024 && k->values[1] == 1
            && k->values[2] == 8 && k->values[3] == 2)
            corner = i;
        if (!strcmp(k->family->name, "tree_sequential") && tree < 0)
            tree = i;
    }
    assert_true(corner >= 0 && tree >= 0);
    const int starts[] = {corner, tree, -1};
    for (int si = 0; si < 3; si++) {
        strategy_pick p[200];
        strategy_case cs = {f.c, f.n, 1 << 20, 1, 0, starts[si]};
        int k = fake_search(x, &cs, p, 200, -1);
        if (starts[si] >= 0) {
            assert_int_equal(p[0].cand, starts[si]);
        } else {   /* the centres: gridstride B=256 V=4 U=4 G=2 (the medians of its 103
                    * compiled configs; also fake_cost's optimum) and tree_sequential B=512
                    * R=4 */
            const rt_config *a = &f.c[p[0].cand].cfg, *b = &f.c[p[1].cand].cfg;
            assert_string_equal(a->family->name, "gridstride");
            assert_true(a->values[0] == 256 && a->values[1] == 4 && a->values[2] == 4
                        && a->values[3] == 2);
            assert_string_equal(b->family->name, "tree_sequential");
            assert_true(b->values[0] == 512 && b->values[1] == 4);
        }
        int found = 0;
        for (int i = 0; i < k; i++) {
            assert_int_equal(p[i].min_reps, STRATEGY_FULL_MIN);
            found |= p[i].cand == best;
            int near = i == 0;
            for (int j = 0; j < i; j++) {
                assert_int_not_equal(p[i].cand, p[j].cand);
                const rt_config *a = &f.c[p[i].cand].cfg, *b = &f.c[p[j].cand].cfg;
                int differ = 0;
                for (int q = 0; a->family == b->family && q < a->family->nparams; q++)
                    differ += a->values[q] != b->values[q];
                near |= a->family != b->family || differ == 1;
            }
            assert_true(near);
        }
        if (!found)
            print_error("start %d: %d picks, the optimum %d not among them\n", starts[si], k,
                        best);
        assert_true(found);
        assert_true(k < f.n / 2);
    }
    strategy_pick p[200];
    strategy_case cs = {f.c, f.n, 1 << 20, 1, 4, corner};
    assert_int_equal(fake_search(x, &cs, p, 200, -1), 4);
    cs.budget = 0;
    assert_int_equal(fake_search(x, &cs, p, 200, 2), 2);
}

/* local with a budget of configs left at a local optimum: it starts again in the family
 * least visited, so the whole budget is spent and every family of the space is timed; the
 * optimum is still found, and no candidate twice. */
static void local_restarts_within_budget(void **state)
{
    (void)state;
    static fake_space f;
    fake_space_make(&f);
    const strategy_ops *x = strategy_find("local");
    int best = best_of(&f), corner = -1;
    for (int i = 0; i < f.n && corner < 0; i++)
        if (!strcmp(f.c[i].cfg.family->name, "tree_sequential"))
            corner = i;
    strategy_pick p[200];
    strategy_case cs = {f.c, f.n, 1 << 20, 1, 0, corner};
    int alone = fake_search(x, &cs, p, 200, -1);   /* no budget: one basin, then stop */
    cs.budget = alone + 6;
    assert_true(cs.budget < f.n - 1);
    int k = fake_search(x, &cs, p, 200, -1), found = 0, fams = 0;
    assert_int_equal(k, cs.budget);
    const rt_family *seen[4] = {NULL};
    for (int i = 0; i < k; i++) {
        found |= p[i].cand == best;
        for (int j = 0; j < i; j++)
            assert_int_not_equal(p[i].cand, p[j].cand);
        int known = 0;
        for (int q = 0; q < fams; q++)
            known |= seen[q] == f.c[p[i].cand].cfg.family;
        if (!known && fams < 4)
            seen[fams++] = f.c[p[i].cand].cfg.family;
    }
    assert_true(found);
    assert_int_equal(fams, 2);
}

/* A space of four families in the default space's order (tree_interleaved, tree_sequential,
 * oneblock, gridstride), B = 128..1024 each (candidate 4 f + log2(B / 128)); a config costs
 * its family's cost[f] plus B's distance from 256 in octaves. local from 'start' without a
 * budget: its picks' candidates into 'picks', their count returned. */
static int four_families(int start, const double cost[4], int *picks, int cap)
{
    static fake_space f;
    memset(&f, 0, sizeof f);
    const char *fams[] = {"tree_interleaved", "tree_sequential", "oneblock", "gridstride"};
    for (int fi = 0; fi < 4; fi++)
        for (long long b = 128; b <= 1024; b *= 2) {
            rt_config *k = &f.c[f.n++].cfg;
            rt_err e;
            config_default(family_find(fams[fi]), k);
            assert_int_equal(config_set(k, "B", b, &e), RT_OK);
        }
    strategy s = {&strategy_local, NULL};
    rt_err e;
    strategy_case cs = {f.c, f.n, 1 << 20, 1, 0, start};
    assert_int_equal(strategy_local.init(&s, &cs, &e), RT_OK);
    strategy_pick p;
    int k = 0;
    while (k < cap && strategy_local.next(&s, 0, &p)) {
        store_measurement m = {.status = "ok", .reps = STRATEGY_FULL_MIN,
                               .median_us = cost[p.cand / 4] + fabs(p.cand % 4 - 1.0)};
        strategy_result r = {p.cand, STRATEGY_MEASURED, &m};
        strategy_local.observe(&s, &r);
        picks[k++] = p.cand;
    }
    strategy_local.fini(&s);
    return k;
}

/* local: every other family is one step away, not only the families next to the current one
 * in the space's order: gridstride the fastest, oneblock the slowest, a search from
 * tree_sequential that could only step to its neighbours in that order (the interleaved
 * tree, oneblock) stayed in tree_sequential; now it reaches gridstride within its first
 * neighbourhood. And a neighbour that takes at most half the current config's time is moved
 * to at once: from tree_interleaved B=1024 (52 us), tree_sequential B=1024 (22) is followed
 * by its own neighbours before oneblock and gridstride are timed. */
static void local_reaches_every_family(void **state)
{
    (void)state;
    int picks[32], k, grid_at = -1;
    const double slow_ob[4] = {50, 40, 90, 10};
    k = four_families(5, slow_ob, picks, 32);   /* tree_sequential B=256 */
    for (int i = 0; i < k && grid_at < 0; i++)
        if (picks[i] / 4 == 3)
            grid_at = i;
    assert_true(grid_at >= 1 && grid_at <= 5);   /* the start, its B steps, then families */
    assert_true(k < 16);
    const double fast_ts[4] = {50, 20, 90, 10};
    k = four_families(3, fast_ts, picks, 32);    /* tree_interleaved B=1024 */
    assert_true(k >= 5);
    assert_int_equal(picks[0], 3);
    assert_int_equal(picks[1], 2);               /* tree_interleaved B=512 */
    assert_int_equal(picks[2], 7);               /* tree_sequential B=1024: 22 < 52 / 2 */
    assert_int_equal(picks[3] / 4, 1);           /* at once: tree_sequential B=512 */
}

int test_tune_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exhaustive_order_and_resume),
        cmocka_unit_test(random_seeded_within_budget),
        cmocka_unit_test(halving_keeps_the_best),
        cmocka_unit_test(local_finds_the_optimum),
        cmocka_unit_test(local_restarts_within_budget),
        cmocka_unit_test(local_reaches_every_family),
        cmocka_unit_test(tune_order_and_resume),
        cmocka_unit_test(tune_max_n),
        cmocka_unit_test(tune_fault_restarts_worker),
        cmocka_unit_test(tune_halving_resume_and_local_start),
        cmocka_unit_test(tune_random_budget),
        cmocka_unit_test(tune_random_budget_pct),
        cmocka_unit_test(budget_percentage_rounds_up),
        cmocka_unit_test(tune_axis_cases),
        cmocka_unit_test(split_divides_by_cost),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
