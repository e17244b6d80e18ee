/*
 * fuzz_space.c - libFuzzer target: a search-space script (lua/spaces/NAME.lua) from arbitrary
 * bytes, run in the sandbox and expanded for a generic sm_90 device (tuner/space.c). Every
 * input must end in RT_OK or an error with a message, within the sandbox's limits, with no
 * memory error (ASan/UBSan) and nothing left allocated. tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/sandbox.h"
#include "tuner/space.h"
#include "tuner/tuner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rt_device dev;
    static int ready;
    rt_err e;
    memset(&e, 0, sizeof e);
    if (!ready) {
        sandbox_set_time_limit(500);   /* a looping input costs 0.5 s, not 10 */
        if (device_for_arch("sm_90", &dev, &e))
            abort();
        ready = 1;
    }
    char skipped[256];
    space_case cs = {"min", "f32", 4, 1, skipped, sizeof skipped, NULL};
    rt_config *cfgs = NULL;
    int n = 0;
    int rc = space_expand((const char *)data, size, "fuzz.lua", &dev, &cs, &cfgs, &n, &e);
    if (rc != RT_OK && !e.msg[0])
        abort();   /* every error says what went wrong */
    if (rc == RT_OK && n < 0)
        abort();
    free(cfgs);
    return 0;
}
