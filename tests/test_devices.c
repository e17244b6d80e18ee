/*
 * test_devices.c - `redtune --device all | LIST` without a GPU: the GPUs listed and checked
 * by tuner/devices.c against test_tune.c's fake worker (this test binary run as `all worker`;
 * REDTUNE_FAKE_DEVICES names the fake machine's GPUs, REDTUNE_FAKE_DEAD one whose worker dies
 * at every PREPARE), several GPUs tuned concurrently into one database file, a GPU whose run
 * fails or whose tuner is killed while the others complete, --split between identical GPUs,
 * and the bad --device values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>

#include "runtime/optype.h"
#include "tuner/cli.h"
#include "tuner/devices.h"
#include "tuner/tuner.h"
#include "tests/tune_util.h"

/* A GPU's run as main.c's: tune_run, exit status 0 or 1. With kill_gpu >= 0, the run of that
 * GPU kills itself first, as a tuner that crashes would die. */
static int kill_gpu = -1;
static int run_one(tune_opts *o, void *arg, rt_err *e)
{
    (void)arg;
    if (o->device == kill_gpu)
        raise(SIGKILL);
    return tune_run(o, e) ? 1 : 0;
}

/* devices_tune with stdout and stderr captured into out_text and err_text. */
typedef struct {
    const tune_opts *o;
    const devices_plan *p;
    int *worst;
    rt_err *e;
} devices_args;

static int run_devices(void *arg)
{
    devices_args *a = arg;
    return devices_tune(a->o, a->p, run_one, NULL, a->worst, a->e);
}

static int devices_captured(const tune_opts *o, const devices_plan *p, int *worst, rt_err *e)
{
    devices_args a = {o, p, worst, e};
    return tu_capture(run_devices, &a);
}

static const long long sizes3[] = {1000, 4096, 16384};

/* fake_opts (tune_util.c) for --device all: the sizes 1000, 4096 (and 16384 where a test
 * sets nsizes = 3), two compile jobs, not verbose. */
static tune_opts devices_opts(const char *db)
{
    tune_opts o = fake_opts(db);
    o.sizes = sizes3;
    o.jobs = 2;
    o.verbose = 0;
    o.cmdline = "redtune --op sum --device all (test_devices)";
    return o;
}

#define HAS(text, s)                                                          \
    do {                                                                      \
        if (!strstr((text), (s)))                                             \
            print_error("no '%s' in:\n%s\n---\n%s\n", (s), out_text, err_text); \
        assert_non_null(strstr((text), (s)));                                 \
    } while (0)

/* Two GPUs of the fake machine, `--device all`: both tuned, each by its own process and
 * worker, into one file; each run row complete, every measurement of each there under its
 * own device, each line of the display prefixed with its GPU. */
static void devices_two_into_one_db(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_devXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
    setenv("REDTUNE_FAKE_DEVICES", "Fake GPU,Other GPU", 1);
    devices_plan p;
    rt_err e;
    rt_clearerr(&e);
    int rc = devices_plan_make("/proc/self/exe", NULL, 0, 1, 0, "all", &p, &e);
    if (rc)
        print_error("%s\n", e.msg);
    assert_int_equal(rc, RT_OK);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.dev[1].name, "Other GPU");
    tune_opts o = devices_opts(db);
    int worst = -1;
    rc = devices_captured(&o, &p, &worst, &e);
    unsetenv("REDTUNE_FAKE_DEVICES");
    assert_int_equal(rc, RT_OK);
    if (worst)
        print_error("%s\n---\n%s\n", out_text, err_text);
    assert_int_equal(worst, 0);
    HAS(out_text, "redtune: tuning 2 GPUs, each in its own process: gpu 0 (Fake GPU), gpu 1 "
                  "(Other GPU)\n");
    HAS(out_text, "[gpu 0] redtune: Fake GPU (sm_90, 132 SMs, 50 MiB L2), driver 13000");
    HAS(out_text, "[gpu 1] redtune: Other GPU (sm_90, 132 SMs, 50 MiB L2), driver 13000");
    HAS(out_text, "[gpu 0] best for sum f32 flat on Fake GPU");
    HAS(out_text, "[gpu 1] best for sum f32 flat on Other GPU");
    HAS(out_text, "[gpu 0] 8 configs measured in this run");
    HAS(out_text, "[gpu 1] 8 configs measured in this run");
    HAS(err_text, "[gpu 1] done  8/8");   /* each GPU's progress, prefixed */
    HAS(out_text, "redtune: gpu 0 (Fake GPU): done\nredtune: gpu 1 (Other GPU): done\n");
    assert_null(strstr(err_text, "failed"));
    db_is(db, "SELECT group_concat(name || ':' || nruns || ':' || nended || ':' || nmeas, ' ') "
              "FROM (SELECT d.name, (SELECT count(*) FROM runs r WHERE r.device_id = d.id) AS "
              "nruns, (SELECT count(*) FROM runs r WHERE r.device_id = d.id AND ended_at IS NOT "
              "NULL) AS nended, (SELECT count(*) FROM measurements m WHERE m.device_id = d.id AND "
              "m.status = 'ok') AS nmeas FROM devices d ORDER BY d.ordinal)",
          "Fake GPU:1:1:8 Other GPU:1:1:8");
    db_is(db, "SELECT count(*) FROM best", "4");
    tu_remove(dir);
}

