/*
 * main.c - the one test runner: every module's cmocka group. `all cpu` leaves out the GPU
 * group (the sanitizer build); `all gpu` runs only it. tests/run.sh counts the TAP output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int test_codegen_group(void);
int test_space_group(void);
int test_space_bad_group(void);
int test_space_layout_group(void);
int test_opfile_group(void);
int test_nvrtc_group(void);
int test_store_group(void);
int test_store_open_group(void);
int test_store_ship_group(void);
int test_store_ship_checks_group(void);
int test_data_group(void);
int test_cli_group(void);
int test_cli_ship_group(void);
int test_cli_reduce_group(void);
int test_segdata_group(void);
int test_axisdata_group(void);
int test_gpu_group(void);
int test_gpu_seg_group(void);
int test_gpu_seg_cmd_group(void);
int test_gpu_types_group(void);
int test_gpu_axis_group(void);
int test_api_group(void);
int test_api_db_group(void);
int test_api_choose_group(void);
int test_api_slots_group(void);
int test_api_gpu_group(void);
int test_api_gpu_seg_group(void);
int test_api_gpu_user_group(void);
int test_api_gpu_graph_group(void);
int test_api_axis_group(void);
int test_api_axis_gpu_group(void);
int test_api_axis_gpu_db_group(void);
int test_measure_group(void);
int test_measure_gpu_group(void);
int test_strategy_group(void);
int test_tune_group(void);
int test_tune_strategy_group(void);
int test_tune_fake_worker(void);
int test_bench_pick_group(void);
int test_bench_pick_gpu_group(void);
int test_bench_everyn_group(void);
int test_capture_group(void);
int test_report_group(void);
int test_devices_group(void);
int test_shipped_group(void);

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    /* test_tune.c's tuning runs exec this binary as their worker. */
    if (!strcmp(only, "worker"))
        return test_tune_fake_worker();
    /* REDTUNE_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's * and ?),
     * e.g. one operator and type under compute-sanitizer (tools/sanitize.sh). */
    const char *filter = getenv("REDTUNE_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    int failed = 0;
    if (strcmp(only, "gpu")) {
        failed += test_codegen_group();
        failed += test_space_group();
        failed += test_space_bad_group();
        failed += test_space_layout_group();
        failed += test_opfile_group();
        failed += test_nvrtc_group();
        failed += test_store_group();
        failed += test_store_open_group();
        failed += test_store_ship_group();
        failed += test_store_ship_checks_group();
        failed += test_data_group();
        failed += test_segdata_group();
        failed += test_axisdata_group();
        failed += test_cli_group();
        failed += test_cli_ship_group();
        failed += test_cli_reduce_group();
        failed += test_api_group();
        failed += test_api_db_group();
        failed += test_api_choose_group();
        failed += test_api_slots_group();
        failed += test_api_axis_group();
        failed += test_measure_group();
        failed += test_strategy_group();
        failed += test_tune_group();
        failed += test_tune_strategy_group();
        failed += test_bench_pick_group();
        failed += test_bench_everyn_group();
        failed += test_capture_group();
        failed += test_report_group();
        failed += test_devices_group();
        failed += test_shipped_group();
    }
    if (strcmp(only, "cpu")) {
        failed += test_gpu_group();
        failed += test_gpu_seg_group();
        failed += test_gpu_seg_cmd_group();
        failed += test_gpu_types_group();
        failed += test_gpu_axis_group();
        failed += test_api_gpu_group();
        failed += test_api_gpu_seg_group();
        failed += test_api_gpu_user_group();
        failed += test_api_gpu_graph_group();
        failed += test_api_axis_gpu_group();
        failed += test_api_axis_gpu_db_group();
        failed += test_measure_gpu_group();
        failed += test_bench_pick_gpu_group();
    }
    return failed ? 1 : 0;
}
