/*
 * fuzz_args.c - libFuzzer target: a command line for redtune's parser (tuner/cli.c), the
 * arguments separated by NUL bytes. cli_parse must return a parse or an error with a message,
 * never exit, print or read a file; nothing may leak or overrun. tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "redtune";
    for (size_t i = 0; i <= size && argc < MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    cli_args a;
    rt_err e;
    memset(&a, 0, sizeof a);
    memset(&e, 0, sizeof e);
    int rc = cli_parse(argc, argv, &a, &e);
    if (rc != RT_OK && !e.msg[0])
        abort();   /* every usage error says what is wrong */
    cli_free(&a);
    free(buf);
    return 0;
}