/* One GPU's worker dies at every PREPARE (a GPU gone bad): that GPU's run fails, named with
 * its GPU, exit status 1; the other GPU's run completes whole. Then a GPU whose tuner itself
 * is killed: reported with its signal, status 1, the other complete again (a rerun of it
 * measures nothing new). */
static void devices_one_fails_others_go_on(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_devXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
    setenv("REDTUNE_FAKE_DEVICES", "Fake GPU,Other GPU", 1);
    setenv("REDTUNE_FAKE_DEAD", "1", 1);
    devices_plan p;
    rt_err e;
    rt_clearerr(&e);
    static const int both[] = {1, 0};
    int rc = devices_plan_make("/proc/self/exe", both, 2, 0, 0, "1,0", &p, &e);
    assert_int_equal(rc, RT_OK);
    assert_int_equal(p.dev[0].ordinal, 1);
    tune_opts o = devices_opts(db);
    int worst = -1;
    rc = devices_captured(&o, &p, &worst, &e);
    unsetenv("REDTUNE_FAKE_DEAD");
    assert_int_equal(rc, RT_OK);
    assert_int_equal(worst, 1);
    HAS(err_text, "[gpu 1] redtune: the GPU worker died preparing n = 1000 (flat)\n");
    HAS(err_text, "redtune: gpu 1 (Other GPU): failed, exit status 1 (its lines above say why); "
                  "the other GPUs went on\n");
    HAS(out_text, "[gpu 0] 8 configs measured in this run");
    HAS(out_text, "redtune: gpu 0 (Fake GPU): done\n");
    /* GPU 1: its device and run rows, the run never ended, nothing measured. */
    db_is(db, "SELECT group_concat(name || ':' || coalesce(ended, 'open') || ':' || nmeas, ' ') "
              "FROM (SELECT d.name, (SELECT CASE WHEN ended_at IS NULL THEN NULL ELSE 'ended' "
              "END FROM runs r WHERE r.device_id = d.id) AS ended, (SELECT count(*) FROM "
              "measurements m WHERE m.device_id = d.id) AS nmeas FROM devices d ORDER BY "
              "d.ordinal)", "Fake GPU:ended:8 Other GPU:open:0");

    kill_gpu = 1;
    rc = devices_captured(&o, &p, &worst, &e);
    kill_gpu = -1;
    unsetenv("REDTUNE_FAKE_DEVICES");
    assert_int_equal(rc, RT_OK);
    assert_int_equal(worst, 1);
    HAS(err_text, "redtune: gpu 1 (Other GPU): killed by signal 9; the other GPUs went on\n");
    HAS(out_text, "[gpu 0] 0 configs measured in this run");
    db_is(db, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL", "2");
    tu_remove(dir);
}

/* --split: two identical GPUs divide the cases by cost (of three sizes of nearly one cost:
 * the largest on the first GPU, the two others on the second), each under its own device
 * row; a GPU that differs in one of the properties is not identical and tunes every case. */
static void devices_split_identical(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_devXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
    setenv("REDTUNE_FAKE_DEVICES", "Fake GPU,Fake GPU,Other GPU", 1);
    devices_plan p;
    rt_err e;
    rt_clearerr(&e);
    int rc = devices_plan_make("/proc/self/exe", NULL, 0, 1, 1, "all", &p, &e);
    assert_int_equal(rc, RT_OK);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.split_count[0], 2);
    assert_int_equal(p.split_count[1], 2);
    assert_int_equal(p.split_index[0], 0);
    assert_int_equal(p.split_index[1], 1);
    assert_int_equal(p.split_count[2], 1);
    tune_opts o = devices_opts(db);
    o.nsizes = 3;
    int worst = -1;
    rc = devices_captured(&o, &p, &worst, &e);
    unsetenv("REDTUNE_FAKE_DEVICES");
    assert_int_equal(rc, RT_OK);
    if (worst)
        print_error("%s\n---\n%s\n", out_text, err_text);
    assert_int_equal(worst, 0);
    HAS(out_text, "gpu 0 (Fake GPU, --split), gpu 1 (Fake GPU, --split), gpu 2 (Other GPU)\n");
    HAS(out_text, "[gpu 0] redtune: --split: 1 of the 3 cases here (share 1 of 2), the others "
                  "on identical GPUs\n");
    HAS(out_text, "[gpu 1] redtune: --split: 2 of the 3 cases here (share 2 of 2)");
    assert_null(strstr(out_text, "[gpu 2] redtune: --split"));
    db_is(db, "SELECT group_concat(ordinal || ':' || ns, ' ') FROM (SELECT d.ordinal, "
              "(SELECT group_concat(n, ',') FROM (SELECT DISTINCT n FROM measurements m WHERE "
              "m.device_id = d.id ORDER BY n)) AS ns FROM devices d ORDER BY d.ordinal)",
          "0:16384 1:1000,4096 2:1000,4096,16384");

    /* Identity: name, compute capability, SMs, memory clock, bus width. */
    rt_device a = p.dev[0], b = p.dev[1];
    assert_true(devices_identical(&a, &b));
    b.mem_clock_khz++;
    assert_false(devices_identical(&a, &b));
    b = a;
    b.bus_width_bits /= 2;
    assert_false(devices_identical(&a, &b));
    b = a;
    b.sm_count--;
    assert_false(devices_identical(&a, &b));
    b = a;
    b.total_mem /= 2;   /* not part of the identity */
    assert_true(devices_identical(&a, &b));
    tu_remove(dir);
}

