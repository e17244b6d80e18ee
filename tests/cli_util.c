/*
 * cli_util.c - what the redtune program's test files share (tests/cli_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/cli_util.h"

char out[1 << 20];

const char *run_env = "";

int run(const char *args)
{
    const char *bin = getenv("REDTUNE_BIN");
    if (!bin)
        bin = "build/redtune";
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s %s 2>&1", run_env, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

int reset_run_env(void **state)
{
    (void)state;
    run_env = "";
    return 0;
}
