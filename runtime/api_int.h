/*
 * api_int.h - what the files of libredtune's API (api.c, api_choose.c, api_kernel.c,
 * api_reduce.c, api_explain.c, api_temp.c, api_ops.c, api_seg.c, api_axis.c) share: the
 * context and what it caches, and the helpers each of them calls. Private to runtime/api*.c;
 * tests and bench/ include api.h.
 */
#ifndef RT_API_INT_H
#define RT_API_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "api.h"
#include "capture.h"
#include "codegen.h"
#include "driver.h"
#include "family.h"
#include "hash.h"
#include "optype.h"
#include "plan.h"
#include "store.h"
#include "../include/redtune.h"

#define LAYOUT "flat"
#define HOT 0
#define NBUCKETS 128             /* size slots of n >= 1: api_size_slot */
#define COUNTER_BYTES 256        /* the one-launch counter, at the start of temp storage */
#define TEMP_ALIGN 256           /* of caller-supplied temp storage */
#define TEMP_GRAIN (64u << 10)   /* context temp blocks are multiples of this */
#define NSLOTS 64                /* streams with a context temp block before recycling */
#define NOPS (RT_OP_COUNT + RT_USER_OPS_MAX)   /* built-in operators, then user ones */

#define LEVEL_BUILTIN 4          /* after STORE_MATCH_EXACT, _CC, _MAJOR */

/* Layouts of ctx->choices: flat, keys, offsets, then the two kinds of axis rows (inner == 1:
 * rows of a matrix; inner > 1: columns and the middle axis of 3-D tensors). */
#define API_AXIS_ROWS 3
#define API_AXIS_COLS 4
#define NLAYOUTS 5

/* A context's temporary block per stream starts with BLOCK_PAD zero bytes before 'temp', so
 * that the block's zero head, the pad and the one-launch counter, is plan.c's counter area
 * (PLAN_AXIS_COUNTER_AREA, 16 KiB) for split axis launches: the axis counters end where the
 * one-launch counter ends, and every plan's partials start at temp + COUNTER_BYTES
 * (api_axis.c). The allocation is temp - BLOCK_PAD. */
#define BLOCK_PAD (PLAN_AXIS_COUNTER_AREA - COUNTER_BYTES)

/* A loaded kernel, shared by every decision that chose it; keyed by its source hash. */
typedef struct kernel {
    struct kernel *next;
    char hash[RT_HASH_HEX];
    char family[RT_NAME_MAX];
    char params[256];
    int builtin;           /* the built-in default, generated here */
    int from_db;           /* 1: the CUBIN came from the database; 0: NVRTC compiled it here */
    int stored_src;          /* compiled from the source stored in the database */
    int nvrtc_version;     /* of the NVRTC that made the CUBIN */
    plan p;
} kernel;

/* One winner of the chosen device row. */
typedef struct best_entry {
    long long n;
    char hash[RT_HASH_HEX];
    char family[RT_NAME_MAX];
    char params[256];
    double median_us;
    double seg_mean;       /* segmented: the mean segment length it was tuned at */
    unsigned long long axis[3];   /* axis: the tuned shape (outer, len, inner) of its layout */
    long long device_id;   /* its device row: the choice's, or an identical GPU's (--split) */
} best_entry;

/* The database's answer for one (op, type): a device row and its winners, or none. */
typedef struct choice {
    int resolved;
    int level;             /* STORE_MATCH_* or LEVEL_BUILTIN */
    store_device_match dev;
    best_entry *rows;      /* ordered by n */
    int nrows, cap;
    int oom;               /* a row could not be kept */
    int foreign;           /* user operator: winners of another definition, left out */
    int has_kin;           /* the rows are a sibling operator's (optype_siblings): the
                              operator has none of its own for this GPU or a similar one */
    rt_op kin;             /* that sibling */
    int has_tkin;          /* the rows are the operator's of a type of the same width
                              (optype_type_kin): none of its own type, nor a sibling's */
    rt_type tkin;          /* that type */
    char kin_name[48];     /* has_kin: "max"; has_tkin: "min f64" (api_kin_name) */
    char kin_desc[96];     /* the same with what it is (api_kin_desc) */
    char kin_own[16];      /* has_tkin: the type asked for ("i64") */
    int from_pair;         /* RT_RESULT_INDEX: the rows are the {value, index} result's */
    int by_mean;           /* api_get_choice_mean's: the row with a winner near a mean length */
} choice;

