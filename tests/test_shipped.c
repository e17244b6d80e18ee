/*
 * test_shipped.c - the shipped dumps (db/tuned/NAME.sql) against today's generator, with no GPU
 * and no NVRTC.
 *
 * libredtune runs a winner as the unit its own generator makes for the winner's config
 * (runtime/api_kernel.c) and takes a stored CUBIN only when one was made from exactly that
 * unit (the same SHA-256); otherwise it compiles the unit with NVRTC at the first call. After
 * a change of a template or of the prelude, tools/refresh_shipped.sh gives the dumps the
 * CUBINs of the new units; this group fails when that was forgotten.
 *
 * Group "shipped" (CPU, runs everywhere):
 *   shipped_cubins: every winner (table best) of every dump, made into the unit the runtime
 *     runs it as, by the runtime's own functions: a flat or axis winner's config as
 *     api_winner_kernel makes it (api_winner_config), a segmented one's as a keys or offsets
 *     call without RT_SEG_OFF64, RT_SEG_UNIFORM or unaligned pointers makes it
 *     (api_seg_config: LAYOUT and OFF64 = 0 set), the unit of (op, the row's type spec) and
 *     its hash as api_config_kernel makes them (api_config_unit); and for an axis winner of
 *     argmin/argmax also the unit of the index alone (RT_RESULT_INDEX), which the runtime
 *     runs with the same winners and refresh_shipped.sh stores too. Each unit must have a
 *     CUBIN for its device's arch (store_get_binary_any, the runtime's lookup). A line for
 *     each winner without one, a line per dump, and a last line
 *     "check_shipped: N winners, N units, all with a CUBIN" (or "..., M without").
 *     Variants that no dump ships are not checked: OFF64 = 1, V = 1, LONG = 0, RT_BOUNDS
 *     (one offsets segment), flat argmin/argmax's index alone.
 *   shipped_cubins_stale: the same check on a dump whose CUBIN of one winner's unit is
 *     deleted reports that unit.
 *
 * REDTUNE_SHIPPED="A.sql B.sql" checks those dumps instead of db/tuned/NAME.sql (a dump of an
 * older commit, say): REDTUNE_SHIPPED=/tmp/old.sql REDTUNE_TEST_FILTER=shipped_cubins
 * build/tests/all cpu
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "include/redtune.h"
#include "runtime/api_int.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tests/api_util.h"
#include "tuner/ship.h"
#include "tuner/store_tune.h"

#define SHIPPED_DIR "db/tuned"

/* A winner of a dump, copied out of store_list_best's callback. */
typedef struct ship_row {
    char device[128], arch[16], op[32], type[16], acc[16], result[16], layout[64];
    char hash[RT_HASH_HEX], family[RT_NAME_MAX], params[256];
    long long n;
} ship_row;

typedef struct ship_rows {
    ship_row *r;
    int n, cap;
} ship_rows;

/* What the check of one or more dumps found. */
typedef struct ship_counts {
    int winners, units, missing;   /* missing: units without a CUBIN */
    int quiet;                     /* 1: no lines printed */
    char (*seen)[RT_HASH_HEX + 16];   /* the units of the dump being checked: hash and arch */
    int nseen, capseen;
    char (*gone)[RT_HASH_HEX];      /* the missing units' hashes, every dump */
    int ngone, capgone;
} ship_counts;

static int collect(const store_best_row *row, void *arg)
{
    ship_rows *rs = arg;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 256;
        ship_row *r = realloc(rs->r, (size_t)cap * sizeof *r);
        if (!r)
            return 1;
        rs->r = r;
        rs->cap = cap;
    }
    ship_row *w = &rs->r[rs->n++];
    memset(w, 0, sizeof *w);
    snprintf(w->device, sizeof w->device, "%s", row->device_name);
    snprintf(w->arch, sizeof w->arch, "%s", row->arch);
    snprintf(w->op, sizeof w->op, "%s", row->op);
    snprintf(w->type, sizeof w->type, "%s", row->type);
    snprintf(w->acc, sizeof w->acc, "%s", row->acc);
    snprintf(w->result, sizeof w->result, "%s", row->result);
    snprintf(w->layout, sizeof w->layout, "%s", row->layout);
    snprintf(w->hash, sizeof w->hash, "%s", row->kernel_hash);
    snprintf(w->family, sizeof w->family, "%s", row->family);
    snprintf(w->params, sizeof w->params, "%s", row->params);
    w->n = row->n;
    return 0;
}

