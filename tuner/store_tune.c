/*
 * store_tune.c - what tuning writes into a redtune database (devices, runs, kernels, CUBINs,
 * measurements, the winners of table best) and the listing of table best (redtune best),
 * one function per statement. A put is one statement in autocommit mode, or a BEGIN
 * IMMEDIATE transaction when it needs several, so each is committed before it returns and a
 * writer waits (busy timeout) rather than fails when another tuner process holds the write
 * lock. The store is opened by store_open (tuner/store_open.c).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "../runtime/store_int.h"
#include "store_tune.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

/* Take the write lock now, waiting for other writers, rather than at the first write. */
static int tx_begin(store *s, rt_err *e)
{
    return store_exec(s->db, s->path, "BEGIN IMMEDIATE", "begin transaction", e);
}

static int tx_commit(store *s, rt_err *e)
{
    return store_exec(s->db, s->path, "COMMIT", "commit", e);
}

/* ---------------------------------------------------------------- devices and runs */

#define DEVICE_COLUMNS \
    "name, uuid, ordinal, cc_major, cc_minor, sm_count, warp_size, max_threads_per_block, " \
    "max_threads_per_sm, max_blocks_per_sm, smem_per_block, smem_per_block_optin, " \
    "smem_per_sm, regs_per_block, regs_per_sm, l2_bytes, mem_clock_khz, bus_width_bits, " \
    "driver_version, total_mem"

/* Bind ?1..?20 in the order of DEVICE_COLUMNS and ?21, the read bandwidth. */
static int bind_device(sqlite3_stmt *st, const rt_device *d, double read_gbps)
{
    const int ints[] = {
        d->ordinal, d->cc_major, d->cc_minor, d->sm_count, d->warp_size,
        d->max_threads_per_block, d->max_threads_per_sm, d->max_blocks_per_sm,
        d->smem_per_block, d->smem_per_block_optin, d->smem_per_sm, d->regs_per_block,
        d->regs_per_sm, d->l2_bytes, d->mem_clock_khz, d->bus_width_bits, d->driver_version,
    };
    int r = bind_text(st, 1, d->name);

    if (r == SQLITE_OK)
        r = bind_text(st, 2, d->uuid[0] ? d->uuid : NULL);
    for (int i = 0; r == SQLITE_OK && i < (int)(sizeof ints / sizeof ints[0]); i++)
        r = sqlite3_bind_int(st, 3 + i, ints[i]);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int64(st, 20, d->total_mem);
    if (r == SQLITE_OK)
        r = sqlite3_bind_double(st, 21, read_gbps);
    return r;
}

