/*
 * test_capture.c - REDTUNE_CAPTURE and REDTUNE_LOG (runtime/capture.c) and `redtune
 * --cases-from` (tuner/cases.c): the writer with a made-up case, two processes appending at
 * once, a file that cannot be opened, a bad log level; the reader on the files of
 * tests/capture/ (a good one, a truncated last line, a bad header, a bad operator or type;
 * type specs, an undefined pair, a bad spec);
 * the runs planned from them; the command line. All on the CPU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/capture.h"
#include "tuner/cases.h"
#include "tuner/cli.h"
#include "tuner/segdata.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/redtune-capture-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A file's text, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

/* What a stream received, and the stream closed. */
static char *drain(FILE *f)
{
    char *buf = calloc(1, 8192);
    rewind(f);
    size_t n = fread(buf, 1, 8191, f);
    (void)n;
    fclose(f);
    return buf;
}

static void capture_writes_once(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/once.tsv", dir);
    setenv("REDTUNE_CAPTURE", path, 1);
    unsetenv("REDTUNE_LOG");
    capture c;
    FILE *err = tmpfile();
    capture_init(&c, err);
    unsetenv("REDTUNE_CAPTURE");
    assert_true(c.active);
    capture_case miss = {"sum", "f32", "flat", 5000, 0, "nearest", NULL, "GPU\twith a tab"};
    capture_case hit = {"sum", "f32", "flat", 1024, 0, NULL, NULL, "GPU"};
    capture_case seg = {"max", "i32", "offsets", 1 << 20, 1000, "builtin", NULL, "GPU"};
    capture_case user = {"myop", "f64", "flat", 77, 0, "same-cc", "0123456789abcdef", "GPU"};
    capture_case_met(&c, &miss);
    capture_case_met(&c, &hit);
    capture_case_met(&c, &miss);    /* met before: not written again */
    capture_case_met(&c, &seg);
    capture_case_met(&c, &user);
    capture_close(&c);
    char *got = slurp(path), *said = drain(err);
    assert_string_equal(got, "# redtune capture v1\n"
                        "# op\ttype\tlayout\tn\tnseg\tfallback\tfingerprint\tdevice\n"
                        "sum\tf32\tflat\t5000\t0\tnearest\t-\tGPU with a tab\n"
                        "max\ti32\toffsets\t1048576\t1000\tbuiltin\t-\tGPU\n"
                        "myop\tf64\tflat\t77\t0\tsame-cc\t0123456789abcdef\tGPU\n");
    assert_string_equal(said, "");   /* silent by default */
    free(got);
    free(said);

    /* The reader takes what the writer wrote. */
    cases_line *l = NULL;
    char *notes = NULL;
    int n = 0;
    rt_err e;
    assert_int_equal(cases_parse(path, &l, &n, &notes, &e), RT_OK);
    assert_int_equal(n, 3);
    assert_null(notes);
    assert_int_equal(l[0].line, 3);
    assert_int_equal(l[0].op_id, RT_SUM);
    assert_int_equal(l[0].n, 5000);
    assert_int_equal(l[1].layout, SEG_LAYOUT_OFFSETS);
    assert_int_equal(l[1].nseg, 1000);
    assert_false(l[2].builtin);
    assert_string_equal(l[2].op, "myop");
    assert_string_equal(l[2].fingerprint, "0123456789abcdef");
    free(l);
}

/* Two processes append 300 cases each at once, with lines of some 400 bytes: every line
 * comes out whole, and the first line is the header. */