/* The winners for segmented lengths that the chosen row's winners are all far from
 * (api_get_choice_mean), by (layout, op, spec slot, mean bucket). */
typedef struct mean_choice {
    struct mean_choice *next;
    int layout;
    rt_op op;
    int slot, mb;
    choice c;
} mean_choice;

/* What runs for one (op, type, bucket). Immutable once published. */
typedef struct decision {
    struct decision *next;
    kernel *k;
    int level;
    const choice *c;
    const best_entry *row; /* NULL for the built-in default */
    const best_entry *passed;   /* the winner whose kernel could not be made here, which the
                                 * built-in default replaces (api_builtin_instead); else NULL */
    char *why;             /* then NVRTC's reason in one line (api_nvrtc_line); owned */
} decision;

/* The decisions of one operator: by type spec slot (optype_resolve's ts.slot) and bucket. */
typedef struct decision_row {
    _Atomic(decision *) d[OPTYPE_SLOTS][NBUCKETS];
} decision_row;

/* What runs for one segmented case: layout, offset width, whether the pointers allow vector
 * loads, op, type, size bucket and mean-length bucket. Kept in a list under ctx->lock. */
typedef struct seg_decision {
    struct seg_decision *next;
    int layout, off64, aligned, skewed, uniform;
    rt_op op;
    rt_type type;            /* the canonical spec (ts.canon) */
    unsigned nb;
    int mb;
    kernel *k;
    int level;
    const best_entry *row;   /* NULL for the built-in default */
    const char *c_name;      /* the device row's name */
    int respecialized;       /* the stored config with OFF64 or V changed, compiled here */
    const choice *c;         /* the winners it was picked from (capture.c's exact check) */
    const best_entry *passed;   /* as decision's: the winner the built-in default replaces */
    char *why;               /* and why (owned) */
} seg_decision;

/* What runs for one axis case: op, canonical type spec and the shape's class, the log2
 * buckets of outer, len and inner (0 for 0, else floor(log2 x) + 1). Published at the head of
 * ctx->axis_decisions (insert only, under ctx->lock), so a call finds its decision with no
 * lock. */
typedef struct axis_decision {
    struct axis_decision *next;
    rt_op op;
    rt_type type;            /* the canonical spec (ts.canon) */
    int bo, bl, bi;
    kernel *k;
    int level;
    const best_entry *row;   /* NULL for the built-in default */
    const choice *c;
    const best_entry *passed;   /* as decision's: the winner the built-in default replaces */
    char *why;               /* and why (owned) */
} axis_decision;

/* Temporary storage of one stream. 'key' identifies the stream (its driver id); 'used' and
 * 'key' are read without the lock to find the slot, and checked again under it. */
typedef struct slot {
    pthread_mutex_t lock;  /* held while the block is grown and the launches are enqueued */
    atomic_int used;
    atomic_ullong key;
    atomic_uintptr_t handle; /* the stream handle of the last call outside a capture: how a
                              * capturing stream finds its block (cuStreamGetId is refused
                              * while a stream captures) */
    CUdeviceptr temp;
    size_t bytes;
    int captured;          /* a CUDA graph captured a launch on 'temp': never freed before
                              rt_close (growing or recycling moves it to ctx->kept) */
} slot;

/* A block that captured graphs may still use, kept until rt_close. */
typedef struct kept_block {
    struct kept_block *next;
    CUdeviceptr temp;
} kept_block;

/* A user-defined operator registered on the context (rt_register_op). */
typedef struct user_op {
    rt_user_op op;
    char id[RT_USER_OP_ID];          /* its definition fingerprint */
    unsigned char identity[CODEGEN_STRUCT_MAX];   /* rt_final(rt_identity()), evaluated on
                                                     the GPU: the n == 0 result */
    int identity_known;              /* 0 when NVRTC was missing at registration */
    size_t acc_size, res_size;       /* its accumulator's and result's bytes (the layouts) */
} user_op;

