/*
 * proto.h - the pipe protocol between the tuner (which never touches CUDA) and its worker
 * process (`redtune worker`, a fresh exec, so no CUDA context crosses a fork). Messages are a
 * header and a payload of plain structs: both ends are the same binary.
 */
#ifndef RT_PROTO_H
#define RT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include "../runtime/device.h"

enum {
    MSG_HELLO = 1,     /* hello_req -> hello_resp */
    MSG_BANDWIDTH,     /* bw_req + cubin -> bw_resp */
    MSG_PREPARE,       /* prepare_req -> prepare_resp */
    MSG_MEASURE,       /* measure_req + cubin -> measure_resp */
    MSG_QUIT,
    MSG_OPERATOR,      /* operator_req + reference CUBIN + operator file text -> resp_head */
    MSG_DEVICES,       /* nothing -> devices_resp: every GPU, queried without a context */
};

/* prepare_req.op of a user-defined operator: the one MSG_OPERATOR set up. */
#define OP_USER (-1)

typedef struct resp_head {
    int code;               /* RT_OK or RT_E* */
    char msg[4096];
} resp_head;

typedef struct hello_req { int device; } hello_req;
typedef struct hello_resp { resp_head h; rt_device dev; } hello_resp;

/* The GPUs of the machine (`redtune --device all | LIST`): count of them, dev[0..count). */
#define PROTO_MAX_DEVICES 64
typedef struct devices_resp {
    resp_head h;
    int count;
    rt_device dev[PROTO_MAX_DEVICES];
} devices_resp;

typedef struct bw_req { uint64_t bytes; int hot; int reps; } bw_req;
typedef struct bw_resp { resp_head h; double median_us; double gbps; uint64_t bytes; } bw_resp;

typedef struct prepare_req {
    int type, op;
    uint64_t n;
    uint64_t seed;
    int layout;             /* SEG_LAYOUT_*: flat, keys, offsets */
    int profile;            /* segment profile (segdata.h) when segmented */
    int off64;              /* offsets are 64-bit */
    uint64_t outer, len, inner;   /* SEG_LAYOUT_AXIS: the shape (n = outer * len * inner) */
} prepare_req;

/* The answer to MSG_PREPARE: for segmented layouts, the segmentation made; for the axis
 * layout nseg = outer * inner (the outputs), mean = len, spread = 0. */
typedef struct prepare_resp {
    resp_head h;
    uint64_t nseg;
    double mean, spread;    /* segment length */
    double bytes;           /* bytes the reduction must move (segdata_bytes) */
} prepare_resp;
/* A user-defined operator (tuner/opfile.h). The payload goes on with cubin_size bytes of the
 * reference unit's CUBIN (codegen_emit_user_check), then text_len bytes of the operator file,
 * whose sample function, when it has one, makes the test data; without one the data are those
 * of sum over the type (data.h). */
typedef struct operator_req {
    int type;               /* rt_type */
    int has_sample;
    double tolerance;       /* f32/f64: relative error allowed against the reference */
    char name[48];
    char file[256];         /* the operator file's name, for messages */
    uint64_t cubin_size;
    uint64_t text_len;
} operator_req;

typedef struct measure_req {
    int plan;               /* rt_plan_kind */
    int hot;
    int min_reps, max_reps;
    double budget_s;        /* stop repeating after this much timed GPU time */
    uint64_t seed;          /* for the fresh verification inputs */
} measure_req;

typedef struct measure_resp {
    resp_head h;            /* code RT_OK when the run went through (status says how) */
    char status[16];        /* ok, wrong, fault, error */
    double median_us, min_us, max_us;
    int reps;
    int deterministic;
    int registers;
    int launches;
    double check_s;         /* the worker's seconds: loading and verifying the candidate */
    double time_s;          /* and timing it (the repetitions, flushes included) */
} measure_resp;

/* Send a message: header, then payload a, then payload b (either may be empty).
 * 0 on success, -1 when the pipe is broken. */
int proto_send(int fd, uint32_t kind, const void *a, size_t alen, const void *b, size_t blen);

/* Receive a message within timeout_ms (-1: wait forever). *data is malloc'd (caller frees).
 * 0 on success, -1 on end of file or a broken message, -2 on timeout. */
int proto_recv(int fd, uint32_t *kind, void **data, size_t *len, int timeout_ms);

/* The worker's main loop on fds 0 (requests) and 1 (responses); returns the exit status. */
int worker_main(void);

#endif
