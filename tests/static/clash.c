/*
 * clash.c - an application that links libredtune.a beside functions and data of its own
 * named as libredtune's internals are (tools/check_static_link.sh builds and runs it). It
 * links only if libredtune.a defines no global name but those of include/redtune.h, and it
 * checks that each call reaches the definition it means: its own, or the library's.
 *
 * Exit status 0 when all is well; otherwise a line on stderr says what went wrong.
 */
#include <stdio.h>
#include <string.h>

#include "redtune.h"

/* The application's own, each unrelated to libredtune's of the same name. */
int cu = 7;
int store_open(const char *what) { return what ? 11 : 0; }
int config_set(int v) { return v + 1; }
int plan_launch(void) { return 13; }
int codegen_emit(void) { return 17; }
int driver_load(void) { return 19; }
int api_find_db(void) { return 23; }
int rt_seterr(void) { return 29; }   /* rt_-prefixed, yet not in include/redtune.h */

int main(void)
{
    static const char *missing = "/nonexistent/redtune-static-check/missing.db";
    rt_ctx *ctx = (rt_ctx *)&ctx;
    int bad = 0;

    if (cu != 7 || store_open("x") != 11 || config_set(1) != 2 || plan_launch() != 13
        || codegen_emit() != 17 || driver_load() != 19 || api_find_db() != 23
        || rt_seterr() != 29) {
        fprintf(stderr, "clash: a call meant for the application's own function missed it\n");
        bad = 1;
    }
    /* The library's store_open, not the application's, is what rt_open runs: a missing file
     * is RT_EDB naming it (checked before any GPU is looked for). */
    int rc = rt_open(missing, 0, &ctx);
    if (rc != RT_EDB || ctx || !strstr(rt_errmsg(NULL), missing)) {
        fprintf(stderr, "clash: rt_open(%s) = %d (%s), ctx %p, message \"%s\"; wanted RT_EDB "
                "naming the file\n", missing, rc, rt_strerror(rc), (void *)ctx,
                rt_errmsg(NULL));
        bad = 1;
    }
    if (strcmp(rt_strerror(RT_EDB), "RT_EDB") || strcmp(rt_op_name(RT_SUM), "sum")
        || strcmp(rt_type_name(RT_F32), "f32")) {
        fprintf(stderr, "clash: rt_strerror, rt_op_name or rt_type_name answered wrong\n");
        bad = 1;
    }
    rt_close(NULL);
    return bad;
}