/* 1 when 'layout' is 'kind' or one of its profiles ("keys", "keys:len3"). */
static int layout_is(const char *layout, const char *kind)
{
    size_t k = strlen(kind);
    return !strncmp(layout, kind, k) && (layout[k] == '\0' || layout[k] == ':');
}

/* The type spec a call passes for a row's (type, acc, result): the spec that resolves to
 * them for 'op', with only what differs from the operator's defaults set (ts.canon, as the
 * lookup keys its rows: api_choose.c's read_choice). -1 when none does. */
static int row_spec(rt_op op, const ship_row *r, rt_type *spec)
{
    int t = optype_parse_type(r->type), a = optype_parse_type(r->acc);
    if (t < 0 || a < 0)
        return -1;
    const rt_type tries[4] = {(rt_type)t, RT_ACC(t, a), RT_RESULT_ELEM(t),
                              RT_RESULT_ELEM(RT_ACC(t, a))};
    for (int i = 0; i < 4; i++) {
        optype_ts ts;
        if (!optype_resolve(op, tries[i], &ts, NULL, 0) && !strcmp(rt_type_name(ts.acc), r->acc)
            && !strcmp(rt_type_name(ts.res), r->result)) {
            *spec = ts.canon;
            return 0;
        }
    }
    return -1;
}

/* The hash of the unit libredtune runs winner 'r' as, for (op, spec): see the file comment. A
 * flat or axis winner of a family not built in runs from its stored source: its own hash. */
static int row_unit(const ship_row *r, rt_op op, rt_type spec, char hash[RT_HASH_HEX],
                    rt_err *e)
{
    int layout = layout_is(r->layout, "keys") ? RT_LAYOUT_KEYS
                 : layout_is(r->layout, "offsets") ? RT_LAYOUT_OFFSETS : 0;
    rt_config cfg;
    char *src = NULL;
    int changed, rc;
    if (layout)   /* seg_decide's config: 32-bit offsets, aligned, lengths not uniform */
        rc = api_seg_config(r->family, r->params, layout, 0, 1, 0, &cfg, &changed, e);
    else if (api_winner_config(r->family, r->params, &cfg, e) != RT_OK) {
        rt_clearerr(e);
        snprintf(hash, RT_HASH_HEX, "%s", r->hash);
        return RT_OK;
    } else
        rc = RT_OK;
    if (rc == RT_OK)
        rc = api_config_unit(NULL, op, spec, &cfg, &src, hash, e);
    free(src);
    return rc;
}

/* Unit 'hash' of winner 'r' (with 'what' saying which unit of it, "" for its own) checked
 * for a CUBIN of the row's arch in 's' (the runtime's lookup): counted once per dump, each
 * winner without one printed. */
static void check_unit(store *s, const char *name, const ship_row *r, const char *what,
                      const char *hash, ship_counts *c)
{
    char key[RT_HASH_HEX + 16];
    int i, fresh;
    snprintf(key, sizeof key, "%s %s", hash, r->arch);
    for (i = 0; i < c->nseen && strcmp(c->seen[i], key); i++)
        ;
    if ((fresh = i == c->nseen)) {
        if (c->nseen == c->capseen) {
            c->capseen = c->capseen ? 2 * c->capseen : 512;
            c->seen = realloc(c->seen, (size_t)c->capseen * sizeof *c->seen);
            assert_non_null(c->seen);
        }
        snprintf(c->seen[c->nseen++], sizeof *c->seen, "%s", key);
        c->units++;
    }
    store_binary b;
    rt_err e;
    int ver;
    memset(&b, 0, sizeof b);
    int rc = store_get_binary_any(s, hash, r->arch, &b, &ver, &e);
    store_binary_free(&b);
    if (rc != RT_OK && rc != RT_ENOTFOUND)
        fail_msg("%s: %s", name, e.msg);
    if (rc == RT_ENOTFOUND) {
        if (fresh) {   /* a unit without a CUBIN, counted once */
            c->missing++;
            if (c->ngone == c->capgone) {
                c->capgone = c->capgone ? 2 * c->capgone : 64;
                c->gone = realloc(c->gone, (size_t)c->capgone * sizeof *c->gone);
                assert_non_null(c->gone);
            }
            snprintf(c->gone[c->ngone++], sizeof *c->gone, "%s", hash);
        }
        char spec[64] = "";
        if (strcmp(r->acc, r->type) || strcmp(r->result, r->type))
            snprintf(spec, sizeof spec, " (acc %s, result %s)", r->acc, r->result);
        if (!c->quiet)
            print_message("# check_shipped: %s: %s %s %s%s%s n=%lld %s %s %s: no %s CUBIN for "
                          "unit %s (stored kernel %.12s)\n", name, r->device, r->op, r->type,
                          spec, what, r->n, r->layout, r->family, r->params, r->arch, hash,
                          r->hash);
    }
}

