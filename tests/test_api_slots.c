/*
 * test_api_slots.c - libredtune's choice among a device's winners by size slot
 * (runtime/api_choose.c: api_pick_winner, api_size_slot, api_slot_text), with no GPU.
 *
 * Group "api_slots" (CPU, runs everywhere); the fallback chain that finds the device's
 * winners is tests/test_api_choose.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/api_int.h"

/* rt_reduce's choice among a device's winners by size slot (api_choose.c): a tuned power of
 * two keeps its own winner, a power of two between tuned sizes the nearest in log2 (the larger
 * on a tie), a size strictly between two powers the next larger tuned size's, no winner
 * stretched past four times its size while another is left, and past the largest tuned size
 * the largest. */
static void api_pick_by_size_slot(void **state)
{
    (void)state;
    best_entry rows[4];
    memset(rows, 0, sizeof rows);
    const long long tuned[4] = {1LL << 14, 1LL << 10, 3000, 1LL << 12};   /* any order */
    for (int i = 0; i < 4; i++)
        rows[i].n = tuned[i];
    struct { unsigned long long n; long long want; } cases[] = {
        {1, 1 << 10},  {7, 1 << 10},  {1024, 1 << 10},   /* below the smallest: the smallest */
        {1025, 3000},  {2048, 3000},  {3000, 3000},     /* 2^11: 3000 is nearer than 2^10 */
        {4000, 3000},     /* per slot, not per n: (2^11, 2^12) takes the first above 2^11 */
        {4096, 1 << 12},
        {5907, 1 << 14}, {8191, 1 << 14},                /* the next larger, not 2^12 */
        {8192, 1 << 14}, {16384, 1 << 14},
        {16385, 1 << 14}, {1ULL << 40, 1 << 14}, {(1ULL << 40) + 1, 1 << 14},
    };
    /* Sparse tuning (1000 and 2^20, as api_gpu_database's): between them the nearer in log2 to
     * the middle of the range, but never a winner tuned at less than a quarter of the slot's
     * largest n while a larger one is left: 2^11 takes 1000's, (2^11, 2^12) and up 2^20's. */
    best_entry sparse[2];
    memset(sparse, 0, sizeof sparse);
    sparse[0].n = 1000;
    sparse[1].n = 1LL << 20;
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1500))->n, 1000);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(2048))->n, 1000);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(3000))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(5000))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(300000))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 19))->n, 1 << 20);
    /* Run 4 of the nineteenth session: norm2 f16 tuned at 2^12 and 2^20 only; 2^15 and 56747
     * took 2^12's one-block winner, 1.09 and 1.27x CUB. Two octaves past 2^12 at most. */
    sparse[0].n = 1 << 12;
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 14))->n, 1 << 12);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(10000))->n, 1 << 12);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 15))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(56747))->n, 1 << 20);
    assert_int_equal(api_pick_winner(sparse, 1, api_size_slot(56747))->n, 1 << 12);   /* alone */
    /* A oneblock winner (@max_n 2^18) serves no n past 2^18 while another winner is left. */
    snprintf(sparse[0].family, sizeof sparse[0].family, "oneblock");
    sparse[0].n = 1 << 14;
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 15))->n, 1 << 14);
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 16))->n, 1 << 14);
    sparse[1].n = 1LL << 30;   /* 2^19 is nearer 2^14 than 2^30, but past oneblock's @max_n */
    assert_int_equal(api_pick_winner(sparse, 2, api_size_slot(1 << 19))->n, 1 << 30);
    assert_int_equal(api_pick_winner(sparse, 1, api_size_slot(1ULL << 30))->n, 1 << 14);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const best_entry *b = api_pick_winner(rows, 4, api_size_slot(cases[i].n));
        assert_non_null(b);
        if (b->n != cases[i].want)
            fail_msg("n = %llu: picked the winner tuned at %lld, want %lld", cases[i].n, b->n,
                     cases[i].want);
    }
    /* A tie between 2^10 and 2^12 for n = 2^11 goes to the larger. */
    rows[2].n = 1LL << 20;
    assert_int_equal(api_pick_winner(rows, 4, api_size_slot(2048))->n, 1 << 12);
    assert_null(api_pick_winner(rows, 0, api_size_slot(2048)));
    assert_int_equal(api_size_slot(1), 0);
    assert_int_equal(api_size_slot(3), 3);
    assert_int_equal(api_size_slot(4), 4);
    assert_int_equal(api_size_slot(~0ULL), 127);
    char t[64];
    api_slot_text(api_size_slot(5907), t, sizeof t);
    assert_string_equal(t, "n in (2^12, 2^13)");
    api_slot_text(api_size_slot(4096), t, sizeof t);
    assert_string_equal(t, "n = 2^12");
}

int test_api_slots_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_pick_by_size_slot),
    };
    return cmocka_run_group_tests_name("api_slots", tests, NULL, NULL);
}
