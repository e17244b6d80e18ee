/*
 * test_tune.c - the tuning run without a GPU: tune_run against a fake worker (this test binary
 * run as `all worker`, which speaks the pipe protocol of proto.h and times nothing). What is
 * checked is the tuner's side: the order in which candidates are measured, what a rerun
 * skips, how a faulting worker is replaced, and what is printed. The strategies through the
 * run are in test_tune_strategy.c, alone over fake candidate lists in test_strategy.c; the
 * helpers both use in tune_util.c.
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
#include <sqlite3.h>

#include "runtime/optype.h"
#include "tuner/axisdata.h"
#include "tuner/proto.h"
#include "tuner/segdata.h"
#include "tuner/tuner.h"
#include "tests/tune_util.h"

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
            } else if (q->layout != SEG_LAYOUT_FLAT) {   /* the profile's own segmentation */
                seg_data d;
                if (segdata_make(q->profile, q->n, 1, &d)) {
                    free(data);
                    return 4;
                }
                r.nseg = d.nseg;
                r.mean = d.mean;
                segdata_free(&d);
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
            r.check_s = 1e-3;   /* what a worker says its checks and timing took */
            r.time_s = 2e-3;
            rc = proto_send(1, kind, &r, sizeof r, NULL, 0);
        }
        free(data);
        if (rc)
            return 1;
    }
}

/* ---- tune_run against it ---- */

/* o tuned by local search, which compiles what it picks, into a fresh database DIR/lazy.db
 * (its path into db2): it succeeds, reuses nothing, compiles 'ncompiled' configs and fails
 * 'nfailed'. */