struct rt_ctx {
    store *db;
    const char *db_how;             /* how rt_open found the database (api_find_db) */
    rt_device dev;
    char arch[16];
    CUdevice cudev;
    CUcontext cuctx;
    int retained;                   /* the primary context is retained */
    int locks;                      /* the mutexes are initialised */
    pthread_mutex_t lock;           /* choices, decisions, kernels, the store, compiles */
    pthread_mutex_t slot_lock;      /* claiming and recycling slots */
    /* By operator row, allocated at the row's first decision (a full table of specs by
     * size slots for every operator would be ~940 KB a context): lock-free lookups once set. */
    _Atomic(decision_row *) cache[NOPS];
    choice *choices[NLAYOUTS][NOPS]; /* by layout (flat, keys, offsets, axis rows, axis
                                     * columns: API_AXIS_*), then OPTYPE_SLOTS
                                     * choices by ts.slot; allocated under 'lock' at first use */
    user_op uops[RT_USER_OPS_MAX];            /* written under 'lock' before nuops counts them */
    atomic_int nuops;
    decision *decisions;
    struct seg_decision *seg_decisions;   /* segmented choices, under 'lock' */
    mean_choice *mean_choices;      /* api_get_choice_mean's answers, under 'lock' */
    _Atomic(axis_decision *) axis_decisions;   /* axis choices (api_axis.c) */
    CUmodule check_mod[2][2];             /* seg_check by layout and offset width */
    CUfunction check_fn[2][2];
    kernel *kernels;
    int trace;                            /* REDTUNE_TRACE set: time the first-call steps */
    capture cap;                          /* REDTUNE_CAPTURE and REDTUNE_LOG (capture.c) */
    atomic_int nslots;
    slot slots[NSLOTS];
    pthread_mutex_t kept_lock;            /* 'kept'; taken after a slot's lock */
    kept_block *kept;
};

/* Entry points driver.h does not carry, from the same library (already loaded by
 * driver_load; api.c's driver_extras fills them at rt_open). */
extern struct api_cx {
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*StreamGetId)(CUstream, unsigned long long *);   /* NULL before CUDA 12.0 */
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
} api_cx;

/* by STORE_MATCH_* and LEVEL_BUILTIN (api_choose.c) */
extern const char *const api_level_names[];

