/*
 * store_lookup.c - the read-only queries of libredtune's lookup (runtime/api*.c): the device
 * row nearest the GPU at hand, its rows of table best, a kernel's source (checked against its
 * hash) and its CUBIN. One function per statement, as in store.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store_int.h"

int store_get_kernel_source(store *s, const char *hash, char **source, rt_err *e)
{
    static const char sql[] = "SELECT source FROM kernels WHERE hash = ?1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *source = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK) {
        rc = store_fail(s, "get kernel source", e);
        goto done;
    }
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no kernel %s", s->path, hash);
        goto done;
    }
    if (r != SQLITE_ROW) {
        rc = store_fail(s, "get kernel source", e);
        goto done;
    }
    const char *text = col_text(st, 0);
    size_t len = (size_t)sqlite3_column_bytes(st, 0);
    if (!(*source = malloc(len + 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: kernel %s: out of memory", s->path, hash);
        goto done;
    }
    memcpy(*source, text, len);
    (*source)[len] = '\0';
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        ;
    if (r != SQLITE_DONE) {
        rc = store_fail(s, "get kernel source", e);
        free(*source);
        *source = NULL;
    }
done:
    sqlite3_finalize(st);
    return rc;
}

int store_get_checked_source(store *s, const char *hash, char **source, rt_err *e)
{
    char sum[RT_HASH_HEX];
    int rc = store_get_kernel_source(s, hash, source, e);

    if (rc != RT_OK)
        return rc;
    hash_hex(*source, strlen(*source), sum);
    if (strcmp(sum, hash) != 0) {
        free(*source);
        *source = NULL;
        return rt_seterr(e, RT_EDB, "%s: kernel %s: the SHA-256 of its source is %s, not its "
                         "hash: the database was altered after the kernel was stored; it is "
                         "not run", s->path, hash, sum);
    }
    return RT_OK;
}

/* The binary of 'hash' for 'arch' made by NVRTC 'version', or by the newest NVRTC when
 * version < 0; *made_by receives the version of the one found. */
static int get_binary(store *s, const char *hash, const char *arch, int version,
                      store_binary *b, int *made_by, rt_err *e)
{
    static const char sql[] =
        "SELECT cubin, registers, smem_bytes, log, nvrtc_version FROM binaries "
        "WHERE hash = ?1 AND arch = ?2 AND (?3 < 0 OR nvrtc_version = ?3) "
        "ORDER BY nvrtc_version DESC LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    memset(b, 0, sizeof *b);
    *made_by = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, arch) != SQLITE_OK
        || sqlite3_bind_int(st, 3, version) != SQLITE_OK) {
        rc = store_fail(s, "get binary", e);
        goto done;
    }
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        if (version >= 0)
            rc = rt_seterr(e, RT_ENOTFOUND, "%s: no binary of kernel %s for %s with NVRTC %d",
                           s->path, hash, arch, version);
        else
            rc = rt_seterr(e, RT_ENOTFOUND, "%s: no binary of kernel %s for %s", s->path, hash,
                           arch);
        goto done;
    }
    if (r != SQLITE_ROW) {
        rc = store_fail(s, "get binary", e);
        goto done;
    }
    const void *blob = sqlite3_column_blob(st, 0);
    size_t size = (size_t)sqlite3_column_bytes(st, 0);
    b->registers = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
    b->smem_bytes = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
    *made_by = sqlite3_column_int(st, 4);
    if (!(b->cubin = malloc(size ? size : 1))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", s->path, hash);
        goto done;
    }
    if (size)
        memcpy(b->cubin, blob, size);
    b->size = size;
    if (sqlite3_column_type(st, 3) != SQLITE_NULL && !(b->log = strdup(col_text(st, 3)))) {
        rc = rt_seterr(e, RT_ENOMEM, "%s: binary %s: out of memory", s->path, hash);
        goto done;
    }
    if ((r = sqlite3_step(st)) != SQLITE_DONE)
        rc = store_fail(s, "get binary", e);
