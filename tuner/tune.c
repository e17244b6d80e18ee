/*
 * tune.c - `redtune --op OP`: the tuning run.
 *
 * The tuner never initialises CUDA itself: the GPU work is done by a worker process (a fresh
 * exec of this program as `redtune worker`) that the tuner restarts when a candidate faults
 * or hangs. Order matters for "loses nothing": the space is expanded (and so checked) before
 * the database is opened, and each measurement is committed as it is made, so a rerun skips
 * what is already there.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../runtime/codegen.h"
#include "../runtime/nvrtc.h"
#include "../runtime/optype.h"
#include "measure.h"
#include "proto.h"
#include "segdata.h"
#include "space.h"
#include "tuner.h"

/* ---- the worker process ---- */

typedef struct wproc {
    pid_t pid;
    int to, from;      /* pipe ends: requests, responses */
    int device;
    const char *exe;
    rt_device dev;
    prepare_req prepared;
    int has_prepared;
    void *operator_msg;   /* MSG_OPERATOR's payload for a user operator, or NULL */
    size_t operator_len;
} wproc;

static void worker_kill(wproc *w)
{
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
    }
    if (w->to >= 0)
        close(w->to);
    if (w->from >= 0)
        close(w->from);
    w->pid = -1;
    w->to = w->from = -1;
}

static int worker_spawn(wproc *w, rt_err *e)
{
    int req[2], resp[2];
    if (pipe(req) || pipe(resp))
        return rt_seterr(e, RT_EIO, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return rt_seterr(e, RT_EIO, "fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(req[0], 0);
        dup2(resp[1], 1);
        close(req[0]); close(req[1]); close(resp[0]); close(resp[1]);
        execl(w->exe, w->exe, "worker", (char *)NULL);
        fprintf(stderr, "redtune: cannot start the worker %s: %s\n", w->exe, strerror(errno));
        _exit(127);
    }
    close(req[0]);
    close(resp[1]);
    w->pid = pid;
    w->to = req[1];
    w->from = resp[0];
    return RT_OK;
}

/* Send a request and wait for its response. -1: the worker died; -2: it timed out (and was
 * killed); 0: *resp holds the malloc'd response. */
static int worker_call(wproc *w, uint32_t kind, const void *a, size_t alen, const void *b,
                       size_t blen, void **resp, size_t *rlen, int timeout_ms)
{
    *resp = NULL;
    if (w->pid <= 0 || proto_send(w->to, kind, a, alen, b, blen)) {
        worker_kill(w);
        return -1;
    }
    uint32_t k;
    int r = proto_recv(w->from, &k, resp, rlen, timeout_ms);
    if (r == 0 && k == kind)
        return 0;
    free(*resp);
    *resp = NULL;
    worker_kill(w);
    return r == -2 ? -2 : -1;
}

/* Send the user operator (w->operator_msg) to the worker. */
static int send_operator(wproc *w, rt_err *e)
{
    resp_head *oh;
    size_t len;
    int r = worker_call(w, MSG_OPERATOR, w->operator_msg, w->operator_len, NULL, 0,
                        (void **)&oh, &len, 120000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s taking the operator",
                         r == -2 ? "timed out" : "died");
    int rc = oh->code ? rt_seterr(e, oh->code, "%s", oh->msg) : RT_OK;
    free(oh);
    return rc;
}

/* Prepare the data of one size in the worker; 'what' names it in messages. */
/* Send the case to the worker; *out (when not NULL) receives its answer: the segmentation
 * and the bytes the reduction must move. */
static int prepare(wproc *w, const prepare_req *q, const char *what, prepare_resp *out,
                   rt_err *e)
{
    prepare_resp *ph;
    size_t len;
    int r = worker_call(w, MSG_PREPARE, q, sizeof *q, NULL, 0, (void **)&ph, &len, 600000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s preparing %s",
                         r == -2 ? "timed out" : "died", what);
    int rc = len != sizeof *ph ? rt_seterr(e, RT_ECUDA, "the GPU worker sent a malformed answer")
           : ph->h.code ? rt_seterr(e, ph->h.code, "preparing %s: %s", what, ph->h.msg) : RT_OK;
    if (rc == RT_OK && out)
        *out = *ph;
    free(ph);
    return rc;
}

/* Start (or restart) the worker and bring it back to the prepared case. */
static int worker_start(wproc *w, rt_err *e)
{
    worker_kill(w);
    int rc = worker_spawn(w, e);
    if (rc)
        return rc;
    hello_req q = {w->device};
    void *buf;
    size_t len;
    int r = worker_call(w, MSG_HELLO, &q, sizeof q, NULL, 0, &buf, &len, 120000);
    if (r)
        return rt_seterr(e, RT_ECUDA, "the GPU worker %s while starting",
                         r == -2 ? "timed out" : "died");
    hello_resp *h = buf;
    if (len != sizeof *h) {
        free(buf);
        return rt_seterr(e, RT_ECUDA, "the GPU worker sent a malformed answer");
    }
    if (h->h.code) {
        rc = rt_seterr(e, h->h.code, "%s", h->h.msg);
        free(buf);
        worker_kill(w);
        return rc;
    }
    w->dev = h->dev;
    free(buf);
    if (w->operator_msg && (rc = send_operator(w, e)))
        return rc;
    if (w->has_prepared)
        rc = prepare(w, &w->prepared, "the data again", NULL, e);
    return rc;
}

/* ---- progress and helpers ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fmt_duration(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s))
        snprintf(buf, len, "?");
    else if (s < 60)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
    else
        snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s / 60 % 60);
}

typedef struct progress {
    double t0, last;
    int tty;
    long done, total, measured;
} progress;

static void progress_show(progress *p, const char *what, int force)
{
    double t = now_s();
    if (!force && t - p->last < (p->tty ? 0.2 : 10.0))
        return;
    p->last = t;
    char el[32], left[32];
    double elapsed = t - p->t0;
    fmt_duration(elapsed, el, sizeof el);
    /* Estimate from the measured candidates only: skipped ones cost nothing. */
    double rate = p->measured > 0 ? elapsed / p->measured : -1;
    fmt_duration(rate * (p->total - p->done), left, sizeof left);
    fprintf(stderr, "%s%s  %ld/%ld  elapsed %s  left ~%s%s", p->tty ? "\r\033[K" : "", what,
            p->done, p->total, el, rate < 0 ? "?" : left, p->tty ? "" : "\n");
    fflush(stderr);
}