/* The winners of the loaded dump 'db' (named 'name') checked into *c. */
static void check_db(const char *name, const char *db, ship_counts *c)
{
    store *s = NULL;
    ship_rows rs = {0};
    rt_err e;
    int winners = c->winners, units = c->units, missing = c->missing;

    if (store_open_read(db, &s, &e) != RT_OK)
        fail_msg("%s: %s", name, e.msg);
    if (store_list_best(s, NULL, NULL, NULL, 0, collect, &rs, &e) != RT_OK)
        fail_msg("%s: %s", name, e.msg);
    c->nseen = 0;
    for (int i = 0; i < rs.n; i++) {
        const ship_row *r = &rs.r[i];
        char hash[RT_HASH_HEX];
        rt_type spec = RT_F32;   /* set by row_spec */
        int op = optype_parse_op(r->op);
        c->winners++;
        if (op < 0 || row_spec((rt_op)op, r, &spec))
            fail_msg("%s: %s %s %s (acc %s, result %s) n=%lld: not a built-in operator and "
                     "type spec of this library", name, r->device, r->op, r->type, r->acc,
                     r->result, r->n);
        if (row_unit(r, (rt_op)op, spec, hash, &e) != RT_OK)
            fail_msg("%s: %s %s %s n=%lld %s %s %s: %s", name, r->device, r->op, r->type, r->n,
                     r->layout, r->family, r->params, e.msg);
        check_unit(s, name, r, "", hash, c);
        /* argmin/argmax along an axis: the index alone runs with the same winners. */
        if (layout_is(r->layout, "axis") && optype_is_arg((rt_op)op)) {
            if (row_unit(r, (rt_op)op, RT_RESULT_INDEX(spec), hash, &e) != RT_OK)
                fail_msg("%s: %s %s %s n=%lld %s %s %s (index result): %s", name, r->device,
                         r->op, r->type, r->n, r->layout, r->family, r->params, e.msg);
            check_unit(s, name, r, " (index result)", hash, c);
        }
    }
    free(rs.r);
    store_close(s);
    if (!c->quiet)
        print_message("# check_shipped: %s: %d winners, %d units, %d without a CUBIN\n", name,
                      c->winners - winners, c->units - units, c->missing - missing);
}

/* The dumps to check: REDTUNE_SHIPPED's (space-separated), else db/tuned/NAME.sql. */
static void shipped_dumps(glob_t *g)
{
    const char *env = getenv("REDTUNE_SHIPPED");
    memset(g, 0, sizeof *g);
    if (env && *env) {
        char *list = strdup(env), *save = NULL;
        assert_non_null(list);
        for (char *p = strtok_r(list, " ", &save); p; p = strtok_r(NULL, " ", &save))
            assert_int_equal(glob(p, GLOB_NOCHECK | (g->gl_pathc ? GLOB_APPEND : 0), NULL, g),
                             0);
        free(list);
        return;
    }
    int rc = glob(SHIPPED_DIR "/*.sql", 0, NULL, g);
    assert_true(rc == 0 || rc == GLOB_NOMATCH);
}

/* REDTUNE_LOADS=keep makes other units than the shipped ones (codegen_loads): the check is of
 * the default. Its value, to put back (malloc'd; NULL when unset). */
static char *loads_off(void)
{
    const char *v = getenv("REDTUNE_LOADS");
    char *saved = v ? strdup(v) : NULL;
    unsetenv("REDTUNE_LOADS");
    return saved;
}

