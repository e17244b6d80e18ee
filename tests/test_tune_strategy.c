/*
 * test_tune_strategy.c - the search strategies through the tuning run, without a GPU (the fake
 * worker of test_tune.c): successive halving's rounds and what a rerun times again, where
 * local search starts (the nearest size, another GPU of the same name, a like profile), and
 * random sampling's budgets in configs and in a share of the space. The strategies alone,
 * over fake candidate lists, are in test_strategy.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "tuner/segdata.h"
#include "tuner/tuner.h"

#include "tests/tune_util.h"

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
    tu_scratch(dir, db, sizeof db);
    tune_opts o = fake_opts(db);
    o.strategy = "halving";
    tu_tune_ok(&o, 12);
    db_is(db, "SELECT group_concat(n || ':' || reps, ' ') FROM (SELECT n, reps FROM "
              "measurements ORDER BY n, reps)",
          "1000:3 1000:3 1000:200 1000:200 4096:3 4096:3 4096:200 4096:200");
    /* best: a full timing, and the fastest of all four (the fake's times ignore reps). */
    db_is(db, "SELECT count(*) FROM best b WHERE b.reps = 200 AND b.median_us = (SELECT "
              "min(median_us) FROM measurements m WHERE m.n = b.n)", "2");

    tu_tune_ok(&o, 0);

    db_exec(db, "DELETE FROM measurements WHERE n = 4096 AND kernel_hash = (SELECT kernel_hash "
                "FROM best WHERE n = 4096)");
    tu_tune_ok(&o, 2);
    db_is(db, "SELECT group_concat(reps, ' ') FROM (SELECT reps FROM measurements WHERE n = "
              "4096 ORDER BY reps)", "3 3 200 200");
    db_is(db, "SELECT count(*) FROM best WHERE reps = 200", "2");

    /* local, one config at 2^11: the best known at the nearest size. */
    static const long long at[] = {2048};
    o.strategy = "local";
    o.budget = 1;
    o.sizes = at;
    o.nsizes = 1;
    tu_tune_ok(&o, 1);
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
    tu_tune_ok(&o, 1);
    db_text(db, "SELECT k.family || ' ' || k.params FROM measurements m JOIN kernels k ON "
                "k.hash = m.kernel_hash WHERE m.n = 4096 AND m.op = 'max'", got, sizeof got);
    assert_string_equal(got, want);
    /* Another GPU of this one's name (a shipped database's; two SMs more, so not the
     * device fallback's exact match) holds max at 3000 itself: its winner there (tb2's), not
     * this GPU's own at 4096 (tb4warp's), is where 3000 starts. */
    db_exec(db, "CREATE TEMP TABLE d AS SELECT * FROM devices; UPDATE d SET id = id + 100, "
                "uuid = 'feedface', sm_count = sm_count + 2; INSERT INTO devices SELECT * FROM d; "
                "INSERT INTO best (device_id, op, type, acc, result, layout, n, hot, kernel_hash, "
                "median_us, min_us, max_us, reps, gbps, frac_bw, deterministic) SELECT "
                "b.device_id + 100, b.op, b.type, b.acc, b.result, b.layout, 3000, b.hot, "
                "(SELECT hash FROM kernels WHERE family = 'tb2' LIMIT 1), b.median_us, "
                "b.min_us, b.max_us, b.reps, b.gbps, b.frac_bw, b.deterministic FROM best b "
                "WHERE b.op = 'max' AND b.n = 4096");
    static const long long at3k[] = {3000};
    o.sizes = at3k;
    tu_tune_ok(&o, 1);
    db_is(db, "SELECT k.family FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash "
              "WHERE m.n = 3000 AND m.op = 'max'", "tb2");
    tu_remove(dir);
}

/* Local search on a segmented case with nothing of its own profile known starts from the
 * best of a profile of like mean length (sweep.c similar_row, best.seg_mean): len3 (3) from
 * rand10_50's (30), which is made seg_per's, not the centre of seg_lb where the seeds begin;
 * one (a single segment of 4096) from nothing, as no profile lies within 16 times its mean. */