static void progress_clear(progress *p)
{
    if (p->tty)
        fprintf(stderr, "\r\033[K");
}

static void fmt_n(long long n, char *buf, size_t len)
{
    if (n > 0 && (n & (n - 1)) == 0)
        snprintf(buf, len, "2^%d", __builtin_ctzll((unsigned long long)n));
    else
        snprintf(buf, len, "%lld", n);
}

/* ---- the bandwidth yardstick ---- */

static int measure_bandwidth(wproc *w, const char *arch, double *gbps, rt_err *e)
{
    /* The shapes of measure.c, compiled here and timed by the worker; the best is the
     * yardstick. The first stays loaded in the worker to flush the L2. */
    *gbps = 0;
    uint64_t bytes = measure_bw_bytes(&w->dev);
    for (int i = 0; i < MEASURE_BW_SHAPES; i++) {
        nvrtc_output o;
        int rc = measure_bw_compile(i, arch, &o, e);
        if (rc)
            return rc;
        bw_req q = {bytes, 0, MEASURE_BW_REPS};
        bw_resp *r;
        size_t len;
        int call = worker_call(w, MSG_BANDWIDTH, &q, sizeof q, o.cubin, o.size, (void **)&r, &len, 120000);
        nvrtc_output_free(&o);
        if (call) {
            rt_err tmp;
            worker_start(w, &tmp);
            return rt_seterr(e, RT_ECUDA, "the bandwidth kernel %s", call == -2 ? "timed out" : "crashed the worker");
        }
        if (r->h.code) {
            rc = rt_seterr(e, r->h.code, "bandwidth kernel: %s", r->h.msg);
            free(r);
            return rc;
        }
        if (r->gbps > *gbps)
            *gbps = r->gbps;
        free(r);
    }
    return RT_OK;
}

/* ---- the table ---- */

typedef struct table_arg {
    const char *layout;
    const char *device;
    int hot;
    int rows;
} table_arg;

static int print_row(const store_best_row *r, void *arg)
{
    table_arg *t = arg;
    if (strcmp(r->device_name, t->device) != 0 || r->hot != t->hot || strcmp(r->layout, t->layout))
        return 0;
    char n[32];
    fmt_n(r->n, n, sizeof n);
    printf("%12lld %6s  %-18s %-30s %10.2f %9.1f %7.1f%%", r->n, n, r->family, r->params,
           r->median_us, r->gbps, 100.0 * r->frac_bw);
    if (r->nseg)
        printf("  %lld segments, mean %.1f", r->nseg, r->seg_mean);
    printf("\n");
    t->rows++;
    return 0;
}