static void loads_back(char *saved)
{
    if (saved)
        setenv("REDTUNE_LOADS", saved, 1);
    free(saved);
}

/* Load dump 'sql' into 'db' (replaced). */
static void load_dump(const char *sql, const char *db)
{
    store_ship_stats st;
    rt_err e;
    if (store_load(&sql, 1, db, 1, &st, &e) != RT_OK)
        fail_msg("%s", e.msg);
}

static void ship_counts_free(ship_counts *c)
{
    free(c->seen);
    free(c->gone);
}

static void shipped_cubins(void **state)
{
    (void)state;
    struct stat sb;
    glob_t g;
    char dir[64], db[128];

    shipped_dumps(&g);
    if (!g.gl_pathc) {
        globfree(&g);
        print_message("# SKIP reason: %s\n", stat(SHIPPED_DIR, &sb) ? "no " SHIPPED_DIR " here "
                      "(run from the repository root)" : "no dump in " SHIPPED_DIR);
        skip();
    }
    char *loads = loads_off();
    ship_counts c = {0};
    api_util_make_dir(dir);
    snprintf(db, sizeof db, "%s/shipped.db", dir);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        load_dump(g.gl_pathv[i], db);
        check_db(g.gl_pathv[i], db, &c);
    }
    api_util_remove_dir(dir);
    loads_back(loads);
    globfree(&g);
    if (c.missing)
        print_message("# check_shipped: %d winners, %d units, %d without a CUBIN\n", c.winners,
                      c.units, c.missing);
    else
        print_message("# check_shipped: %d winners, %d units, all with a CUBIN\n", c.winners,
                      c.units);
    int missing = c.missing;
    ship_counts_free(&c);
    if (missing)
        fail_msg("%d units of today's generator without a CUBIN: `tools/refresh_shipped.sh "
                 "DUMP` stores them (after a change of a template or the prelude)", missing);
}

/* The unit of the first segmented winner (else the first winner) of the loaded dump 'db',
 * into hash. */
static void first_unit(const char *db, char hash[RT_HASH_HEX])
{
    store *s = NULL;
    ship_rows rs = {0};
    rt_err e;
    int pick = 0;
    rt_type spec;
    assert_int_equal(store_open_read(db, &s, &e), RT_OK);
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect, &rs, &e), RT_OK);
    assert_true(rs.n > 0);
    for (int i = rs.n - 1; i >= 0; i--)
        if (!layout_is(rs.r[i].layout, "flat") && !layout_is(rs.r[i].layout, "axis"))
            pick = i;
    rt_op op = (rt_op)optype_parse_op(rs.r[pick].op);
    assert_int_equal(row_spec(op, &rs.r[pick], &spec), 0);
    assert_int_equal(row_unit(&rs.r[pick], op, spec, hash, &e), RT_OK);
    free(rs.r);
    store_close(s);
}

static void shipped_cubins_stale(void **state)
{
    (void)state;
    glob_t g;
    char dir[64], db[128], hash[RT_HASH_HEX];
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;

    shipped_dumps(&g);
    if (!g.gl_pathc) {
        globfree(&g);
        print_message("# SKIP reason: no dump to check\n");
        skip();
    }
    char *loads = loads_off();
    api_util_make_dir(dir);
    snprintf(db, sizeof db, "%s/stale.db", dir);
    load_dump(g.gl_pathv[g.gl_pathc - 1], db);
    first_unit(db, hash);
    /* Its CUBINs gone, as after a template change that refresh_shipped.sh did not follow. */
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "DELETE FROM binaries WHERE hash = ?1", -1, &st,
                                        NULL), SQLITE_OK);
    assert_int_equal(sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);

    ship_counts c = {.quiet = 1};
    check_db(g.gl_pathv[g.gl_pathc - 1], db, &c);
    int found = 0;
    for (int i = 0; i < c.ngone; i++)
        found |= !strcmp(c.gone[i], hash);
    ship_counts_free(&c);
    api_util_remove_dir(dir);
    loads_back(loads);
    globfree(&g);
    assert_true(found);
}

int test_shipped_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shipped_cubins),
        cmocka_unit_test(shipped_cubins_stale),
    };
    return cmocka_run_group_tests_name("shipped", tests, NULL, NULL);
}
