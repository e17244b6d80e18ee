/*
 * fuzz_opfile.c - libFuzzer target: an operator file (--op-file, docs/ops.md) from arbitrary
 * bytes (tuner/opfile.c), and for the files accepted the unit the code generator makes of
 * them (runtime/codegen.c). Besides memory errors (ASan/UBSan) and hangs, it checks that an
 * accepted file's CUDA text can never carry preprocessor text into a unit: no field holds a
 * line that starts with '#', and the unit has exactly the directives of the same unit made
 * with a harmless operator. tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/codegen.h"
#include "runtime/family.h"
#include "tuner/opfile.h"
#include "tuner/sandbox.h"

/* Lines whose first non-blank character is '#'. */
static int directives(const char *s)
{
    int count = 0, bol = 1;
    for (; s && *s; s++) {
        if (*s == '\n')
            bol = 1;
        else if (bol && *s != ' ' && *s != '\t') {
            count += *s == '#';
            bol = 0;
        }
    }
    return count;
}

/* The directives of the unit of tb2's default config (tb2 takes any operator: it keeps the
 * order). */
static int unit_directives(const rt_user_op *op)
{
    rt_config c;
    config_default(family_find("tb2"), &c);
    char *src = NULL;
    rt_err e;
    memset(&e, 0, sizeof e);
    if (codegen_emit_user(&c, op, &src, &e))
        return -1;
    int d = directives(src);
    free(src);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sandbox_set_time_limit(500);   /* a looping input costs 0.5 s, not 10 */
    opfile o;
    rt_err e;
    memset(&e, 0, sizeof e);
    int rc = opfile_parse((const char *)data, size, "fuzz.lua", &o, &e);
    if (rc != RT_OK) {
        if (!e.msg[0])
            abort();   /* every refusal says why */
        return 0;
    }
    if (directives(o.op.identity) || directives(o.op.combine))
        abort();   /* preprocessor text in an accepted field */
    /* The same operator with harmless text: the unit must have as many directives. */
    rt_user_op plain = o.op;
    strcpy(plain.identity, "0");
    strcpy(plain.combine, "return a;");
    int got = unit_directives(&o.op), want = unit_directives(&plain);
    if (got >= 0 && want >= 0 && got != want)
        abort();
    opfile_free(&o);
    return 0;
}