/* api.c: tracing (REDTUNE_TRACE), this thread's message, the CUDA context. */
double api_mono_ms(void);
void api_trace(const rt_ctx *ctx, double *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void api_begin(const rt_ctx *ctx);
int api_finish(int rc, const rt_err *e);
int api_enter(const rt_ctx *ctx, int *pushed, rt_err *e);
void api_leave(int pushed);
int api_cuda_fail(CUresult r, const char *what, rt_err *e);

/* api.c: arguments. */
const char *api_opname(const rt_ctx *ctx, rt_op op);
/* The type spec's name for messages: the plain type's name ("bf16"), or the spec's text
 * ("bf16 (f64 accumulator)") written into buf. */
const char *api_typename(rt_op op, rt_type type, char *buf, size_t len);
/* The cache slot of a spec that api_check_op_type accepted. */
int api_slot(rt_op op, rt_type type);
int api_check_op_type(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type, rt_err *e);
int api_check_ctx(const char *fn, const rt_ctx *ctx, rt_err *e);
int api_check_pointers(const char *fn, const rt_ctx *ctx, rt_op op, rt_type type,
                       const void *d_in, unsigned long long n, const void *d_out, rt_err *e);

/* api_choose.c: the database's answer per (layout, op, type). */
int api_get_choice(rt_ctx *ctx, int layout, rt_op op, rt_type type, choice **out, rt_err *e);
int api_get_choice_mean(rt_ctx *ctx, int layout, rt_op op, rt_type type, const choice *c,
                        int mb, double mlo, double mhi, choice **out, rt_err *e);
/* Every answer above, freed (rt_close). */
void api_choices_free(rt_ctx *ctx);
/* api_seg.c: a segmented case's winner (NULL: the built-in default) and the answer it came
 * from, for n in size bucket nb and mean length bucket mb (caller holds ctx->lock). */
int api_seg_pick(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned nb, int mb,
                 int skewed, const choice **c, const best_entry **row, rt_err *e);
/* The config a segmented call runs a winner's (family, params) as: LAYOUT (RT_LAYOUT_KEYS or
 * _OFFSETS) and OFF64 set, V = 1 without 'aligned' pointers, LONG = 0 for 'uniform' lengths;
 * *changed = 1 when that differs from 'params'. RT_EINVAL for a family that is not a
 * segmented one of this library. */
int api_seg_config(const char *family, const char *params, int layout, int off64,
                   int aligned, int uniform, rt_config *cfg, int *changed, rt_err *e);
/* api_kernel.c: loading. 'builtin' is API_WINNER for a database winner's config,
 * API_BUILTIN for the built-in default of a case with no winner, API_BUILTIN_INSTEAD for the
 * built-in default in place of a winner whose kernel could not be made (the messages of a
 * failure differ). */
enum { API_WINNER, API_BUILTIN, API_BUILTIN_INSTEAD };
int api_config_kernel(rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
                      int builtin, kernel **out, rt_err *e);
/* The unit api_config_kernel loads for 'cfg' and (op, type): its source (*src, malloc'd;
 * the caller frees) and its SHA-256 in hex, the hash a stored CUBIN of it must have. A NULL
 * ctx knows the built-in operators only (tests/test_shipped.c: a CUBIN shipped for every
 * winner's unit). */
int api_config_unit(const rt_ctx *ctx, rt_op op, rt_type type, const rt_config *cfg,
                    char **src, char hash[RT_HASH_HEX], rt_err *e);
/* The config a database winner of (family, params) runs as (api_winner_kernel): RT_OK, or
 * an error (RT_ENOTFOUND: a family not built into this library; config_parse's) when it runs
 * from its stored source instead. */
int api_winner_config(const char *family, const char *params, rt_config *cfg, rt_err *e);
/* A database winner loaded as this library's unit for its family and parameters. */
int api_winner_kernel(rt_ctx *ctx, rt_op op, rt_type type, const best_entry *row,
                      kernel **out, rt_err *e);
/* The built-in default 'cfg' loaded in place of a winner ('wfamily' 'wparams') whose kernel
 * could not be made, 'e' holding that RT_ENVRTC: *why then gets NVRTC's reason in one line
 * (malloc'd, for the decision to keep). When the built-in cannot be made either, its code and
 * a message of 'what' (the case) naming both failures. Caller holds ctx->lock. */
int api_builtin_instead(rt_ctx *ctx, rt_op op, rt_type type, const char *what,
                        const char *wfamily, const char *wparams, const rt_config *cfg,
                        kernel **out, char **why, rt_err *e);
/* NVRTC's reason in a message of a winner that could not be made, in one line into buf: the
 * first line of NVRTC's part of it, and the log's first line that says "error" after it. */
void api_nvrtc_line(const char *msg, char *buf, size_t len);
/* api_choose.c: the decisions of rt_reduce, by log2 bucket. */
unsigned api_bucket_of(unsigned long long n);
unsigned api_size_slot(unsigned long long n);
void api_slot_text(unsigned sl, char *buf, size_t len);
const best_entry *api_pick_winner(const best_entry *rows, int nrows, unsigned sl);
int api_decided(const rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n);
/* Whose winner 'b' of choice 'c' is, for the explanations: this GPU's own row, an identical
 * GPU's (a size this row lacks; --split), another GPU's of the same model, or another's. */
const char *api_row_owner(const choice *c, const best_entry *b);
int api_get_decision(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                     decision **out, rt_err *e);

/* api_choose.c: for rt_explain, "" or, where the decision's row is a sibling operator's
 * (choice.has_kin) or a type's of the same width (choice.has_tkin), the words saying so,
 * starting with "; ". */
const char *api_kin_note(const rt_ctx *ctx, const choice *c, const best_entry *row, rt_op op,
                         char *buf, size_t len);
/* api_reduce.c: the flat decision for n (n >= 1) launched on s with the stream's temporary
 * block; rt_reduce's body after its checks (rt_reduce_keys runs it for one segment). */
int api_flat_run(rt_ctx *ctx, const char *fn, rt_op op, rt_type type, const void *d_in,
                 unsigned long long n, void *d_out, CUstream s, int capturing, rt_err *e);

/* The built-in default's config for commutative operators (api_choose.c): gridstride B=256
 * V=16/size U=min(4, 16/V) G=4. */
void api_builtin_gridstride(rt_type type, rt_config *cfg);
/* The sibling's name where 'row' is one of its winners ("max"), or the operator and the type
 * of the same width whose winner it is ("min f64"), else NULL. */
const char *api_kin_name(const choice *c, const best_entry *row);
/* api_kin_name with what it is, for REDTUNE_LOG (api_log_choice's and api_log_instead's kin):
 * "max (an operator of the same cost)", "min f64 (a type of the same width)", or NULL. */
const char *api_kin_desc(const choice *c, const best_entry *row);
/* "; a winner of OP, an operator of the same cost" when 'row' is a sibling's (api_kin_name;
 * "; a winner of OP TYPE, a type of the same width" for a type's), else "": into buf, which
 * it returns. */
const char *api_kin_phrase(const choice *c, const best_entry *row, char *buf, size_t len);
/* api_choose.c: REDTUNE_LOG's line about a new decision (level, the kernel, the device row
 * it came from, whose winner it is when not the operator's own of this type: 'kin' as
 * api_kin_desc says it) and, per call, the case met for REDTUNE_CAPTURE (capture.c);
 * 'layout' 0 flat, 1 keys, 2 offsets; nothing to do unless ctx->cap.active. */
void api_log_choice(rt_ctx *ctx, const char *what, int level, const char *from, const char *kin,
                    const kernel *k);
/* REDTUNE_LOG's warning at a new decision where the built-in default k replaces the winner
 * 'wfamily' 'wparams' (of device row 'from', at 'level'; a sibling's or a type's of the same
 * width when 'kin' (api_kin_desc) is set) whose kernel could not be made, for NVRTC's
 * reason 'why'. */
void api_log_instead(rt_ctx *ctx, const char *what, const char *wfamily, const char *wparams,
                     const char *from, int level, const char *kin, const char *why,
                     const kernel *k);
void api_met(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
             unsigned long long nseg, int level, const choice *c);

/* api_axis.c: the decision of an axis case (outer, len, inner), made and its kernel loaded
 * the first time, else found with no lock; while the stream captures ('capturing' names the
 * call) a case not decided yet is RT_ECAPTURE. Nothing is kept when it fails. Caller has the
 * CUDA context current. */
int api_axis_decide(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                    unsigned long long len, unsigned long long inner, const char *capturing,
                    axis_decision **out, rt_err *e);

/* api_temp.c: temporary storage per stream. */
size_t api_temp_need(const kernel *k, unsigned long long n);
int api_stream_key(CUstream s, unsigned long long *key, rt_err *e);
int api_lock_slot(rt_ctx *ctx, unsigned long long key, int claim, slot **out, rt_err *e);
int api_grow(rt_ctx *ctx, slot *sl, size_t need, CUstream s, rt_err *e);
int api_capturing(CUstream s, const char *fn, int *capturing, rt_err *e);
int api_capture_temp(rt_ctx *ctx, const char *fn, CUstream s, size_t need, const char *warm,
                     slot **out, rt_err *e);
/* The stream's temporary block for a launch that needs 'need' bytes: out of a capture, its
 * slot, locked, grown to 'need'; while capturing, api_capture_temp's (NULL when need is 0).
 * The caller launches with (*out)->temp (0 for none) and unlocks (*out)->lock. */
int api_stream_temp(rt_ctx *ctx, const char *fn, CUstream s, size_t need, int capturing,
                    const char *warm, slot **out, rt_err *e);

/* api_ops.c: user-defined operators. */
const user_op *api_user_of(const rt_ctx *ctx, rt_op op);

/* Bytes of op's accumulator (partials, carries) and of one result: optype's for a built-in,
 * the layouts of a user operator's acc and result. */
size_t api_acc_size(const rt_ctx *ctx, rt_op op, rt_type type);
size_t api_res_size(const rt_ctx *ctx, rt_op op, rt_type type);
int api_keep_definition(rt_ctx *ctx, const user_op *u, choice *c, rt_err *e);

#endif