static void tune_local_like_profile(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[256], want[256];
    tu_scratch(dir, db, sizeof db);
    static const long long at[] = {4096};
    tune_opts o = fake_opts(db);
    o.layout = SEG_LAYOUT_OFFSETS;
    o.space_path = "tests/lua/seg_like.lua";
    o.sizes = at;
    o.nsizes = 1;
    o.profiles[0] = segdata_parse_profile("rand10_50");
    o.nprofiles = 1;
    tu_tune_ok(&o, 3);
    db_exec(db, "UPDATE best SET kernel_hash = (SELECT hash FROM kernels WHERE family = "
                "'seg_per')");
    db_text(db, "SELECT k.family || ' ' || k.params FROM best b JOIN kernels k ON k.hash = "
                "b.kernel_hash", want, sizeof want);
    assert_non_null(strstr(want, "seg_per"));
    o.strategy = "local";
    o.budget = 1;
    o.profiles[0] = segdata_parse_profile("len3");
    tu_tune_ok(&o, 1);
    db_text(db, "SELECT k.family || ' ' || k.params FROM measurements m JOIN kernels k ON "
                "k.hash = m.kernel_hash WHERE m.layout = 'offsets:len3'", got, sizeof got);
    assert_string_equal(got, want);
    o.profiles[0] = segdata_parse_profile("one");
    tu_tune_ok(&o, -1);
    db_is(db, "SELECT k.family FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash "
              "WHERE m.layout = 'offsets:one'", "seg_lb");
    tu_remove(dir);
}

/* random with a budget of 2 configs per case: 2 of the 4 per size, the same on a rerun (which
 * measures nothing), and the progress line's total is the budget's; it compiles what it
 * picks. */
static void tune_random_budget(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128], got[64];
    tu_scratch(dir, db, sizeof db);
    tune_opts o = fake_opts(db);
    o.strategy = "random";
    o.budget = 2;
    o.strategy_seed = 5;
    tu_tune_ok(&o, 4);
    assert_non_null(strstr(err_text, "4/4"));
    db_is(db, "SELECT count(*) FROM measurements WHERE reps = 200", "4");
    tu_tune_ok(&o, 0);

    /* It compiles only what it picks (with what it means to pick next): at one size into a
     * fresh database, the 2 CUBINs of its 2 picks; exhaustive then compiles the other 2 and
     * reuses the 2, measuring only those new. */
    char db2[160];
    snprintf(db2, sizeof db2, "%s/lazy.db", dir);
    static const long long at4k[] = {4096};
    o.db_path = db2;
    o.sizes = at4k;
    o.nsizes = 1;
    tu_tune_ok(&o, -1);
    assert_non_null(strstr(out_text, "4 configs from tests/lua/mixed_small.lua: reused 0 from "
                                     "the database, the others compiled as the search picks "
                                     "them (1 threads)"));
    assert_non_null(strstr(out_text, "compiled 2 configs as the search picked them, 0 failed"));
    assert_non_null(strstr(out_text, "2 configs measured in this run"));
    db_text(db2, "SELECT count(*) FROM binaries b JOIN measurements m ON m.kernel_hash = b.hash",
            got, sizeof got);
    assert_string_equal(got, "2");
    db_text(db2, "SELECT count(*) FROM binaries", got, sizeof got);
    assert_string_equal(got, "2");   /* the two measured, nothing else */
    o.strategy = NULL;
    o.budget = 0;
    tu_tune_ok(&o, -1);
    assert_non_null(strstr(out_text, "compiled 2, reused 2 from the database, 0 failed"));
    assert_non_null(strstr(out_text, "2 configs measured in this run"));
    db_is(db2, "SELECT count(*) FROM binaries", "4");
    tu_remove(dir);
}


/* random with --budget 40%: 40% of the 4 configs of each case rounded up is 2, so the same
 * sample as --budget 2 (a rerun with that measures nothing), and the progress line's total
 * counts 2 per case. */
static void tune_random_budget_pct(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune_tuneXXXXXX", db[128];
    tu_scratch(dir, db, sizeof db);
    tune_opts o = fake_opts(db);
    o.strategy = "random";
    o.budget_pct = 40;
    o.strategy_seed = 5;
    tu_tune_ok(&o, 4);
    assert_non_null(strstr(err_text, "4/4"));
    db_is(db, "SELECT count(*) FROM measurements WHERE reps = 200", "4");
    o.budget_pct = 0;
    o.budget = 2;
    tu_tune_ok(&o, 0);
    tu_remove(dir);
}

int test_tune_strategy_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tune_halving_resume_and_local_start),
        cmocka_unit_test(tune_local_like_profile),
        cmocka_unit_test(tune_random_budget),
        cmocka_unit_test(tune_random_budget_pct),
    };
    return cmocka_run_group_tests_name("tune_strategy", tests, NULL, NULL);
}