static void lazy_local(tune_opts *o, const char *dir, char *db2, size_t cap, int ncompiled,
                       int nfailed)
{
    char want[96];
    snprintf(db2, cap, "%s/lazy.db", dir);
    o->db_path = db2;
    o->strategy = "local";
    tu_tune_ok(o, -1);
    assert_non_null(strstr(out_text, "reused 0 from the database, the others compiled as the "
                                     "search picks them"));
    snprintf(want, sizeof want, "compiled %d configs as the search picked them, %d failed",
             ncompiled, nfailed);
    assert_non_null(strstr(out_text, want));
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

/* A fresh run measures every candidate of every size in the space's order; a rerun
 * measures nothing; a rerun after some measurements are gone measures exactly those, in
 * the same order. */
static void tune_order_and_resume(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
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
    /* where the time went: the worker's checks and timing summed over the 8 */
    assert_non_null(strstr(out_text, "checking candidates 0.01 s, timing them 0.02 s, "));
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
    tu_tune_ok(&o, -1);
    assert_non_null(strstr(out_text, "compiled 0, reused 4 from the database"));
    assert_non_null(strstr(out_text, "0 configs measured in this run"));
    assert_null(strstr(out_text, "redtune: of the "));
    assert_null(strstr(err_text, "redtune: n="));

    /* Two measurements gone: those two are measured again, nothing else. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements WHERE n = 4096 AND kernel_hash IN "
                "(SELECT hash FROM kernels WHERE family IN ('tb2', 'gridstride'))");
    tu_tune_ok(&o, 2);
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
    tu_remove(dir);
}

/* A family's @max_n (oneblock: 2^18) leaves its configs out of larger sizes: measured at 1000,
 * not at 2^19, and the progress still counts the case as done. */
static void tune_max_n(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
    tune_opts o = fake_opts(db);
    static const long long sizes[] = {1000, 1 << 19};
    o.sizes = sizes;
    o.space_path = "tests/lua/oneblock_small.lua";
    tu_tune_ok(&o, 3);
    char lines[4096];
    measured_lines(lines, sizeof lines);
    assert_non_null(strstr(lines, "redtune: n=1000 oneblock "));
    assert_non_null(strstr(lines, "redtune: n=1000 gridstride "));
    assert_non_null(strstr(lines, "redtune: n=2^19 gridstride "));
    assert_null(strstr(lines, "redtune: n=2^19 oneblock "));
    /* Compiled as picked (local) at 2^19 alone: the size's own view of the candidates maps
     * its gridstride back to the set's second config, which is compiled, and nothing else. */
    char db2[160], got[64];
    static const long long big[] = {1 << 19};
    o.sizes = big;
    o.nsizes = 1;
    lazy_local(&o, dir, db2, sizeof db2, 1, 0);
    assert_non_null(strstr(out_text, "1 configs measured in this run"));
    db_text(db2, "SELECT group_concat(k.family) FROM binaries b JOIN kernels k ON k.hash = b.hash",
            got, sizeof got);
    assert_string_equal(got, "gridstride");
    /* A config that does not compile, picked: said so, not timed, the search goes on. */
    remove(db2);
    o.space_path = "tests/lua/one_fails.lua";
    lazy_local(&o, dir, db2, sizeof db2, 1, 1);
    assert_non_null(strstr(err_text, "redtune: tb2 B=1024 R=16 PAD=1 PAD_PERIOD=1 does not "
                                     "compile:"));
    assert_non_null(strstr(out_text, "1 configs measured in this run"));
    tu_remove(dir);
}

/* A kernel that takes the worker down is stored as a fault, a new worker is started and
 * prepared again, and the run goes on with the next candidate. */
static void tune_fault_restarts_worker(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], flag[128];
    tu_scratch(dir, db, sizeof db);
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
    tu_remove(dir);
}


/* An axis run: a case per shape, each with the configs its own expansion of the space gives
 * (rows configs only where inner == 1), stored under layout axis:OxLxI with n = O*L*I,
 * nseg = O*I, seg_mean = L, seg_spread = 0 and GB/s from O*L*I elements and O*I results; a
 * rerun measures nothing; --split takes every other shape. */
static void tune_axis_cases(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[1024];
    tu_scratch(dir, db, sizeof db);
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
    db_is(db, "SELECT count(*) FROM measurements WHERE layout = 'axis:64x2048x512' AND "
              "abs(gbps - (64.0 * 2048 * 512 * 4 + 64 * 512 * 4) / (median_us * 1e-6) / 1e9) "
              "< 1e-6 * gbps", "1");
    db_text(db, "SELECT group_concat(layout || '/' || n, ' ') FROM (SELECT layout, n FROM best "
                "ORDER BY n)", got, sizeof got);
    assert_string_equal(got, "axis:5x333x1/1665 axis:65536x128x1/8388608 "
                             "axis:64x2048x512/67108864");

    tu_tune_ok(&o, 0);

    /* --split by cost (configs x (SPLIT_CONFIG_BYTES + bytes)): 65536x128x1 (3 configs of
     * 32 MiB) is the costliest and the first GPU's; 5x333x1 (3 of 6.5 KiB) and 64x2048x512
     * (1 of 256 MiB) go to the second, whose load stays below the first's. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 1;
    o.split_count = 2;
    tu_tune_ok(&o, -1);
    assert_non_null(strstr(out_text, "--split: 2 of the 3 cases here"));
    assert_non_null(strstr(out_text, "4 configs measured in this run"));
    db_is(db, "SELECT group_concat(layout, ' ') FROM (SELECT DISTINCT layout FROM "
              "measurements ORDER BY layout)", "axis:5x333x1 axis:64x2048x512");
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 0;
    tu_tune_ok(&o, -1);
    assert_non_null(strstr(out_text, "--split: 1 of the 3 cases here"));
    db_is(db, "SELECT group_concat(DISTINCT layout) FROM measurements", "axis:65536x128x1");

    /* --budget 50%: per shape, half of its own configs rounded up (3 -> 2, 1 -> 1, 3 -> 2),
     * and the progress line's total is theirs. */
    db_exec(db, "DELETE FROM best; DELETE FROM measurements");
    o.split_index = 0;
    o.split_count = 0;
    o.budget_pct = 50;
    tu_tune_ok(&o, 5);
    assert_non_null(strstr(err_text, "5/5"));
    db_is(db, "SELECT group_concat(x, ' ') FROM (SELECT layout || ':' || count(*) AS x FROM "
              "measurements GROUP BY layout ORDER BY layout)",
          "axis:5x333x1:2 axis:64x2048x512:1 axis:65536x128x1:2");

    /* local search into a fresh database compiles as it picks, through each shape's own
     * candidates (sweep.c's views of the union): the 3 configs, once each. */
    char db2[160];
    o.budget_pct = 0;
    lazy_local(&o, dir, db2, sizeof db2, 3, 0);
    assert_non_null(strstr(out_text, "7 configs measured in this run"));
    db_is(db2, "SELECT count(*) FROM binaries", "3");
    tu_remove(dir);
}

int test_tune_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tune_order_and_resume),
        cmocka_unit_test(tune_max_n),
        cmocka_unit_test(tune_fault_restarts_worker),
        cmocka_unit_test(tune_axis_cases),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