done:
    sqlite3_finalize(st);
    if (rc != RT_OK) {
        store_binary_free(b);
        *made_by = 0;
    }
    return rc;
}

int store_get_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     store_binary *b, rt_err *e)
{
    int made_by;
    if (nvrtc_version < 0) {
        memset(b, 0, sizeof *b);
        return rt_seterr(e, RT_EINVAL, "%s: get binary: NVRTC version %d", s->path, nvrtc_version);
    }
    return get_binary(s, hash, arch, nvrtc_version, b, &made_by, e);
}

void store_binary_free(store_binary *b)
{
    if (!b)
        return;
    free(b->cubin);
    free(b->log);
    memset(b, 0, sizeof *b);
}

/* Step a statement whose columns are those of store_best_row (in its order) and call 'cb'
 * for each row; a non-zero return from 'cb' stops the walk (not an error). */
int store_walk_best_rows(store *s, sqlite3_stmt *st, const char *what,
                         int (*cb)(const store_best_row *row, void *arg), void *arg,
                         rt_err *e)
{
    int r;
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
            .nseg = sqlite3_column_int64(st, 16),
            .seg_mean = sqlite3_column_double(st, 17),
            .acc = col_text(st, 18),
            .result = col_text(st, 19),
            .device_id = sqlite3_column_int64(st, 20),
        };
        if (cb(&row, arg) != 0)
            return RT_OK;
    }
    return r == SQLITE_DONE ? RT_OK : store_fail(s, what, e);
}

/* The rows of one layout: the layout and its profiles ("keys" finds "keys:len3"), or with an
 * axis kind (?11, or ?8 in the list), those `axis:OxLxI` rows whose inner is 1 (kind 1) or
 * not (kind 0). */
#define LAYOUT_ANY(L) "(b.layout = " L " OR b.layout LIKE " L " || ':%') "
#define LAYOUT_KIND(L, K) "(b.layout LIKE " L " || ':%' AND (b.layout GLOB '*x1') = " K ") "

/* store_find_device_kind, and with band (mlo, mhi) only rows whose mean segment length lies
 * in [mlo, mhi] count (store_find_device_mean). */
