/*
 * store_lookup.c - the read-only queries of the runtime lookup library (runtime/api.c):
 * which device row answers for the GPU at hand, its winners per size, and a CUBIN whatever
 * NVRTC made it. store.c holds every statement that writes; this file never writes.
 *
 * Same discipline as store.c: prepare_v2 -> bind -> step until SQLITE_DONE -> finalize on
 * every path; an error names the database's path, what was being done and SQLite's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store.h"

static int fail(store *s, const char *what, rt_err *e)
{
    return rt_seterr(e, RT_EDB, "%s: %s: %s", store_path(s), what,
                     sqlite3_errmsg(store_db(s)));
}

static int bind_text(sqlite3_stmt *st, int i, const char *text)
{
    return sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC);
}

/* Text of a result column, "" for NULL. */
static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

int store_find_device(store *s, const rt_device *d, const char *op, const char *type,
                      const char *layout, int hot, store_device_match *m, rt_err *e)
{
    /* Only rows of the same major architecture qualify; the level ranks them. */
    static const char sql[] =
        "SELECT d.id, d.name, d.cc_major, d.cc_minor, d.sm_count, count(*) AS nbest, "
        "CASE WHEN d.name = ?5 AND d.sm_count = ?6 AND d.cc_minor = ?8 THEN 1 "
        "     WHEN d.cc_minor = ?8 THEN 2 ELSE 3 END AS level "
        "FROM best b JOIN devices d ON d.id = b.device_id "
        "WHERE b.op = ?1 AND b.type = ?2 AND b.layout = ?3 AND b.hot = ?4 "
        "AND d.cc_major = ?7 "
        "GROUP BY d.id "
        "ORDER BY level, abs(d.sm_count - ?6), nbest DESC, d.last_seen DESC, d.id "
        "LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r, found = 0;

    memset(m, 0, sizeof *m);
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, op) != SQLITE_OK || bind_text(st, 2, type) != SQLITE_OK
        || bind_text(st, 3, layout) != SQLITE_OK || sqlite3_bind_int(st, 4, hot) != SQLITE_OK
        || bind_text(st, 5, d->name) != SQLITE_OK
        || sqlite3_bind_int(st, 6, d->sm_count) != SQLITE_OK
        || sqlite3_bind_int(st, 7, d->cc_major) != SQLITE_OK
        || sqlite3_bind_int(st, 8, d->cc_minor) != SQLITE_OK) {
        rc = fail(s, "find device", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        found = 1;
        m->id = sqlite3_column_int64(st, 0);
        snprintf(m->name, sizeof m->name, "%s", col_text(st, 1));
        m->cc_major = sqlite3_column_int(st, 2);
        m->cc_minor = sqlite3_column_int(st, 3);
        m->sm_count = sqlite3_column_int(st, 4);
        m->nbest = sqlite3_column_int(st, 5);
        m->level = sqlite3_column_int(st, 6);
    }
    if (r != SQLITE_DONE) {
        rc = fail(s, "find device", e);
        goto done;
    }
    if (!found)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no device of compute capability %d.x has a "
                       "winner for %s %s %s %s", store_path(s), d->cc_major, op, type, layout,
                       hot ? "hot" : "cold");
done:
    sqlite3_finalize(st);
    if (rc != RT_OK)
        memset(m, 0, sizeof *m);
    return rc;
}

int store_list_best_for_device(store *s, long long device_id, const char *op,
                               const char *type, const char *layout, int hot,
                               int (*cb)(const store_best_row *row, void *arg), void *arg,
                               rt_err *e)
{
    static const char sql[] =
        "SELECT d.name, 'sm_' || d.cc_major || d.cc_minor, b.op, b.type, b.layout, b.n, "
        "b.hot, b.kernel_hash, k.family, k.params, b.median_us, b.min_us, b.max_us, b.gbps, "
        "b.frac_bw, b.deterministic "
        "FROM best b JOIN kernels k ON k.hash = b.kernel_hash "
        "JOIN devices d ON d.id = b.device_id "
        "WHERE b.device_id = ?1 AND b.op = ?2 AND b.type = ?3 AND b.layout = ?4 "
        "AND b.hot = ?5 "
        "ORDER BY b.n";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    if (!cb)
        return rt_seterr(e, RT_EINVAL, "%s: list best for device: no callback", store_path(s));
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, device_id) != SQLITE_OK
        || bind_text(st, 2, op) != SQLITE_OK || bind_text(st, 3, type) != SQLITE_OK
        || bind_text(st, 4, layout) != SQLITE_OK || sqlite3_bind_int(st, 5, hot) != SQLITE_OK) {
        rc = fail(s, "list best for device", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        store_best_row row = {
            .device_name = col_text(st, 0),
            .arch = col_text(st, 1),
            .op = col_text(st, 2),
            .type = col_text(st, 3),
            .layout = col_text(st, 4),
            .n = sqlite3_column_int64(st, 5),
            .hot = sqlite3_column_int(st, 6),
            .kernel_hash = col_text(st, 7),
            .family = col_text(st, 8),
            .params = col_text(st, 9),
            .median_us = sqlite3_column_double(st, 10),
            .min_us = sqlite3_column_double(st, 11),
            .max_us = sqlite3_column_double(st, 12),
            .gbps = sqlite3_column_double(st, 13),
            .frac_bw = sqlite3_column_double(st, 14),
            .deterministic = sqlite3_column_int(st, 15),
        };
        if (cb(&row, arg) != 0)
            goto done;   /* stopped by the caller: not an error */
    }
    if (r != SQLITE_DONE)
        rc = fail(s, "list best for device", e);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_get_binary_any(store *s, const char *hash, const char *arch, store_binary *b,
                         int *nvrtc_version, rt_err *e)
{
    static const char sql[] =
        "SELECT cubin, registers, smem_bytes, log, nvrtc_version FROM binaries "
        "WHERE hash = ?1 AND arch = ?2 ORDER BY nvrtc_version DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    memset(b, 0, sizeof *b);
    *nvrtc_version = 0;
    if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, arch) != SQLITE_OK) {
        rc = fail(s, "get binary", e);
        goto done;
    }
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no binary of kernel %s for %s", store_path(s),
                       hash, arch);
        goto done;
    }
    if (r != SQLITE_ROW) {
        rc = fail(s, "get binary", e);
        goto done;
    }
    const void *blob = sqlite3_column_blob(st, 0);
    size_t size = (size_t)sqlite3_column_bytes(st, 0);
    b->registers = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
    b->smem_bytes = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
    *nvrtc_version = sqlite3_column_int(st, 4);
    if (!(b->cubin = malloc(size ? size : 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", store_path(s), hash);
        goto done;
    }
    if (size)
        memcpy(b->cubin, blob, size);
    b->size = size;
    if (sqlite3_column_type(st, 3) != SQLITE_NULL && !(b->log = strdup(col_text(st, 3)))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", store_path(s), hash);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        ;
    if (r != SQLITE_DONE)
        rc = fail(s, "get binary", e);
done:
    sqlite3_finalize(st);
    if (rc != RT_OK) {
        store_binary_free(b);
        *nvrtc_version = 0;
    }
    return rc;
}