/* "flat", or "keys:PROFILE" / "offsets:PROFILE" for the pi-th profile: the layout column. */
static void layout_string(const tune_opts *o, int pi, char *buf, size_t len)
{
    if (o->layout == SEG_LAYOUT_FLAT)
        snprintf(buf, len, "flat");
    else
        snprintf(buf, len, "%s:%s", segdata_layout_name(o->layout),
                 segdata_profile_name(o->profiles[pi]));
}

/* ---- the run ---- */

/* The name, type and commutativity of the case of 'o'. */
void tune_case(const tune_opts *o, const char **op, rt_type *type, int *commutes)
{
    *op = o->user ? o->user->op.name : rt_op_name(o->op);
    *type = o->user ? o->user->op.type : o->type;
    *commutes = o->user ? o->user->op.commutative : optype_commutes(o->op);
}


/* A user operator into the worker: its reference kernels compiled for 'arch' and its file,
 * then a trial on a few thousand elements that runs the sample function and checks the
 * identity. All before the database is opened: a bad operator leaves it untouched. */
static int start_operator(wproc *w, const opfile *u, const char *arch, uint64_t seed, rt_err *e)
{
    nvrtc_output ref;
    int rc = cands_compile_reference(u, arch, &ref, e);
    if (rc)
        return rc;
    operator_req q;
    memset(&q, 0, sizeof q);
    q.type = u->op.type;
    q.has_sample = u->has_sample;
    q.tolerance = u->tolerance;
    snprintf(q.name, sizeof q.name, "%s", u->op.name);
    snprintf(q.file, sizeof q.file, "%s", u->op.file);
    q.cubin_size = ref.size;
    q.text_len = u->len;
    w->operator_len = sizeof q + ref.size + u->len;
    if (!(w->operator_msg = malloc(w->operator_len))) {
        nvrtc_output_free(&ref);
        return rt_seterr(e, RT_ENOMEM, "out of memory for the operator");
    }
    memcpy(w->operator_msg, &q, sizeof q);
    memcpy((char *)w->operator_msg + sizeof q, ref.cubin, ref.size);
    memcpy((char *)w->operator_msg + sizeof q + ref.size, u->text, u->len);
    nvrtc_output_free(&ref);
    if ((rc = send_operator(w, e)))
        return rc;
    prepare_req trial = {u->op.type, OP_USER, 4099, seed};
    return prepare(w, &trial, "the operator's trial on 4099 elements", NULL, e);
}

/* The database must not hold measurements of another operator of the same name: best is
 * chosen per operator name, and two definitions would compete in it. */
static int check_definition(store *s, const opfile *u, rt_err *e)
{
    char id[RT_USER_OP_ID], marker[128], hash[RT_HASH_HEX];
    codegen_user_op_id(&u->op, id);
    snprintf(marker, sizeof marker, "/* redtune: user operator %s, definition %s */",
             u->op.name, id);
    int found, rc = store_op_kernel_without(s, u->op.name, marker, hash, &found, e);
    if (rc == RT_OK && found)
        rc = rt_seterr(e, RT_EINVAL, "%s: %s holds measurements of another operator named '%s' "
                       "(kernel %.16s has another identity, combine or commutativity); rename "
                       "the operator, or tune into another database", u->op.file, store_path(s),
                       u->op.name, hash);
    return rc;
}

