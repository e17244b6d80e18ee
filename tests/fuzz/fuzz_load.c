/*
 * fuzz_load.c - libFuzzer target: an SQL dump given to `redtune load` (store_load), from
 * arbitrary bytes. load must refuse it with a message or write a database that passes its own
 * checks; and what it wrote must round-trip: dump(load(dump(x))) == dump(x) for every x load
 * accepts (a value load accepts and its dump cannot give back was the NUL-in-text bug).
 * tests/fuzz/README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/store.h"
#include "tuner/ship.h"

static char dir[64], in_path[96], db1[96], db2[96], sql2[96];

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/redtune-fuzz-load-XXXXXX");
        if (!mkdtemp(dir))
            abort();
        snprintf(in_path, sizeof in_path, "%s/in.sql", dir);
        snprintf(db1, sizeof db1, "%s/one.db", dir);
        snprintf(db2, sizeof db2, "%s/two.db", dir);
        snprintf(sql2, sizeof sql2, "%s/two.sql", dir);
    }
    if (write_file(in_path, data, size))
        abort();
    const char *in[1] = {in_path};
    store_ship_stats st;
    rt_err e;
    memset(&st, 0, sizeof st);
    memset(&e, 0, sizeof e);
    if (store_load(in, 1, db1, 1, &st, &e) != RT_OK) {
        if (!e.msg[0])
            abort();   /* every refusal says why */
        return 0;
    }
    char *text1 = NULL, *text2 = NULL;
    size_t len1 = 0, len2 = 0;
    if (store_dump(db1, &text1, &len1, &st, &e) != RT_OK)
        abort();   /* load wrote a database its own dump refuses */
    if (write_file(sql2, text1, len1))
        abort();
    const char *in2[1] = {sql2};
    if (store_load(in2, 1, db2, 1, &st, &e) != RT_OK)
        abort();   /* the dump of what load accepted does not load */
    if (store_dump(db2, &text2, &len2, &st, &e) != RT_OK)
        abort();
    if (len1 != len2 || memcmp(text1, text2, len1))
        abort();   /* no round trip */
    free(text1);
    free(text2);
    return 0;
}
