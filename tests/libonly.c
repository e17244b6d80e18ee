/*
 * libonly.c - a program linked with the runtime objects alone (libredtune_int.a, no
 * libtuner.a): it has the read-only store_open_read and the templates-only embed_find, and
 * nothing of the tuner's (no store_open, no Lua). Prints TAP lines for tools/check_runtime.sh.
 *
 *   build/tests/libonly DIR     (DIR: an empty, writable directory)
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/embed.h"
#include "runtime/store.h"

int main(int argc, char **argv)
{
    char path[4096];
    struct stat st;
    store *s = NULL;
    rt_err e = {0};
    int failed = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: libonly DIR\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/new.db", argv[1]);
    int rc = store_open_read(path, &s, &e);
    if (rc == RT_EDB && !s && strstr(e.msg, path) && stat(path, &st) != 0) {
        printf("ok 4 - runtime: libredtune alone opens a missing database read-only: RT_EDB, "
               "no file made\n");
    } else {
        printf("not ok 4 - runtime: libredtune alone: store_open_read of a missing file gave "
               "%d \"%s\"%s\n", rc, e.msg, stat(path, &st) == 0 ? ", and made the file" : "");
        failed = 1;
    }
    store_close(s);
    if (embed_find("templates/gridstride.cu") && !embed_find("lua/redtune.lua")
        && !embed_find("db/schema.sql")) {
        printf("ok 5 - runtime: libredtune alone finds its templates and no Lua or schema\n");
    } else {
        printf("not ok 5 - runtime: libredtune alone: embed_find of the template %s, of "
               "lua/redtune.lua %s\n", embed_find("templates/gridstride.cu") ? "found" : "missed",
               embed_find("lua/redtune.lua") ? "found" : "missed");
        failed = 1;
    }
    return failed;
}