static int find_device(store *s, const rt_device *d, const char *op, const char *type,
                       const char *acc, const char *result, const char *layout, int axis_kind,
                       int hot, const double *band, store_device_match *m, rt_err *e)
{
    /* Only rows of the same major architecture qualify; the level ranks them. */
#define FIND_SQL(ACC, RESULT, LAYOUT)                                                         \
        "SELECT d.id, d.name, d.cc_major, d.cc_minor, d.sm_count, count(*) AS nbest, "      \
        "CASE WHEN d.name = ?5 AND d.sm_count = ?6 AND d.cc_minor = ?8 THEN 1 "             \
        "     WHEN d.cc_minor = ?8 THEN 2 ELSE 3 END AS level, "                            \
        "coalesce(d.uuid = ?12, 0) AS own "                                                 \
        "FROM best b JOIN devices d ON d.id = b.device_id "                                 \
        "WHERE b.op = ?1 AND b.type = ?2 AND " LAYOUT                                     \
        "AND b.hot = ?4 AND " ACC " = coalesce(?9, ?2) AND " RESULT " = coalesce(?10, ?2) " \
        "AND d.cc_major = ?7 AND (?13 IS NULL OR b.seg_mean BETWEEN ?13 AND ?14) "          \
        "GROUP BY d.id "                                                                    \
        "ORDER BY level, abs(d.sm_count - ?6), nbest DESC, own DESC, d.last_seen DESC, d.id " \
        "LIMIT 1"
    static const char sql[] = FIND_SQL("b.acc", "b.result", LAYOUT_ANY("?3")),
                      sql_v2[] = FIND_SQL("b.type", "b.type", LAYOUT_ANY("?3")),   /* v2 */
                      sql_kind[] = FIND_SQL("b.acc", "b.result", LAYOUT_KIND("?3", "?11")),
                      sql_kind_v2[] = FIND_SQL("b.type", "b.type", LAYOUT_KIND("?3", "?11"));
#undef FIND_SQL
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r, found = 0;
    const char *q = axis_kind < 0 ? (s->version >= 3 ? sql : sql_v2)
                                  : (s->version >= 3 ? sql_kind : sql_kind_v2);

    memset(m, 0, sizeof *m);
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK
        || (axis_kind >= 0 && sqlite3_bind_int(st, 11, axis_kind != 0) != SQLITE_OK)
        || bind_text(st, 1, op) != SQLITE_OK || bind_text(st, 2, type) != SQLITE_OK
        || bind_text(st, 3, layout) != SQLITE_OK || sqlite3_bind_int(st, 4, hot) != SQLITE_OK
        || bind_text(st, 5, d->name) != SQLITE_OK
        || sqlite3_bind_int(st, 6, d->sm_count) != SQLITE_OK
        || sqlite3_bind_int(st, 7, d->cc_major) != SQLITE_OK
        || sqlite3_bind_int(st, 8, d->cc_minor) != SQLITE_OK
        || bind_text(st, 9, acc) != SQLITE_OK || bind_text(st, 10, result) != SQLITE_OK
        || bind_text(st, 12, d->uuid[0] ? d->uuid : NULL) != SQLITE_OK
        || (band && (sqlite3_bind_double(st, 13, band[0]) != SQLITE_OK
                     || sqlite3_bind_double(st, 14, band[1]) != SQLITE_OK))) {
        rc = store_fail(s, "find device", e);
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
        m->own = sqlite3_column_int(st, 7);
    }
    if (r != SQLITE_DONE) {
        rc = store_fail(s, "find device", e);
        goto done;
    }
    if (!found) {
        char tt[64], bt[96] = "";
        if (band)
            snprintf(bt, sizeof bt, " with a mean segment length in [%g, %g]", band[0], band[1]);
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no device of compute capability %d.x has a "
                       "winner for %s %s %s%s %s%s", store_path(s), d->cc_major, op,
                       store_type_text(type, acc, result, tt, sizeof tt), layout,
                       axis_kind < 0 ? "" : axis_kind ? " (inner == 1)" : " (inner > 1)",
                       hot ? "hot" : "cold", bt);
    }
done:
    sqlite3_finalize(st);
    if (rc != RT_OK)
        memset(m, 0, sizeof *m);
    return rc;
}

int store_find_device_kind(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout,
                           int axis_kind, int hot, store_device_match *m, rt_err *e)
{
    return find_device(s, d, op, type, acc, result, layout, axis_kind, hot, NULL, m, e);
}

int store_find_device_mean(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout, int hot,
                           double mlo, double mhi, store_device_match *m, rt_err *e)
{
    const double band[2] = {mlo, mhi};
    return find_device(s, d, op, type, acc, result, layout, -1, hot, band, m, e);
}

int store_find_device_spec(store *s, const rt_device *d, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout, int hot,
                           store_device_match *m, rt_err *e)
{
    return store_find_device_kind(s, d, op, type, acc, result, layout, -1, hot, m, e);
}