/* The id of the device's row, keyed by uuid when it has one, else by name and ordinal. */
static int find_device(store *s, const rt_device *d, long long *id, rt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *id = 0;
    if (sqlite3_prepare_v2(s->db, d->uuid[0]
                           ? "SELECT id FROM devices WHERE uuid = ?1"
                           : "SELECT id FROM devices WHERE uuid IS NULL AND name = ?2 "
                             "AND ordinal = ?3", -1, &st, NULL) != SQLITE_OK) {
        rc = store_fail(s, "find device", e);
        goto done;
    }
    r = d->uuid[0] ? bind_text(st, 1, d->uuid) : bind_text(st, 2, d->name);
    if (r == SQLITE_OK && !d->uuid[0])
        r = sqlite3_bind_int(st, 3, d->ordinal);
    if (r != SQLITE_OK) {
        rc = store_fail(s, "find device", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    if (r != SQLITE_DONE)
        rc = store_fail(s, "find device", e);
done:
    sqlite3_finalize(st);
    return rc;
}

static int insert_device(store *s, const rt_device *d, double read_gbps, long long *id,
                         rt_err *e)
{
    static const char sql[] =
        "INSERT INTO devices (" DEVICE_COLUMNS ", read_gbps) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
        "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
        "CASE WHEN ?21 > 0 THEN ?21 END)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_device(st, d, read_gbps) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE) {
        rc = store_fail(s, "insert device", e);
        goto done;
    }
    *id = sqlite3_last_insert_rowid(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

/* Refresh what may change (driver, clocks, a new bandwidth measurement) and last_seen. */
static int update_device(store *s, long long id, const rt_device *d, double read_gbps,
                         rt_err *e)
{
    static const char sql[] =
        "UPDATE devices SET name = ?1, uuid = ?2, ordinal = ?3, cc_major = ?4, cc_minor = ?5, "
        "sm_count = ?6, warp_size = ?7, max_threads_per_block = ?8, max_threads_per_sm = ?9, "
        "max_blocks_per_sm = ?10, smem_per_block = ?11, smem_per_block_optin = ?12, "
        "smem_per_sm = ?13, regs_per_block = ?14, regs_per_sm = ?15, l2_bytes = ?16, "
        "mem_clock_khz = ?17, bus_width_bits = ?18, driver_version = ?19, total_mem = ?20, "
        "read_gbps = CASE WHEN ?21 > 0 THEN ?21 ELSE read_gbps END, last_seen = " NOW " "
        "WHERE id = ?22";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_device(st, d, read_gbps) != SQLITE_OK
        || sqlite3_bind_int64(st, 22, id) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE)
        rc = store_fail(s, "update device", e);
    sqlite3_finalize(st);
    return rc;
}

int store_put_device(store *s, const rt_device *d, double read_gbps, long long *id, rt_err *e)
{
    long long found;
    int rc;

    if ((rc = tx_begin(s, e)) != RT_OK)
        return rc;
    if ((rc = find_device(s, d, &found, e)) != RT_OK)
        goto done;
    if (found)
        rc = update_device(s, found, d, read_gbps, e);
    else
        rc = insert_device(s, d, read_gbps, &found, e);
    if (rc == RT_OK)
        rc = tx_commit(s, e);
    if (rc == RT_OK && id)
        *id = found;
done:
    if (rc != RT_OK)
        store_tx_rollback(s->db);
    return rc;
}

int store_begin_run(store *s, long long device_id, const char *cmdline, int nvrtc_version,
                    long long *run_id, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO runs (device_id, cmdline, redtune_version, nvrtc_version) "
        "VALUES (?1, ?2, ?3, ?4)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, device_id) != SQLITE_OK
        || bind_text(st, 2, cmdline ? cmdline : "") != SQLITE_OK
        || bind_text(st, 3, RT_VERSION_STRING) != SQLITE_OK
        || sqlite3_bind_int(st, 4, nvrtc_version) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = store_fail(s, "begin run", e);
        goto done;
    }
    if (run_id)
        *run_id = sqlite3_last_insert_rowid(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

int store_end_run(store *s, long long run_id, rt_err *e)
{
    static const char sql[] = "UPDATE runs SET ended_at = " NOW " WHERE id = ?1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, run_id) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = store_fail(s, "end run", e);
        goto done;
    }
    if (sqlite3_changes(s->db) == 0)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: end run: no run %lld", s->path, run_id);
done:
    sqlite3_finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- kernels and binaries */

int store_put_kernel(store *s, const char *hash, const char *family, const char *params,
                     const char *source, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO kernels (hash, family, params, source) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (hash) DO NOTHING";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, family) != SQLITE_OK
        || bind_text(st, 3, params) != SQLITE_OK || bind_text(st, 4, source) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = store_fail(s, "put kernel", e);
    sqlite3_finalize(st);
    return rc;
}

/* Bind an int that uses -1 for unknown as NULL. */
static int bind_known(sqlite3_stmt *st, int i, int v)
{
    return v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int(st, i, v);
}

int store_put_binary(store *s, const char *hash, const char *arch, int nvrtc_version,
                     const store_binary *b, rt_err *e)
{
    static const char sql[] =
        "INSERT OR REPLACE INTO binaries (hash, arch, nvrtc_version, cubin, registers, "
        "smem_bytes, log) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (!b->cubin || b->size == 0)
        return rt_seterr(e, RT_EINVAL, "%s: put binary %s %s: empty cubin", s->path,
                         hash ? hash : "(null)", arch ? arch : "(null)");
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, hash) != SQLITE_OK || bind_text(st, 2, arch) != SQLITE_OK
        || sqlite3_bind_int(st, 3, nvrtc_version) != SQLITE_OK
        || sqlite3_bind_blob64(st, 4, b->cubin, b->size, SQLITE_STATIC) != SQLITE_OK
        || bind_known(st, 5, b->registers) != SQLITE_OK
        || bind_known(st, 6, b->smem_bytes) != SQLITE_OK
        || bind_text(st, 7, b->log) != SQLITE_OK) {
        rc = store_fail(s, "put binary", e);
        goto done;
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
            rc = rt_seterr(e, RT_EDB, "%s: put binary: no kernel %s (put the kernel first)",
                           s->path, hash);
        else
            rc = store_fail(s, "put binary", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

/* ---------------------------------------------------------------- measurements and best */

int store_put_measurement(store *s, const store_measurement *m, rt_err *e)
{
    /* One statement in autocommit mode: its own transaction, committed before it returns. */
    static const char sql[] =
        "INSERT OR REPLACE INTO measurements (device_id, run_id, kernel_hash, op, type, "
        "layout, n, hot, status, message, median_us, min_us, max_us, reps, gbps, frac_bw, "
        "verified, deterministic, nseg, seg_mean, seg_spread, acc, result) VALUES (?1, ?2, ?3, "
        "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
        "?22, ?23)";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || sqlite3_bind_int64(st, 1, m->device_id) != SQLITE_OK
        || (m->run_id > 0 ? sqlite3_bind_int64(st, 2, m->run_id)
                          : sqlite3_bind_null(st, 2)) != SQLITE_OK
        || bind_text(st, 3, m->kernel_hash) != SQLITE_OK
        || bind_text(st, 4, m->op) != SQLITE_OK || bind_text(st, 5, m->type) != SQLITE_OK
        || bind_text(st, 6, m->layout) != SQLITE_OK
        || sqlite3_bind_int64(st, 7, m->n) != SQLITE_OK
        || sqlite3_bind_int(st, 8, m->hot) != SQLITE_OK
        || bind_text(st, 9, m->status) != SQLITE_OK
        || bind_text(st, 10, m->message ? m->message : "") != SQLITE_OK
        || sqlite3_bind_double(st, 11, m->median_us) != SQLITE_OK
        || sqlite3_bind_double(st, 12, m->min_us) != SQLITE_OK
        || sqlite3_bind_double(st, 13, m->max_us) != SQLITE_OK
        || sqlite3_bind_int(st, 14, m->reps) != SQLITE_OK
        || sqlite3_bind_double(st, 15, m->gbps) != SQLITE_OK
        || sqlite3_bind_double(st, 16, m->frac_bw) != SQLITE_OK
        || sqlite3_bind_int(st, 17, m->verified) != SQLITE_OK
        || sqlite3_bind_int(st, 18, m->deterministic) != SQLITE_OK
        || sqlite3_bind_int64(st, 19, m->nseg) != SQLITE_OK
        || sqlite3_bind_double(st, 20, m->seg_mean) != SQLITE_OK
        || sqlite3_bind_double(st, 21, m->seg_spread) != SQLITE_OK
        || bind_text(st, 22, m->acc ? m->acc : m->type) != SQLITE_OK
        || bind_text(st, 23, m->result ? m->result : m->type) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = store_fail(s, "put measurement", e);
    sqlite3_finalize(st);
    return rc;
}

/* Bind the case (device, op, type, layout, n, hot) to ?1..?6 and (acc, result) to ?8, ?9,
 * each the type when NULL (?7 is the kernel's, where there is one). */
static int bind_case(sqlite3_stmt *st, long long device_id, const char *op, const char *type,
                     const char *acc, const char *result, const char *layout, long long n,
                     int hot)
{
    int r = sqlite3_bind_int64(st, 1, device_id);

    if (r == SQLITE_OK)
        r = bind_text(st, 8, acc ? acc : type);
    if (r == SQLITE_OK)
        r = bind_text(st, 9, result ? result : type);
    if (r == SQLITE_OK)
        r = bind_text(st, 2, op);
    if (r == SQLITE_OK)
        r = bind_text(st, 3, type);
    if (r == SQLITE_OK)
        r = bind_text(st, 4, layout);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int64(st, 5, n);
    if (r == SQLITE_OK)
        r = sqlite3_bind_int(st, 6, hot);
    return r;
}

int store_has_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *acc,
                          const char *result, const char *layout, long long n, int hot,
                          int *found, rt_err *e)
{
    static const char sql[] =
        "SELECT 1 FROM measurements WHERE device_id = ?1 AND op = ?2 AND type = ?3 "
        "AND acc = ?8 AND result = ?9 AND layout = ?4 AND n = ?5 AND hot = ?6 "
        "AND kernel_hash = ?7";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *found = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, acc, result, layout, n, hot) != SQLITE_OK
        || bind_text(st, 7, kernel_hash) != SQLITE_OK) {
        rc = store_fail(s, "has measurement", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        *found = 1;
    if (r != SQLITE_DONE) {
        *found = 0;
        rc = store_fail(s, "has measurement", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

int store_get_measurement(store *s, long long device_id, const char *kernel_hash,
                          const char *op, const char *type, const char *acc,
                          const char *result, const char *layout, long long n, int hot,
                          store_measurement *m, char status[16], int *found, rt_err *e)
{
    static const char sql[] =
        "SELECT status, median_us, min_us, max_us, reps, verified FROM measurements "
        "WHERE device_id = ?1 AND op = ?2 AND type = ?3 AND acc = ?8 AND result = ?9 "
        "AND layout = ?4 AND n = ?5 AND hot = ?6 AND kernel_hash = ?7";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *found = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, acc, result, layout, n, hot) != SQLITE_OK
        || bind_text(st, 7, kernel_hash) != SQLITE_OK) {
        rc = store_fail(s, "get measurement", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(status, 16, "%s", t ? (const char *)t : "");
        m->status = status;
        m->median_us = sqlite3_column_double(st, 1);
        m->min_us = sqlite3_column_double(st, 2);
        m->max_us = sqlite3_column_double(st, 3);
        m->reps = sqlite3_column_int(st, 4);
        m->verified = sqlite3_column_int(st, 5);
        *found = 1;
    }
    if (r != SQLITE_DONE) {
        *found = 0;
        rc = store_fail(s, "get measurement", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

int store_op_kernel_without(store *s, const char *op, const char *marker,
                            char hash[RT_HASH_HEX], int *found, rt_err *e)
{
    static const char sql[] =
        "SELECT m.kernel_hash FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash "
        "WHERE m.op = ?1 AND instr(k.source, ?2) = 0 LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK, r;

    *found = 0;
    hash[0] = '\0';
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, op) != SQLITE_OK || bind_text(st, 2, marker) != SQLITE_OK) {
        rc = store_fail(s, "operator definitions", e);
        goto done;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(hash, RT_HASH_HEX, "%s", col_text(st, 0));
        *found = 1;
    }
    if (r != SQLITE_DONE) {
        *found = 0;
        rc = store_fail(s, "operator definitions", e);
    }
done:
    sqlite3_finalize(st);
    return rc;
}

static int delete_best(store *s, long long device_id, const char *op, const char *type,
                       const char *acc, const char *result, const char *layout, long long n,
                       int hot, rt_err *e)
{
    static const char sql[] =
        "DELETE FROM best WHERE device_id = ?1 AND op = ?2 AND type = ?3 AND acc = ?8 "
        "AND result = ?9 AND layout = ?4 AND n = ?5 AND hot = ?6";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, acc, result, layout, n, hot) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE)
        rc = store_fail(s, "update best", e);
    sqlite3_finalize(st);
    return rc;
}

/* Copy the fastest verified "ok" measurement of the case into best; *found = rows copied. */
static int insert_best(store *s, long long device_id, const char *op, const char *type,
                       const char *acc, const char *result, const char *layout, long long n,
                       int hot, int *found, rt_err *e)
{
    static const char sql[] =
        "INSERT INTO best (device_id, op, type, acc, result, layout, n, hot, kernel_hash, "
        "median_us, min_us, max_us, reps, gbps, frac_bw, deterministic, nseg, seg_mean, "
        "seg_spread) "
        "SELECT device_id, op, type, acc, result, layout, n, hot, kernel_hash, median_us, "
        "min_us, max_us, reps, gbps, frac_bw, deterministic, nseg, seg_mean, seg_spread "
        "FROM measurements "
        "WHERE device_id = ?1 AND op = ?2 AND type = ?3 AND acc = ?8 AND result = ?9 "
        "AND layout = ?4 AND n = ?5 "
        "AND hot = ?6 AND status = 'ok' AND verified = 1 AND reps >= " STORE_FULL_REPS_SQL " "
        "ORDER BY median_us, min_us, kernel_hash LIMIT 1";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    *found = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_case(st, device_id, op, type, acc, result, layout, n, hot) != SQLITE_OK
        || sqlite3_step(st) != SQLITE_DONE) {
        rc = store_fail(s, "update best", e);
        goto done;
    }
    *found = sqlite3_changes(s->db);
done:
    sqlite3_finalize(st);
    return rc;
}

/*
 * The old winner is deleted and the new one copied in one transaction, so a case whose
 * measurements no longer hold a verified "ok" row loses its stale entry (and RT_ENOTFOUND
 * is returned) rather than keeping a winner that was measured wrong since.
 */
int store_update_best_spec(store *s, long long device_id, const char *op, const char *type,
                           const char *acc, const char *result, const char *layout,
                           long long n, int hot, rt_err *e)
{
    int found = 0, rc;
    char tt[64];

    if ((rc = tx_begin(s, e)) != RT_OK)
        return rc;
    if ((rc = delete_best(s, device_id, op, type, acc, result, layout, n, hot, e)) != RT_OK
        || (rc = insert_best(s, device_id, op, type, acc, result, layout, n, hot, &found,
                             e)) != RT_OK
        || (rc = tx_commit(s, e)) != RT_OK)
        goto done;
    if (!found)
        rc = rt_seterr(e, RT_ENOTFOUND, "%s: no verified ok measurement of %s %s %s n=%lld "
                       "%s on device %lld", s->path, op,
                       store_type_text(type, acc, result, tt, sizeof tt), layout, n,
                       hot ? "hot" : "cold", device_id);
done:
    if (rc != RT_OK)
        store_tx_rollback(s->db);
    return rc;
}

int store_update_best(store *s, long long device_id, const char *op, const char *type,
                      const char *layout, long long n, int hot, rt_err *e)
{
    return store_update_best_spec(s, device_id, op, type, NULL, NULL, layout, n, hot, e);
}

int store_list_best(store *s, const char *device_match, const char *op, const char *type,
                    long long n, int (*cb)(const store_best_row *row, void *arg), void *arg,
                    rt_err *e)
{
    /* The device match is a substring, ignoring ASCII case ("h100" finds "NVIDIA H100"). */
    static const char sql[] =
        "SELECT d.name, 'sm_' || d.cc_major || d.cc_minor, b.op, b.type, b.layout, b.n, "
        "b.hot, b.kernel_hash, k.family, k.params, b.median_us, b.min_us, b.max_us, b.gbps, "
        "b.frac_bw, b.deterministic, b.nseg, b.seg_mean, b.acc, b.result, b.device_id "
        "FROM best b JOIN kernels k ON k.hash = b.kernel_hash "
        "JOIN devices d ON d.id = b.device_id "
        "WHERE (?1 IS NULL OR instr(lower(d.name), lower(?1)) > 0) "
        "AND (?2 IS NULL OR b.op = ?2) AND (?3 IS NULL OR b.type = ?3) "
        "AND (?4 <= 0 OR b.n = ?4) "
        "ORDER BY d.name, d.ordinal, d.id, b.op, b.type, b.acc, b.result, b.layout, b.hot, "
        "b.n";
    sqlite3_stmt *st = NULL;
    int rc = RT_OK;

    if (!cb)
        return rt_seterr(e, RT_EINVAL, "%s: list best: no callback", s->path);
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK
        || bind_text(st, 1, device_match) != SQLITE_OK || bind_text(st, 2, op) != SQLITE_OK
        || bind_text(st, 3, type) != SQLITE_OK || sqlite3_bind_int64(st, 4, n) != SQLITE_OK) {
        rc = store_fail(s, "list best", e);
        goto done;
    }
    rc = store_walk_best_rows(s, st, "list best", cb, arg, e);
done:
    sqlite3_finalize(st);
    return rc;
}