/* Bad --device values: the parser's (exit 2 through main.c's RT_EINVAL) with the flag and
 * the value named, and an ordinal the machine does not have, found by listing its GPUs
 * (RT_EINVAL: exit 2); nothing is made on disk. */
static void devices_bad_values(void **state)
{
    (void)state;
    static const struct { const char *v, *msg; } bad[] = {
        {"abc", "--device wants a GPU ordinal, a comma-separated list of them (0,2,3) or all, "
                "not 'abc'\n(see redtune --help)"},
        {"", "--device: an empty value; it wants a GPU ordinal, a comma-separated list of them "
             "(0,2,3) or all\n(see redtune --help)"},
        {"0,0", "--device 0,0: GPU 0 is listed twice\n(see redtune --help)"},
        {"0,x", "--device wants a GPU ordinal, a comma-separated list of them (0,2,3) or all, "
                "not '0,x' ('x' is no GPU ordinal)\n(see redtune --help)"},
        {"1,", "--device wants a GPU ordinal, a comma-separated list of them (0,2,3) or all, "
               "not '1,' ('' is no GPU ordinal)\n(see redtune --help)"},
        {"-1", "--device wants a GPU ordinal, a comma-separated list of them (0,2,3) or all, "
               "not '-1'\n(see redtune --help)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char val[64];
        snprintf(val, sizeof val, "--device=%s", bad[i].v);
        char *argv[] = {"redtune", "--op", "sum", val, NULL};
        cli_args a;
        rt_err e;
        int rc = cli_parse(4, argv, &a, &e);
        cli_free(&a);
        assert_int_equal(rc, RT_EINVAL);
        assert_string_equal(e.msg, bad[i].msg);
    }
    char *ok[] = {"redtune", "--op", "sum", "--device", "2,0,3", "--split", NULL};
    cli_args a;
    rt_err e;
    assert_int_equal(cli_parse(6, ok, &a, &e), RT_OK);
    assert_int_equal(a.ndevices, 3);
    assert_int_equal(a.devices[0], 2);
    assert_int_equal(a.devices[2], 3);
    assert_int_equal(a.split, 1);
    assert_int_equal(a.device_all, 0);
    cli_free(&a);
    char *split_alone[] = {"redtune", "--op", "sum", "--split", NULL};
    assert_int_equal(cli_parse(4, split_alone, &a, &e), RT_EINVAL);
    cli_free(&a);
    assert_string_equal(e.msg, "--split goes with --device all or a list of GPUs (0,2,3): "
                               "identical ones among them share the cases\n(see redtune --help)");

    /* GPU 7 of a machine of two; a list holding it is refused whole. */
    setenv("REDTUNE_FAKE_DEVICES", "Fake GPU,Other GPU", 1);
    devices_plan p;
    static const int seven[] = {0, 7};
    rt_clearerr(&e);
    int rc = devices_plan_make("/proc/self/exe", seven, 2, 0, 0, "0,7", &p, &e);
    unsetenv("REDTUNE_FAKE_DEVICES");
    assert_int_equal(rc, RT_EINVAL);
    assert_string_equal(e.msg, "--device 0,7: there is no GPU 7; this machine has 2 GPUs "
                               "(0 to 1)");
    static const int one[] = {1};
    rc = devices_plan_make("/proc/self/exe", one, 1, 0, 0, "1", &p, &e);
    assert_int_equal(rc, RT_EINVAL);
    assert_string_equal(e.msg, "--device 1: there is no GPU 1; this machine has 1 GPU (0)");

    /* The program: exit 2 and the message, no database made. */
    const char *bin = getenv("REDTUNE_BIN");
    char dir[] = "/tmp/redtune_devXXXXXX", cmd[512];
    assert_non_null(mkdtemp(dir));
    static const char *args[] = {"--device abc", "--device=", "--device 0,0"};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s --op sum %s --db %s/t.db >/dev/null 2>&1",
                 bin ? bin : "build/redtune", args[i], dir);
        int st = system(cmd);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 2);
        struct stat sb;
        assert_int_not_equal(stat(dir, &sb), -1);
        snprintf(cmd, sizeof cmd, "%s/t.db", dir);
        assert_int_equal(stat(cmd, &sb), -1);
    }
    tu_remove(dir);
}

int test_devices_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(devices_bad_values),
        cmocka_unit_test(devices_two_into_one_db),
        cmocka_unit_test(devices_one_fails_others_go_on),
        cmocka_unit_test(devices_split_identical),
    };
    return cmocka_run_group_tests_name("devices", tests, NULL, NULL);
}