int store_list_best_for_device_kind(store *s, long long device_id, const char *op,
                                    const char *type, const char *acc, const char *result,
                                    const char *layout, int axis_kind, int hot,
                                    int (*cb)(const store_best_row *row, void *arg),
                                    void *arg, rt_err *e)
{
/* The device's own rows, and for a case (layout, n) it has none of, the row of a device
 * identical to it (same name, compute capability, SM count, memory clock and bus width: the
 * GPUs that `--split` shares cases among), the fastest first. */
#define LIST_SQL(ACC, RESULT, LAYOUT)                                                         \
        "SELECT d.name, 'sm_' || d.cc_major || d.cc_minor, b.op, b.type, b.layout, b.n, "   \
        "b.hot, b.kernel_hash, k.family, k.params, b.median_us, b.min_us, b.max_us, b.gbps, " \
        "b.frac_bw, b.deterministic, b.nseg, b.seg_mean, b.acc_, b.result_, b.device_id "   \
        "FROM (SELECT b.*, " ACC " AS acc_, " RESULT " AS result_, row_number() OVER "     \
        "  (PARTITION BY b.layout, b.n ORDER BY b.device_id <> ?1, b.median_us, b.device_id) " \
        "  AS rank_ "                                                                        \
        "  FROM best b JOIN devices d ON d.id = b.device_id JOIN devices p ON p.id = ?1 "   \
        "  WHERE d.name = p.name AND d.cc_major = p.cc_major AND d.cc_minor = p.cc_minor "  \
        "  AND d.sm_count = p.sm_count AND d.mem_clock_khz = p.mem_clock_khz "              \
        "  AND d.bus_width_bits = p.bus_width_bits "                                        \
        "  AND b.op = ?2 AND b.type = ?3 AND " LAYOUT                                       \
        "  AND b.hot = ?5 AND " ACC " = coalesce(?6, ?3) AND " RESULT " = coalesce(?7, ?3)) b " \
        "JOIN kernels k ON k.hash = b.kernel_hash JOIN devices d ON d.id = b.device_id "     \
        "WHERE b.rank_ = 1 ORDER BY b.n, b.layout"
    static const char sql[] = LIST_SQL("b.acc", "b.result", LAYOUT_ANY("?4")),
                      sql_v2[] = LIST_SQL("b.type", "b.type", LAYOUT_ANY("?4")),   /* v2 */
                      sql_kind[] = LIST_SQL("b.acc", "b.result", LAYOUT_KIND("?4", "?8")),
                      sql_kind_v2[] = LIST_SQL("b.type", "b.type", LAYOUT_KIND("?4", "?8"));
#undef LIST_SQL
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;
    const char *q = axis_kind < 0 ? (s->version >= 3 ? sql : sql_v2)
                                  : (s->version >= 3 ? sql_kind : sql_kind_v2);

    if (!cb)
        return rt_seterr(e, RT_EINVAL, "%s: list best for device: no callback", store_path(s));
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK
        || (axis_kind >= 0 && sqlite3_bind_int(st, 8, axis_kind != 0) != SQLITE_OK)
        || sqlite3_bind_int64(st, 1, device_id) != SQLITE_OK
        || bind_text(st, 2, op) != SQLITE_OK || bind_text(st, 3, type) != SQLITE_OK
        || bind_text(st, 4, layout) != SQLITE_OK || sqlite3_bind_int(st, 5, hot) != SQLITE_OK
        || bind_text(st, 6, acc) != SQLITE_OK || bind_text(st, 7, result) != SQLITE_OK) {
        rc = store_fail(s, "list best for device", e);
        goto done;
    }
    rc = store_walk_best_rows(s, st, "list best for device", cb, arg, e);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_list_best_for_device_spec(store *s, long long device_id, const char *op,
                                    const char *type, const char *acc, const char *result,
                                    const char *layout, int hot,
                                    int (*cb)(const store_best_row *row, void *arg),
                                    void *arg, rt_err *e)
{
    return store_list_best_for_device_kind(s, device_id, op, type, acc, result, layout, -1,
                                           hot, cb, arg, e);
}

int store_find_device(store *s, const rt_device *d, const char *op, const char *type,
                      const char *layout, int hot, store_device_match *m, rt_err *e)
{
    return store_find_device_spec(s, d, op, type, NULL, NULL, layout, hot, m, e);
}

int store_list_best_for_device(store *s, long long device_id, const char *op,
                               const char *type, const char *layout, int hot,
                               int (*cb)(const store_best_row *row, void *arg), void *arg,
                               rt_err *e)
{
    return store_list_best_for_device_spec(s, device_id, op, type, NULL, NULL, layout, hot, cb,
                                           arg, e);
}

int store_get_binary_any(store *s, const char *hash, const char *arch, store_binary *b,
                         int *nvrtc_version, rt_err *e)
{
    return get_binary(s, hash, arch, -1, b, nvrtc_version, e);
}
