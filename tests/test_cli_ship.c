/*
 * test_cli_ship.c - the redtune program's database commands: export, merge, dump and load
 * on a dump written here and on version 2 inputs, what they refuse (exit 3: an input the
 * database checks refuse; exit 1: an output that is the input or a link), a directory, a
 * FIFO or an unreadable file as the database of every command, and a locked database. Runs
 * $REDTUNE_BIN (set by tests/run.sh) from the repository root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>

#include "tests/cli_util.h"

/* The SHA-256 of "// src", the source of the kernel of the dumps below (the shipping
 * commands check that a kernel's hash is its source's). */
#define K1 "aa529088f8c98bbcd86484f394627a77ec1d20004fd07f2752942c87f2d8d9cd"

/* export, merge, dump, load: a dump written here, loaded, exported, merged, dumped again;
 * their exit codes (3: an input refused) and outputs written whole or not at all. */
static void ship_commands(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[1024], p[5][300];
    assert_non_null(mkdtemp(dir));
    const char *names[5] = {"one.sql", "one.db", "app.db", "all.db", "again.sql"};
    for (int i = 0; i < 5; i++)
        snprintf(p[i], sizeof p[i], "%s/%s", dir, names[i]);
    FILE *fp = fopen(p[0], "w");
    assert_non_null(fp);
    fputs("-- redtune dump: schema version 1\n"
          "INSERT INTO devices (id, name, uuid, ordinal, cc_major, cc_minor, sm_count, "
          "warp_size, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm, "
          "smem_per_block, smem_per_block_optin, smem_per_sm, regs_per_block, regs_per_sm, "
          "l2_bytes, mem_clock_khz, bus_width_bits, driver_version, total_mem, read_gbps, "
          "first_seen, last_seen) VALUES (1, 'NVIDIA H100 80GB HBM3', 'aa', 0, 9, 0, 132, 32, "
          "1024, 2048, 32, 49152, 232448, 233472, 65536, 65536, 52428800, 2619000, 5120, "
          "13000, 85045346304, 3205.6, '2026-11-22T00:00:00Z', '2026-11-22T00:00:00Z');\n"
          "INSERT INTO kernels (hash, family, params, source, created_at) VALUES ('" K1 "', "
          "'gridstride', 'B=512', '// src', '2026-11-22T00:00:00Z');\n"
          "INSERT INTO binaries (hash, arch, nvrtc_version, cubin, registers, smem_bytes, log, "
          "created_at) VALUES ('" K1 "', 'sm_90', 13000, X'0001', 32, 0, NULL, "
          "'2026-11-22T00:00:00Z');\n"
          "INSERT INTO best (device_id, op, type, layout, n, hot, kernel_hash, median_us, "
          "min_us, max_us, reps, gbps, frac_bw, deterministic, updated_at) VALUES (1, 'min', "
          "'f32', 'flat', 1048576, 0, '" K1 "', 6.91, 6.8, 7.2, 100, 606.8, 0.189, 1, "
          "'2026-11-22T00:00:00Z');\n", fp);
    fclose(fp);

    snprintf(args, sizeof args, "load %s -o %s", p[0], p[1]);
    EXPECT(args, 0, "1 device, 1 best entries, 1 kernels, 1 CUBINs");
    EXPECT(args, 1, "exists (--force overwrites it)");
    snprintf(args, sizeof args, "export --db %s --match A100 -o %s", p[1], p[2]);
    EXPECT(args, 1, "no device matches 'A100' (it holds: NVIDIA H100 80GB HBM3)");
    assert_false(file_exists(p[2]));
    snprintf(args, sizeof args, "export --db %s --match a100 --match H100 -o %s", p[1], p[2]);
    EXPECT(args, 0, "exported into");
    snprintf(args, sizeof args, "merge %s %s -o %s", p[1], p[2], p[3]);
    EXPECT(args, 0, "merged into");
    snprintf(args, sizeof args, "dump %s -o %s", p[3], p[4]);
    EXPECT(args, 0, "dumped into");
    snprintf(args, sizeof args, "dump %s", p[1]);
    EXPECT(args, 0, "-- redtune dump: schema version 3\n");
    /* The version 1 dump's best row: acc and result are its type. */
    assert_non_null(strstr(out, "VALUES (1, 'min', 'f32', 'f32', 'f32', 'flat', 1048576, 0, '"
                                K1 "', 6.91, 6.8,"));

    /* Version 2 inputs (tests/db/v2.db, its dump v2.sql, both made by the redtune of that
     * schema): loaded, merged, exported as version 3, acc = result = type; a dump of the
     * version 2 file says version 2 and reads back. */
    snprintf(args, sizeof args, "load tests/db/v2.sql -o %s/v2.db", dir);
    EXPECT(args, 0, "1 device, 2 best entries, 2 kernels, 1 CUBINs, 3 measurements, 1 runs");
    snprintf(args, sizeof args, "merge tests/db/v2.db %s/v2.db %s -o %s/m.db", dir, p[1], dir);
    EXPECT(args, 0, "2 devices, 3 best entries, 3 kernels, 2 CUBINs, 3 measurements, 1 runs");
    snprintf(args, sizeof args, "dump %s/m.db", dir);
    EXPECT(args, 0, "-- redtune dump: schema version 3\n");
    assert_non_null(strstr(out, "c7f47c7', 'sum', 'f64', 'f64', 'f64', 'keys:len3', 16384, 0, "
                                "'ok', '', 5.25,"));
    EXPECT("dump tests/db/v2.db", 0, "-- redtune dump: schema version 2\n");
    assert_non_null(strstr(out, "INSERT INTO best (device_id, op, type, layout,"));
    snprintf(args, sizeof args, "export --db tests/db/v2.db --match h100 --with-measurements "
             "-o %s/e.db", dir);
    EXPECT(args, 0, "exported into");
    snprintf(args, sizeof args, "best --db tests/db/v2.db --format csv");
    EXPECT(args, 0, "NVIDIA H100 80GB HBM3,sm_90,a1b2,3000.0,min,f32,f32,f32,1048576,flat,");
    assert_false(file_exists("tests/db/v2.db-wal"));
    char sub[300];
    snprintf(sub, sizeof sub, "%s/v2.db", dir);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/m.db", dir);
    unlink(sub);
    snprintf(sub, sizeof sub, "%s/e.db", dir);
    unlink(sub);

    /* Refused inputs: exit 3, the file named, nothing written. */
    snprintf(args, sizeof args, "merge %s tests/db/foreign.db -o %s/x.db", p[1], dir);
    EXPECT(args, 3, "tests/db/foreign.db: not a redtune database");
    snprintf(args, sizeof args, "merge %s %s/missing.db -o %s/x.db", p[1], dir, dir);
    EXPECT(args, 3, "missing.db: No such file or directory");
    snprintf(args, sizeof args, "export --db tests/db/newer.db --match x -o %s/x.db", dir);
    EXPECT(args, 3, "tests/db/newer.db: schema version 99 is newer");
    snprintf(args, sizeof args, "dump tests/db/corrupt.db -o %s/x.sql", dir);
    EXPECT(args, 3, "tests/db/corrupt.db: corrupt database");
    snprintf(args, sizeof args, "load tests/db/not_sqlite.db -o %s/x.db", dir);
    EXPECT(args, 3, "tests/db/not_sqlite.db: not a redtune dump");
    assert_false(file_exists("tests/db/foreign.db-wal"));

    /* Usage. */
    EXPECT("export --match H100", 2, "-o FILE is required");
    snprintf(args, sizeof args, "export -o %s/x.db", dir);
    EXPECT(args, 2, "--match NAME is required");
    snprintf(args, sizeof args, "merge -o %s/x.db", dir);
    EXPECT(args, 2, "merge: no input databases");
    EXPECT("merge a.db --bogus", 2, "unknown option '--bogus'");
    EXPECT("dump a.db b.db", 2, "dump: one database at a time");

    for (int i = 0; i < 5; i++)
        unlink(p[i]);
    assert_int_equal(rmdir(dir), 0);   /* nothing else was left there */
}