static void capture_two_processes(void **state)
{
    (void)state;
    char path[128], device[400];
    snprintf(path, sizeof path, "%s/two.tsv", dir);
    memset(device, 'x', sizeof device - 1);
    device[sizeof device - 1] = '\0';
    setenv("REDTUNE_CAPTURE", path, 1);
    pid_t pid[2];
    for (int p = 0; p < 2; p++) {
        if ((pid[p] = fork()) == 0) {
            capture c;
            capture_init(&c, stderr);
            for (int i = 0; i < 300; i++) {
                capture_case cs = {"sum", p ? "f64" : "f32", "flat",
                                   (unsigned long long)i + 1, 0, "builtin", NULL, device};
                capture_case_met(&c, &cs);
            }
            capture_close(&c);
            _exit(0);
        }
        assert_true(pid[p] > 0);
    }
    unsetenv("REDTUNE_CAPTURE");
    for (int p = 0; p < 2; p++) {
        int st;
        assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    cases_line *l = NULL;
    char *notes = NULL;
    int n = 0, per[2] = {0, 0};
    rt_err e;
    assert_int_equal(cases_parse(path, &l, &n, &notes, &e), RT_OK);
    assert_null(notes);
    assert_int_equal(n, 600);
    for (int i = 0; i < n; i++)
        per[l[i].type == RT_F64]++;
    assert_int_equal(per[0], 300);
    assert_int_equal(per[1], 300);
    free(l);
}

/* A file that cannot be opened: one warning, whatever REDTUNE_LOG says; the calls go on. */
static void capture_unopenable(void **state)
{
    (void)state;
    char path[128], want[256];
    snprintf(path, sizeof path, "%s/no/such/dir.tsv", dir);
    setenv("REDTUNE_CAPTURE", path, 1);
    capture c;
    FILE *err = tmpfile();
    capture_init(&c, err);
    unsetenv("REDTUNE_CAPTURE");
    capture_case a = {"sum", "f32", "flat", 10, 0, "builtin", NULL, "GPU"};
    capture_case b = {"sum", "f32", "flat", 20, 0, "builtin", NULL, "GPU"};
    capture_case_met(&c, &a);
    capture_case_met(&c, &b);
    capture_close(&c);
    char *said = drain(err);
    snprintf(want, sizeof want, "redtune: warn: REDTUNE_CAPTURE=%s: cannot append to it: No "
             "such file or directory; cases are not captured\n", path);
    assert_string_equal(said, want);
    free(said);
}

/* REDTUNE_LOG: a bad value is named with the accepted ones, once; info tells each case. */
static void capture_log_levels(void **state)
{
    (void)state;
    unsetenv("REDTUNE_CAPTURE");
    setenv("REDTUNE_LOG", "verbose", 1);
    FILE *err = tmpfile();
    capture c;
    capture_init(&c, err);
    assert_int_equal(c.log, CAPTURE_LOG_OFF);
    assert_false(c.active);
    capture_close(&c);
    capture_init(&c, err);     /* said once */
    capture_close(&c);
    char *said = drain(err);
    assert_string_equal(said, "redtune: warn: REDTUNE_LOG=verbose is not a log level (accepted: "
                        "off, warn, info; unset or empty is off); logging stays off\n");
    free(said);

    setenv("REDTUNE_LOG", "info", 1);
    err = tmpfile();
    capture_init(&c, err);
    unsetenv("REDTUNE_LOG");
    assert_true(c.active);
    capture_case hit = {"sum", "f32", "flat", 1024, 0, NULL, NULL, "GPU"};
    capture_case miss = {"min", "u64", "keys", 4096, 3, "same-major", NULL, "GPU"};
    capture_case_met(&c, &hit);
    capture_case_met(&c, &hit);
    capture_case_met(&c, &miss);
    capture_log(&c, CAPTURE_LOG_WARN, "a fallback");
    capture_close(&c);
    said = drain(err);
    assert_string_equal(said, "redtune: info: sum f32 n = 1024: exact tuned entry\n"
                        "redtune: info: min u64 keys n = 4096, nseg = 3: no exact tuned entry\n"
                        "redtune: warn: a fallback\n");
    free(said);
}

/* A line too long for one write() is not written at all, never in part. */
static void capture_format_limits(void **state)
{
    (void)state;
    char buf[64];
    capture_case cs = {"sum", "f32", "flat", 1, 0, "builtin", NULL,
                       "a device name far too long for this small buffer"};
    assert_int_equal(capture_format(&cs, buf, sizeof buf), 0);
    cs.device = "G\nP\rU";
    size_t len = capture_format(&cs, buf, sizeof buf);
    assert_int_equal(len, strlen(buf));
    assert_string_equal(buf, "sum\tf32\tflat\t1\t0\tbuiltin\t-\tG P U\n");
}

static int parse_err(const char *path, char *msg, size_t len)
{
    cases_line *l = NULL;
    char *notes = NULL;
    int n = 0;
    rt_err e;
    int rc = cases_parse(path, &l, &n, &notes, &e);
    snprintf(msg, len, "%s", rc ? e.msg : "");
    assert_null(l);
    free(notes);
    return rc;
}

static void cases_bad_files(void **state)
{
    (void)state;
    char msg[512];
    assert_int_equal(parse_err("tests/capture/bad_header.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_header.tsv:1: not a redtune capture file (its "
                        "first line is not '# redtune capture v1'; libredtune writes one under "
                        "REDTUNE_CAPTURE)");
    assert_int_equal(parse_err("tests/capture/newer.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/newer.tsv:1: capture format v2, which this redtune "
                        "does not read (it reads v1)");
    assert_int_equal(parse_err("tests/capture/bad_op.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_op.tsv:3: unknown operator 'median' (known: "
                        "sum, prod, min, max, argmin, argmax, amax, asum, sumsq, norm2, mean, "
                        "var_mean, var_mean_sample, std_mean, std_mean_sample; a user operator "
                        "has its fingerprint in field 7)");
    assert_int_equal(parse_err("tests/capture/bad_type.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_type.tsv:2: unknown type 'f17' (known: f32, "
                        "f64, i32, u32, i64, u64, f16, bf16, i8, u8)");
    assert_int_equal(parse_err("tests/capture/bad_pair.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_pair.tsv:3: var_mean of u8 is not defined: "
                        "var_mean takes f16, bf16, f32, f64");
    assert_int_equal(parse_err("tests/capture/bad_spec.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_spec.tsv:2: type 'bf16:acc=f64:acc=f32': "
                        "'acc=f32' is neither acc=TYPE nor result=bf16 (the element type), "
                        "once each");
    assert_int_equal(parse_err("tests/capture/bad_user_spec.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_user_spec.tsv:2: type 'f32:acc=f64': a user "
                        "operator's type is plain (no acc= or result=)");
    assert_int_equal(parse_err("tests/capture/bad_fields.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_fields.tsv:2: 5 fields, a capture line has 8 "
                        "(op, type, layout, n, nseg, fallback, fingerprint, device, "
                        "tab-separated)");
    assert_int_equal(parse_err("tests/capture/no_such_file.tsv", msg, sizeof msg), RT_EIO);
    assert_string_equal(msg, "tests/capture/no_such_file.tsv: No such file or directory");
    assert_int_equal(parse_err("tests/capture", msg, sizeof msg), RT_EIO);
    assert_string_equal(msg, "tests/capture: not a regular file");
}

/* The good file and its copy cut mid-line by a crash: the cut line is skipped, with a note. */
static void cases_plan_runs(void **state)
{
    (void)state;
    const char *files[] = {"tests/capture/good.tsv", "tests/capture/truncated.tsv"};
    for (int f = 0; f < 2; f++) {
        cases_line *l = NULL;
        char *notes = NULL, text[512];
        int n = 0;
        rt_err e;
        cases_plan p;
        assert_int_equal(cases_parse(files[f], &l, &n, &notes, &e), RT_OK);
        assert_int_equal(n, 9);
        if (f == 1)
            assert_string_equal(notes, "tests/capture/truncated.tsv:14: skipped: the last line "
                                "has no newline (cut short, by a process killed while it "
                                "wrote?)\n");
        else
            assert_null(notes);
        free(notes);
        notes = NULL;
        assert_int_equal(cases_plan_make(l, n, &p, &notes, &e), RT_OK);
        free(l);
        assert_int_equal(p.nruns, 3);
        assert_int_equal(p.ncases, 8);
        assert_int_equal(p.nskipped, 1);
        const char *want[] = {
            "--op sum --type f32 --sizes 256,4096,1000000",
            "--op max --type i32 --sizes 1048576,2000000,3000000000 --segmented offsets "
            "--profiles len1000,one --off64",
            "--op sum --type f64 --sizes 65536 --segmented keys --profiles len3",
        };
        for (int r = 0; r < 3; r++) {
            cases_run_text(&p.runs[r], text, sizeof text);
            assert_string_equal(text, want[r]);
        }
        assert_string_equal(notes,
            "line 8: offsets max i32 n = 1048576, nseg = 1048 (mean segment length 1000.5): "
            "tuned as profile len1000, the nearest in mean length\n"
            "line 9: offsets max i32 n = 2000000, nseg = 1 (mean segment length 2000000.0): "
            "tuned as profile one, the nearest in mean length\n"
            "line 10: offsets max i32 n = 3000000000, nseg = 3000000 (mean segment length "
            "1000.0): tuned as profile len1000, the nearest in mean length\n"
            "line 11: keys sum f64 n = 65536, nseg = 20000 (mean segment length 3.3): tuned as "
            "profile len3, the nearest in mean length\n"
            "not tuned: 1 cases of the user operator 'myop' (f32, definition 0123456789abcdef); "
            "tune them with redtune --op-file FILE --sizes 5000\n");
        free(notes);
        cases_plan_free(&p);
    }
}


/* Axis capture lines (layout axis:OxLxI, n = O*L*I, nseg = O*I): planned into an axis run per
 * operator and type with the shapes met, each once; a bad shape or a count that does not
 * match it is refused naming the line. */
static void cases_axis(void **state)
{
    (void)state;
    cases_line *l = NULL;
    char *notes = NULL, text[512], msg[512];
    int n = 0;
    rt_err e;
    cases_plan p;
    assert_int_equal(cases_parse("tests/capture/axis.tsv", &l, &n, &notes, &e), RT_OK);
    assert_int_equal(n, 5);
    assert_int_equal(l[0].layout, SEG_LAYOUT_AXIS);
    assert_true(l[0].shape.outer == 65536 && l[0].shape.len == 128 && l[0].shape.inner == 1);
    assert_int_equal(cases_plan_make(l, n, &p, &notes, &e), RT_OK);
    free(l);
    assert_int_equal(p.nruns, 3);
    assert_int_equal(p.ncases, 5);
    const char *want[] = {
        "--op sum --type f32 --axis --shapes '65536x128x1;64x2048x512'",
        "--op sum --type f32 --sizes 4096",
        "--op argmax --type bf16 --axis --shapes '1x4096x4096'",
    };
    for (int r = 0; r < 3; r++) {
        cases_run_text(&p.runs[r], text, sizeof text);
        assert_string_equal(text, want[r]);
    }
    assert_int_equal(p.runs[0].layout, SEG_LAYOUT_AXIS);
    assert_int_equal(p.runs[0].nshapes, 2);
    assert_true(p.runs[0].shapes[1].outer == 64 && p.runs[0].shapes[1].inner == 512);
    assert_null(notes);
    cases_plan_free(&p);

    assert_int_equal(parse_err("tests/capture/bad_axis_shape.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_axis_shape.tsv:2: layout 'axis:64x0x512' is not "
                        "axis:OxLxI (three positive integers whose product fits 64 bits)");
    assert_int_equal(parse_err("tests/capture/bad_axis_n.tsv", msg, sizeof msg), RT_EINVAL);
    assert_string_equal(msg, "tests/capture/bad_axis_n.tsv:2: n '67108864' and nseg '64' are "
                        "not 67108864 and 32768, the elements and outputs of axis:64x2048x512");
}

static void cases_cli(void **state)
{
    (void)state;
    cli_args a;
    rt_err e;
    char *ok[] = {"redtune", "--cases-from", "app.tsv", "--device", "1", "--db", "x.db"};
    assert_int_equal(cli_parse(7, ok, &a, &e), RT_OK);
    assert_string_equal(a.cases_from, "app.tsv");
    assert_int_equal(a.tune.device, 1);
    cli_free(&a);
    char *bad[] = {"redtune", "--cases-from", "app.tsv", "--sizes", "1000"};
    assert_int_equal(cli_parse(5, bad, &a, &e), RT_EINVAL);
    assert_string_equal(e.msg, "--cases-from takes the operators, types, sizes and layouts "
                        "from its file: --op, --op-file, --type, --acc, --result, --sizes, "
                        "--segmented, --profiles, --off64, --axis and --shapes do not go with "
                        "it\n(see redtune --help)");
    cli_free(&a);
    char *empty[] = {"redtune", "--cases-from="};
    assert_int_equal(cli_parse(2, empty, &a, &e), RT_EINVAL);
    cli_free(&a);
}

/* The program: a refused file exits 4 naming FILE:LINE and makes no database; a good one
 * prints its plan (here the run then fails for want of a driver, before any database). */
static int run(const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "REDTUNE_LIBCUDA=/nonexistent/libcuda.so build/redtune %s 2>&1",
             args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void cases_program(void **state)
{
    (void)state;
    char args[512], db[128], out[8192];
    snprintf(db, sizeof db, "%s/never.db", dir);
    snprintf(args, sizeof args, "--cases-from tests/capture/bad_op.tsv --db %s", db);
    assert_int_equal(run(args, out, sizeof out), 4);
    assert_string_equal(out, "redtune: tests/capture/bad_op.tsv:3: unknown operator 'median' "
                        "(known: sum, prod, min, max, argmin, argmax, amax, asum, sumsq, norm2, "
                        "mean, var_mean, var_mean_sample, std_mean, std_mean_sample; a user "
                        "operator has its fingerprint in field 7)\n");
    assert_int_equal(access(db, F_OK), -1);
    snprintf(args, sizeof args, "--cases-from tests/capture/truncated.tsv --db %s", db);
    assert_int_equal(run(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "redtune: tests/capture/truncated.tsv:14: skipped: the last "
                           "line has no newline"));
    assert_non_null(strstr(out, "redtune: tests/capture/truncated.tsv: 8 cases in 3 tuning "
                           "runs\nredtune: run 1 of 3: redtune --op sum --type f32 --sizes "
                           "256,4096,1000000\n"));
    assert_int_equal(access(db, F_OK), -1);
}

/* Type specs: written as "bf16:acc=f64" (only what differs from the operator's defaults),
 * read back into the spec; a run per spec, whose options make it. */
static void cases_type_specs(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(capture_type_text(RT_SUM, RT_F32, buf, sizeof buf), "f32");
    assert_string_equal(capture_type_text(RT_SUM, RT_BF16, buf, sizeof buf), "bf16");
    assert_string_equal(capture_type_text(RT_SUM, RT_ACC(RT_BF16, RT_F32), buf, sizeof buf),
                        "bf16");   /* the default accumulator */
    assert_string_equal(capture_type_text(RT_SUM, RT_ACC(RT_BF16, RT_F64), buf, sizeof buf),
                        "bf16:acc=f64");
    assert_string_equal(capture_type_text(RT_SUM, RT_RESULT_ELEM(RT_BF16), buf, sizeof buf),
                        "bf16:result=bf16");
    assert_string_equal(capture_type_text(RT_VAR_MEAN, RT_U8, buf, sizeof buf), "?");
    cases_line *l = NULL;
    char *notes = NULL, text[512];
    int n = 0;
    rt_err e;
    cases_plan p;
    assert_int_equal(cases_parse("tests/capture/spec.tsv", &l, &n, &notes, &e), RT_OK);
    assert_int_equal(n, 5);
    assert_int_equal(l[0].type, RT_BF16);
    assert_int_equal(l[1].type, RT_ACC(RT_BF16, RT_F64));
    assert_int_equal(l[2].type, RT_RESULT_ELEM(RT_ACC(RT_BF16, RT_F32)));
    assert_int_equal(cases_plan_make(l, n, &p, &notes, &e), RT_OK);
    free(l);
    assert_int_equal(p.nruns, 4);
    const char *want[] = {
        "--op sum --type bf16 --sizes 4096",
        "--op sum --type bf16 --acc f64 --sizes 1024,4096",
        "--op sum --type bf16 --result element --sizes 1024",
        "--op var_mean --type f16 --result element --sizes 65536 --segmented keys --profiles "
        "len3",
    };
    for (int r = 0; r < 4; r++) {
        cases_run_text(&p.runs[r], text, sizeof text);
        assert_string_equal(text, want[r]);
    }
    assert_string_equal(notes, "line 7: keys var_mean f16:result=f16 n = 65536, nseg = 20000 "
                        "(mean segment length 3.3): tuned as profile len3, the nearest in "
                        "mean length\n");
    free(notes);
    cases_plan_free(&p);
}

int test_capture_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_writes_once),
        cmocka_unit_test(capture_two_processes),
        cmocka_unit_test(capture_unopenable),
        cmocka_unit_test(capture_log_levels),
        cmocka_unit_test(capture_format_limits),
        cmocka_unit_test(cases_bad_files),
        cmocka_unit_test(cases_plan_runs),
        cmocka_unit_test(cases_cli),
        cmocka_unit_test(cases_axis),
        cmocka_unit_test(cases_program),
        cmocka_unit_test(cases_type_specs),
    };
    return cmocka_run_group_tests_name("capture", tests, setup, teardown);
}
