/*
 * cli_util.h - what the redtune program's test files (tests/test_cli*.c) share: running
 * $REDTUNE_BIN (set by tests/run.sh) from the repository root with its output captured,
 * EXPECT on the exit status and the output, the environment put before the program, and
 * whether a file exists.
 */
#ifndef RT_TESTS_CLI_UTIL_H
#define RT_TESTS_CLI_UTIL_H

/* The output of the last run(): stdout and stderr together, NUL-terminated. */
extern char out[1 << 20];

/* Environment assignments put before the program by run() ("NAME=VALUE "), so that a test
 * that fails halfway leaves the test process's own environment as it was; reset_run_env
 * (cmocka's teardown of the tests that set it) makes it "" again. */
extern const char *run_env;
int reset_run_env(void **state);

/* Run "$REDTUNE_BIN args" with stdout and stderr captured into 'out'; the exit status. */
int run(const char *args);

/* run(args): its exit status must be 'code' and its output must hold 'text' (cmocka.h
 * first); both are printed when not. */
#define EXPECT(args, code, text)                                              \
    do {                                                                      \
        int rc_ = run(args);                                                  \
        if (rc_ != (code) || !strstr(out, (text)))                           \
            print_error("redtune %s -> %d:\n%s\n", (args), rc_, out);         \
        assert_int_equal(rc_, (code));                                        \
        assert_non_null(strstr(out, (text)));                                 \
    } while (0)

/* Whether 'p' exists. */
int file_exists(const char *p);

#endif