/* The shipping commands and reduce refuse what the database checks find (exit 3, the file
 * and the check named), an output that is their input or a link (exit 1), and load refuses
 * /dev/zero at once. */
static void ship_refusals(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", args[1024], db[300], in[300], link_out[300];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/a.db", dir);
    snprintf(in, sizeof in, "%s/in.f32", dir);
    snprintf(link_out, sizeof link_out, "%s/out.sql", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    EXPECT(args, 0, "loaded into");
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "INSERT INTO devices (id, name, ordinal, cc_major, "
                                  "cc_minor, sm_count, warp_size, max_threads_per_block, "
                                  "max_threads_per_sm, max_blocks_per_sm, smem_per_block, "
                                  "smem_per_block_optin, smem_per_sm, regs_per_block, "
                                  "regs_per_sm, l2_bytes, mem_clock_khz, bus_width_bits, "
                                  "driver_version, total_mem) VALUES (1, 'NVIDIA H100', 0, 9, "
                                  "0, 132, 32, 1024, 2048, 32, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1); "
                                  "INSERT INTO best (device_id, op, type, acc, result, "
                                  "layout, n, hot, kernel_hash, median_us, min_us, max_us, "
                                  "reps, gbps, frac_bw, deterministic) VALUES (1, 'min', 'f32', "
                                  "'f32', 'f32', 'flat', 1024, 0, 'nowhere', 1, 1, 1, 1, 1, 1, "
                                  "1)", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(raw);
    snprintf(args, sizeof args, "export --db %s --match H100 -o %s/x.db", db, dir);
    EXPECT(args, 3, "a.db: inconsistent database (PRAGMA foreign_key_check): row 1 of table "
                    "best refers to a row of table kernels that is not there");
    snprintf(args, sizeof args, "dump %s -o %s --force", db, db);
    EXPECT(args, 1, "a.db: is the input");
    assert_int_equal(symlink("/dev/stdout", link_out), 0);
    snprintf(args, sizeof args, "dump tests/db/partial.db -o %s --force", link_out);
    EXPECT(args, 1, "out.sql: is a symbolic link");
    snprintf(args, sizeof args, "load /dev/zero -o %s/x.db", dir);
    /* The program refuses a character device before reading it (store_load itself stops at
     * the first NUL byte: test_store's test_load_bounds). */
    EXPECT(args, 3, "/dev/zero: not a regular file");
    FILE *fp = fopen(in, "wb");
    assert_non_null(fp);
    fputs("abcd", fp);
    fclose(fp);
    snprintf(args, sizeof args, "reduce --op min --in %s --db tests/db/corrupt.db", in);
    EXPECT(args, 3, "tests/db/corrupt.db: corrupt database (PRAGMA quick_check)");
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* A directory, a FIFO or an unreadable file as the database (or dump): exit 3 from every
 * command, the same message, and no command blocks opening the FIFO. */
static void database_not_a_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", fifo[300], args[1024], want[512], unread[300];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo.db", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    run_env = "timeout 20 ";   /* a blocked open would be killed: exit 124, not 3 */
    const char *cmds[] = {
        "dump %s", "export --db %s --match x -o %s.out", "merge %s -o %s.out",
        "load %s -o %s.out", "best --db %s", "reduce --op sum --in v.bin --db %s",
        "--op min --db %s",
    };
    for (int k = 0; k < 2; k++) {
        const char *path = k ? fifo : dir;
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
            snprintf(args, sizeof args, cmds[i], path, fifo);
            if (k)
                snprintf(want, sizeof want, "redtune: %s: not a regular file\n", path);
            else
                snprintf(want, sizeof want, "redtune: %s: is a directory, not a %s\n", path,
                         i == 3 ? "dump" : "database");
            EXPECT(args, 3, want);
        }
    }
    /* Unreadable: root reads everything, so only another user can see this. */
    snprintf(unread, sizeof unread, "%s/unreadable.db", dir);
    FILE *f = fopen(unread, "w");
    assert_non_null(f);
    fclose(f);
    chmod(unread, 0);
    if (geteuid() != 0) {
        snprintf(args, sizeof args, "reduce --op sum --in v.bin --db %s", unread);
        EXPECT(args, 3, "unreadable.db: cannot read: Permission denied");
        snprintf(args, sizeof args, "dump %s", unread);
        EXPECT(args, 3, "unreadable.db: cannot read: Permission denied");
    }
    run_env = "";
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* A database locked by another process: a line that says redtune waits, then exit 3 when the
 * lock outlasts the busy timeout (10 s). */
static void locked_database_says_it_waits(void **state)
{
    (void)state;
    char dir[] = "/tmp/redtune-cli-XXXXXX", db[300], args[1024], want[512];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/locked.db", dir);
    snprintf(args, sizeof args, "load -o %s", db);
    EXPECT(args, 0, "loaded into");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE; CREATE TABLE lock_holder(x);", NULL, NULL,
                                  NULL), SQLITE_OK);
    snprintf(args, sizeof args, "dump %s", db);
    snprintf(want, sizeof want, "redtune: %s: waiting for another process's lock on it (up to "
             "10 s)\n", db);
    EXPECT(args, 3, want);
    assert_non_null(strstr(out, "database is locked"));
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(h);
    snprintf(args, sizeof args, "dump %s", db);
    EXPECT(args, 0, "-- redtune dump");
    assert_null(strstr(out, "waiting"));
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

int test_cli_ship_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ship_commands),
        cmocka_unit_test(ship_refusals),
        cmocka_unit_test_teardown(database_not_a_file, reset_run_env),
        cmocka_unit_test(locked_database_says_it_waits),
    };
    return cmocka_run_group_tests_name("cli_ship", tests, NULL, NULL);
}