int tune_run(const tune_opts *o, rt_err *e)
{
    int rc = RT_OK;
    const char *space_name;
    space_for_layout(o->layout, &space_name);
    if (o->space_path)
        space_name = o->space_path;
    rt_config *cfgs = NULL;
    int ncfg = 0;
    cand *c = NULL;
    store *s = NULL;
    wproc w = {.pid = -1, .to = -1, .from = -1, .device = o->device, .exe = o->self_exe};
    long long run_id = 0, device_id = 0;
    const char *op;
    rt_type t;
    int commutes;
    char skipped[1024] = "";
    tune_case(o, &op, &t, &commutes);
    const char *type = rt_type_name(t);

    signal(SIGPIPE, SIG_IGN);
    if ((rc = worker_start(&w, e)))
        goto done;
    char arch[16];
    device_arch(&w.dev, arch);
    if ((rc = cands_expand(o->space_path, o->families, o->deterministic, &w.dev, op, t,
                           commutes, o->layout, o->off64, &cfgs, &ncfg, skipped, sizeof skipped,
                           e)) ||
        (rc = nvrtc_load(e)))
        goto done;
    if (o->user && (rc = start_operator(&w, o->user, arch, o->seed, e)))
        goto done;
    if ((rc = store_open(o->db_path, STORE_WRITE, &s, e)))
        goto done;
    if (o->user && (rc = check_definition(s, o->user, e)))
        goto done;
    printf("redtune: %s (%s, %d SMs, %.0f MiB L2), driver %d, NVRTC %d\n", w.dev.name, arch,
           w.dev.sm_count, w.dev.l2_bytes / 1048576.0, w.dev.driver_version, nvrtc_version());

    /* Compile ahead of the GPU work, reusing stored CUBINs. */
    double t0 = now_s();
    if ((rc = o->user ? cands_make_user(cfgs, ncfg, &o->user->op, &c, e)
                      : cands_make(cfgs, ncfg, o->op, t, &c, e)))
        goto done;
    int compiled, failed;
    if ((rc = cands_compile(c, ncfg, arch, o->jobs, s, &compiled, &failed, e)))
        goto done;
    printf("redtune: %d configs from %s: compiled %d, reused %d from the database, %d failed "
           "(%.1f s, %d threads)\n", ncfg, space_name, compiled, ncfg - compiled - failed, failed,
           now_s() - t0, o->jobs);
    if (skipped[0])
        printf("redtune: left out, since '%s' does not commute: %s\n", op, skipped);
    for (int i = 0; i < ncfg; i++)
        if (c[i].rc)
            fprintf(stderr, "redtune: %s %s does not compile:\n%s\n", c[i].cfg.family->name,
                    c[i].params, c[i].err ? c[i].err : "(no message)");

    double read_gbps;
    if ((rc = measure_bandwidth(&w, arch, &read_gbps, e)))
        goto done;
    printf("redtune: measured read bandwidth %.1f GB/s (%.0f%% of the %.0f GB/s the memory "
           "clock and bus allow)\n", read_gbps, 100 * read_gbps / device_peak_gbps(&w.dev),
           device_peak_gbps(&w.dev));
    if ((rc = store_put_device(s, &w.dev, read_gbps, &device_id, e)) ||
        (rc = store_begin_run(s, device_id, o->cmdline, nvrtc_version(), &run_id, e)))
        goto done;

    int nprof = o->layout == SEG_LAYOUT_FLAT ? 1 : o->nprofiles;
    progress pg = {now_s(), 0, isatty(2), 0, (long)nprof * o->nsizes * ncfg, 0};
    size_t esize = optype_size(t);
    size_t acc_size = o->user ? esize : optype_acc_size(o->op, t);
    /* Bytes per element that must fit on the GPU: the input, the keys or offsets, outputs. */
    double per_elem = esize + (o->layout == SEG_LAYOUT_FLAT ? 0 : 4 + (double)acc_size);
    for (int pi = 0; pi < nprof; pi++) {
        char layout[64];
        layout_string(o, pi, layout, sizeof layout);
        for (int si = 0; si < o->nsizes; si++) {
            long long n = o->sizes[si];
            char nbuf[32], what[160];
            fmt_n(n, nbuf, sizeof nbuf);
            if ((double)n * per_elem > 0.45 * (double)w.dev.total_mem) {
                fprintf(stderr, "redtune: skipping n = %s: %.1f GiB of input does not fit beside "
                        "the buffers on this GPU\n", nbuf, n * (double)esize / (1 << 30));
                pg.done += ncfg;
                continue;
            }
            int prepared = 0;
            prepare_resp seg = {0};
            for (int i = 0; i < ncfg; i++, pg.done++) {
                snprintf(what, sizeof what, "[%s %s %s] n=%s %s", op, type, layout, nbuf,
                         c[i].cfg.family->name);
                progress_show(&pg, what, 0);
                if (c[i].rc)
                    continue;
                int found = 0;
                if ((rc = store_has_measurement(s, device_id, c[i].hash, op, type, layout, n, o->hot,
                                                &found, e)))
                    goto done;
                if (found)
                    continue;
                if (!prepared) {
                    w.prepared = (prepare_req){t, o->user ? OP_USER : (int)o->op, (uint64_t)n,
                                               o->seed ^ (uint64_t)n * 0x9e3779b97f4a7c15ULL,
                                               o->layout, o->nprofiles ? o->profiles[pi] : 0,
                                               o->off64};
                    w.has_prepared = 1;
                    char size[96];
                    snprintf(size, sizeof size, "n = %s (%s)", nbuf, layout);
                    if ((rc = prepare(&w, &w.prepared, size, &seg, e)))
                        goto done;
                    prepared = 1;
                }
                measure_req q = {c[i].cfg.family->plan, o->hot, 10, 200, 0.25,
                                 o->seed ^ (uint64_t)(i + 1) * 0xd1b54a32d192ed03ULL ^ (uint64_t)n};
                measure_resp *mr = NULL;
                size_t len;
                /* Generous: verification of fresh inputs, 200 repetitions, and the flushes. */
                int timeout_ms = 60000 + (int)(n * per_elem / 1000000);
                int r = worker_call(&w, MSG_MEASURE, &q, sizeof q, c[i].cubin, c[i].cubin_size,
                                    (void **)&mr, &len, timeout_ms);
                store_measurement m = {device_id, run_id, c[i].hash, op, type, layout, n, o->hot,
                                       "ok", "", 0, 0, 0, 0, 0, 0, 0, -1, (long long)seg.nseg,
                                       seg.mean, seg.spread};
                if (r == 0) {
                    m.status = mr->status;
                    m.message = mr->h.msg;
                    if (!strcmp(mr->status, "ok")) {
                        m.median_us = mr->median_us;
                        m.min_us = mr->min_us;
                        m.max_us = mr->max_us;
                        m.reps = mr->reps;
                        m.gbps = seg.bytes / (mr->median_us * 1e-6) / 1e9;
                        m.frac_bw = m.gbps / read_gbps;
                        m.verified = 1;
                        m.deterministic = mr->deterministic;
                    }
                } else {
                    m.status = r == -2 ? "timeout" : "fault";
                    m.message = r == -2 ? "the launch did not finish within the time limit; the worker was killed"
                                        : "the worker died while running this kernel";
                }
                if (strcmp(m.status, "ok") || o->verbose) {
                    progress_clear(&pg);
                    if (strcmp(m.status, "ok"))
                        fprintf(stderr, "redtune: n=%s %s %s: %s: %s\n", nbuf, c[i].cfg.family->name,
                                c[i].params, m.status, m.message);
                    else
                        fprintf(stderr, "redtune: n=%s %-18s %-30s %10.2f us %8.1f GB/s %5.1f%%\n",
                                nbuf, c[i].cfg.family->name, c[i].params, m.median_us, m.gbps,
                                100 * m.frac_bw);
                }
                rc = store_put_measurement(s, &m, e);
                free(mr);
                if (rc)
                    goto done;
                pg.measured++;
                if (w.pid <= 0 && (rc = worker_start(&w, e)))
                    goto done;
            }
            rc = store_update_best(s, device_id, op, type, layout, n, o->hot, e);
            if (rc == RT_ENOTFOUND) {
                fprintf(stderr, "redtune: %s n=%s: no config passed verification\n", layout, nbuf);
                rc = RT_OK;
            } else if (rc) {
                goto done;
            }
        }
    }
    progress_show(&pg, "done", 1);
    progress_clear(&pg);
    if (!pg.tty)
        fprintf(stderr, "\n");
    if ((rc = store_end_run(s, run_id, e)))
        goto done;

    for (int pi = 0; pi < nprof && rc == RT_OK; pi++) {
        char layout[64];
        layout_string(o, pi, layout, sizeof layout);
        printf("\nbest for %s %s %s on %s (%s, L2 %s), read bandwidth %.1f GB/s:\n", op, type,
               layout, w.dev.name, arch, o->hot ? "hot" : "flushed", read_gbps);
        printf("%12s %6s  %-18s %-30s %10s %9s %8s\n", "n", "", "family", "params", "time(us)",
               "GB/s", "%read");
        table_arg ta = {layout, w.dev.name, o->hot, 0};
        for (int si = 0; si < o->nsizes && rc == RT_OK; si++)
            rc = store_list_best(s, NULL, op, type, o->sizes[si], print_row, &ta, e);
    }
    printf("%d configs measured in this run, %.0f s; database %s\n", (int)pg.measured,
           now_s() - pg.t0, o->db_path);
done:
    if (w.pid > 0) {
        proto_send(w.to, MSG_QUIT, NULL, 0, NULL, 0);
        close(w.to);
        w.to = -1;
        waitpid(w.pid, NULL, 0);
        w.pid = -1;
        close(w.from);
    }
    cands_free(c, ncfg);
    free(cfgs);
    free(w.operator_msg);
    store_close(s);
    return rc;
}
