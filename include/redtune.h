/*
 * redtune.h - the public C API of libredtune, the runtime half of redtune.
 *
 * redtune tunes GPU parallel reductions and stores the winners in SQLite; this header is
 * the only one an application includes. Every function that can fail returns RT_OK (0) or
 * a negative RT_E* code, and leaves a message that names what went wrong.
 */
#ifndef REDTUNE_H
#define REDTUNE_H

#include <stddef.h>   /* size_t */

#ifdef __cplusplus
extern "C" {
#endif

#define RT_VERSION_STRING "0.1.0"

/* Result codes. Negative, so that a count or an index can share a return value. */
#define RT_OK          0
#define RT_ENOMEM     -1   /* out of host or device memory */
#define RT_EIO        -2   /* a file could not be read or written */
#define RT_ELUA       -3   /* a Lua script failed: syntax, runtime error, limit, forbidden call */
#define RT_ENVRTC     -4   /* NVRTC missing or a kernel failed to compile */
#define RT_ECUDA      -5   /* no CUDA driver, no GPU, or a driver call failed */
#define RT_EDB        -6   /* the database is missing, foreign, newer, or SQLite failed */
#define RT_ENOTFOUND  -7   /* no such entry (family, kernel, measurement, best) */
#define RT_EINVAL     -8   /* an argument is out of its domain */
#define RT_EVERIFY    -9   /* a kernel computed a wrong result */
#define RT_ETIMEOUT  -10   /* a kernel ran past its time limit */
#define RT_EFAULT    -11   /* a kernel faulted (illegal address, launch failure) */
#define RT_ECAPTURE  -12   /* the stream is capturing a CUDA graph and the call would have to
                              load a kernel, allocate or synchronise: warm up before capture */

/* Built-in reduction operators. */
typedef enum rt_op {
    RT_SUM = 0,
    RT_PROD,
    RT_MIN,
    RT_MAX,
    RT_ARGMIN,     /* value and index of the least element; ties: the lowest index */
    RT_ARGMAX,     /* value and index of the greatest element; ties: the lowest index */
    /* Fused operators (docs/types.md): a map of each element, the combine, a finalize. */
    RT_AMAX,       /* max |x| (float types): the FP8/INT8 scaling reduction; NaN as RT_MAX;
                      the element type; 0 for n == 0 */
    RT_ASUM,       /* sum of |x| (float types), in the accumulator */
    RT_SUMSQ,      /* sum of x*x (float types), in the accumulator */
    RT_NORM2,      /* sqrt of the sum of x*x (float types), in the accumulator */
    RT_MEAN,       /* sum / n (every type; f64 for integers); NaN for n == 0 */
    RT_VAR_MEAN,   /* variance and mean (rt_var_mean_f32): population variance (divided by
                      n); one pass, Chan's pairwise merge of (count, mean, M2); NaN for n == 0 */
    RT_VAR_MEAN_SAMPLE,  /* the same with the sample variance (divided by n - 1; NaN for n < 2) */
    RT_STD_MEAN,   /* standard deviation and mean: the square root of RT_VAR_MEAN's */
    RT_STD_MEAN_SAMPLE,  /* standard deviation and mean of the sample variance */
    RT_OP_COUNT
} rt_op;

/* The result of RT_ARGMIN / RT_ARGMAX: 16 bytes, the value in the first 1, 2, 4 or 8 (the
 * element type), the index at offset 8. NaN elements are ignored; an input of only NaN gives the
 * first NaN; n == 0 gives index -1. RT_RESULT_INDEX(type) gives the index alone (long long). */
typedef struct rt_arg_f32 { float value; int pad_; long long index; } rt_arg_f32;

/* Element types. For sum, prod, min and max of the 32/64-bit types the result has the element
 * type; f16, bf16, i8 and u8 sums and products have the wider accumulator's (type specs, below).
 * Integer sums and products wrap modulo 2^bits of the accumulator; float min/max ignore NaN unless every element is NaN: an input,
 * or a segment, of only NaN gives NaN, as fmin and numpy.nanmin do; +inf (min) or -inf (max)
 * only for n == 0 or an empty segment). */
typedef enum rt_type {
    RT_F32 = 0,
    RT_F64,
    RT_I32,
    RT_U32,
    RT_I64,
    RT_U64,
    RT_F16,        /* IEEE binary16, as __half: 2 bytes */
    RT_BF16,       /* bfloat16, as __nv_bfloat16: 2 bytes */
    RT_I8,         /* signed char */
    RT_U8,         /* unsigned char */
    RT_TYPE_COUNT,
    RT_TYPE_SPEC_MAX_ = 2147483647   /* rt_type also holds the type specs below */
} rt_type;

/*
 * Type specs: the element type, the accumulator and the result. Where an rt_type is taken, a
 * spec may be given instead:
 *   RT_BF16                       the defaults of the operator;
 *   RT_ACC(RT_BF16, RT_F64)       accumulate in f64 (the result is the accumulator);
 *   RT_RESULT_ELEM(RT_BF16)       the result converted to the element type (rounded to
 *                                 nearest even; integers wrap), RT_ACC(...) may be inside;
 *   RT_RESULT_INDEX(RT_BF16)      argmin/argmax only: the result is the index alone, a long
 *                                 long (8 bytes, as torch.argmax gives), not the 16-byte
 *                                 {value, index}; -1 for an empty input or segment. The
 *                                 same kernels as the pair (the database's winners of the
 *                                 pair serve it): along an axis half the bytes written; the
 *                                 segmented calls keep the 16-byte accumulators in the
 *                                 temporary storage and write the indices in a last launch.
 * Defaults (docs/types.md): sum, prod, asum, sumsq, norm2 and mean accumulate f16/bf16 in f32,
 * i8 in i32, u8 in u32, the other types in themselves, and give the accumulator; mean of an
 * integer type gives f64. min, max, argmin, argmax and amax keep the element type (an
 * accumulator other than the element is RT_EINVAL). Accumulators: f32 or f64 for float
 * elements (never narrower than the element), i32/i64 for i8 and i32, u32/u64 for u8 and u32.
 * A pair the library does not define (var_mean of u8, a result of mean in i32) is RT_EINVAL
 * naming it. rt_type_name() names plain types only.
 */
#define RT_ACC(type, acc) ((rt_type)((int)(type) | (((int)(acc) + 1) << 8)))
#define RT_RESULT_ELEM(spec) ((rt_type)((int)(spec) | 0x10000))
#define RT_RESULT_INDEX(spec) ((rt_type)((int)(spec) | 0x20000))

/* The result of RT_VAR_MEAN / RT_STD_MEAN (and _SAMPLE) in f32 and f64: the variance (or
 * standard deviation) first, then the mean, as torch.var_mean returns them. A result in f16
 * or bf16 (RT_RESULT_ELEM) is two 2-byte values in the same order. */
typedef struct rt_var_mean_f32 { float var; float mean; } rt_var_mean_f32;
typedef struct rt_var_mean_f64 { double var; double mean; } rt_var_mean_f64;

/* The other result layouts of RT_ARGMIN / RT_ARGMAX, one per element type (same rules). */
typedef struct rt_arg_f64 { double value; long long index; } rt_arg_f64;
typedef struct rt_arg_i32 { int value; int pad_; long long index; } rt_arg_i32;
typedef struct rt_arg_u32 { unsigned int value; int pad_; long long index; } rt_arg_u32;
typedef struct rt_arg_i64 { long long value; long long index; } rt_arg_i64;
typedef struct rt_arg_u64 { unsigned long long value; long long index; } rt_arg_u64;

/* Short name of a result code ("RT_EDB"); never NULL. */
const char *rt_strerror(int code);

/* Names used on the command line and in the database ("min", "f32"); NULL when out of range. */
const char *rt_op_name(rt_op op);
const char *rt_type_name(rt_type type);

/* ---------------------------------------------------------------- the runtime lookup library
 *
 * An application opens the tuned database once per GPU and calls rt_reduce(); the library
 * picks the kernel tuned for the GPU it finds itself on (falling back to a similar GPU, to
 * the winners of an operator of the same cost or of a type of the same width, then to a
 * built-in default), loads it once, and launches it. Pointers named d_* are CUDA device
 * pointers (CUdeviceptr or cudaMalloc'd memory cast to void *) of the context's device;
 * 'stream' is a CUstream / cudaStream_t of that device's primary context (the one the CUDA
 * runtime uses), or NULL for the legacy default stream. docs/api.md has the whole story.
 *
 * Errors: every function returns RT_OK or a negative RT_E* code, and leaves a message for
 * rt_errmsg(). Messages are kept per host thread, so a context shared by threads never
 * mixes one thread's message into another's.
 */

/* A tuned database opened for one GPU. Opaque. */
typedef struct rt_ctx rt_ctx;

/*
 * Open the database 'db_path' read-only for GPU 'device' (a CUDA ordinal, 0 for the first).
 * db_path NULL means the environment variable REDTUNE_DB, or "redtune.db" when it is unset
 * or empty. The file must exist and be a redtune database of a schema this library knows;
 * it is never written, and a refused file is left untouched.
 *
 * Opening loads the CUDA driver (dlopen), queries the device and retains its primary
 * context; kernels are chosen, loaded or compiled later, at the first reduction of each
 * (operator, type, size range).
 *
 * Returns RT_OK with *out set, or an error with *out NULL:
 *   RT_EINVAL  out is NULL, device < 0 or no such device;
 *   RT_EDB     the file is missing, not SQLite, not redtune's, or of a newer schema;
 *   RT_ECUDA   "no CUDA driver found: ...", no GPU, or a driver call failed;
 *   RT_ENOMEM  out of host memory.
 * The message of a failed open is rt_errmsg(NULL) on the calling thread (or use
 * rt_open_err). Close a context with rt_close().
 */
int rt_open(const char *db_path, int device, rt_ctx **out);

/* rt_open, and on failure the message also copied into msg[0..len) (NUL-terminated,
 * truncated to fit; msg may be NULL when len is 0). On success msg is set to "". */
int rt_open_err(const char *db_path, int device, rt_ctx **out, char *msg, size_t len);

/*
 * Close a context: waits for the GPU work of the device's context to finish (the
 * temporary storage it owns may still be in use), unloads its kernels, frees its temporary
 * storage, releases the primary context and closes the database. NULL is a harmless no-op.
 * No other thread may be using the context, and it must not be used afterwards; nor may a
 * CUDA graph that captured its calls be launched again (its kernels and storage are gone).
 */
void rt_close(rt_ctx *ctx);

/*
 * The message of the last redtune call made on this host thread, when that call was made on
 * 'ctx' and failed; "" otherwise. rt_errmsg(NULL) gives the message of a failed rt_open or
 * of a call made with a NULL context. Never NULL. The text belongs to the library and stays
 * valid until this thread's next redtune call (long messages, e.g. NVRTC logs, are cut at
 * about 4 KiB).
 */
const char *rt_errmsg(const rt_ctx *ctx);

/*
 * Reduce d_in[0..n) with 'op' into d_out, on 'stream', asynchronously (like CUB): the call
 * returns once the work is enqueued; synchronise the stream before reading d_out on the host.
 *
 * d_out receives one element of 'type' for RT_SUM, RT_PROD, RT_MIN, RT_MAX, or 16 bytes
 * {value, index at offset 8} for RT_ARGMIN / RT_ARGMAX (rt_arg_f32 ... rt_arg_u64; with
 * RT_RESULT_INDEX(type) the 8-byte index alone).
 * n == 0 writes the identity (sum 0, prod 1, min the largest value or +inf, max the least
 * or -inf; argmin/argmax: that value and index -1), with no kernel.
 * d_in must be aligned to the element size (any element offset of an allocation is fine:
 * the kernels handle unaligned heads); d_out to the element size, 8 bytes for argmin/argmax.
 * d_in may be NULL only when n == 0.
 *
 * Temporary storage comes from the context: one block per stream, allocated at the first
 * reduction on that stream and grown (after synchronising that stream) when a larger one
 * is needed; reductions on one stream from several threads are serialised around their
 * launches. See rt_reduce_temp for storage the caller owns, rt_release_temp to give it back.
 *
 * The first call for an (op, type, size range [2^k, 2^(k+1))) chooses the kernel and may
 * load it (a synchronous driver call) or compile it with NVRTC; later calls are a table
 * lookup and the launches. A database winner whose kernel cannot be made here (no CUBIN for
 * it and no NVRTC, or NVRTC refuses it) gives way to the built-in default, which then serves
 * the case: rt_explain names the winner and NVRTC's reason, and REDTUNE_LOG=warn prints a
 * line (docs/api.md, "A winner that cannot be made"). Thread-safe: one context may be used by
 * many threads at once.
 *
 * CUDA graphs: while 'stream' is capturing (cuStreamBeginCapture, torch.cuda.graph), the call
 * only enqueues kernels and memsets on that stream; where it would have to load a kernel (the
 * first call of its case), allocate or grow the stream's temporary storage, or synchronise,
 * it fails with RT_ECAPTURE and leaves the stream and its capture untouched. Make one call of
 * each case on the capturing stream before the capture (a warm-up), or use rt_temp_bytes
 * before it and rt_reduce_temp. docs/api.md, "CUDA graphs", has the rules for replays.
 *
 * Returns RT_OK, or RT_EINVAL (NULL or misaligned pointer, unknown op or type), RT_EDB,
 * RT_ENVRTC (the built-in default cannot be made: no CUBIN for this GPU in the database and no
 * NVRTC to compile one, or a compile error; when it was to stand in for a winner that cannot
 * be made, the message names both failures), RT_ENOMEM, RT_ECUDA (a driver call failed, e.g.
 * a stream of another context), RT_EFAULT (a kernel faulted earlier: the CUDA context is
 * lost), RT_ECAPTURE (above).
 */
int rt_reduce(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in, unsigned long long n,
              void *d_out, void *stream);

/*
 * Bytes of temporary storage rt_reduce_temp needs for (op, type, n), into *bytes (0 when
 * n == 0). Chooses (and loads) the kernel as rt_reduce would, so it may take as long as a
 * first rt_reduce. The size depends on n only through the kernel's grid: the same
 * (op, type, n) always gives the same answer on one context. It has no stream to look at,
 * so it cannot tell a capture is under way: call it before the capture (once loaded, a
 * case's answer is a lookup, safe during capture).
 */
int rt_temp_bytes(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n, size_t *bytes);

/*
 * rt_reduce with temporary storage the caller owns: d_temp, aligned to 256 bytes (as
 * cudaMalloc returns), of at least rt_temp_bytes(ctx, op, type, n) bytes. Its contents need
 * not be anything in particular: the library clears the one-launch counter in its first 256
 * bytes on 'stream' before each launch that uses one. The storage is in use until the work
 * enqueued on 'stream' is done; the caller must not use it on another stream meanwhile.
 * d_temp may be NULL when the size needed is 0. RT_EINVAL when temp_bytes is too small
 * (the message says how much is needed) or d_temp is misaligned. Under stream capture it
 * allocates nothing, and fails with RT_ECAPTURE only when the kernel is not loaded yet (call
 * rt_temp_bytes for the case before the capture): the graph then owns its storage.
 */
int rt_reduce_temp(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   unsigned long long n, void *d_out, void *d_temp, size_t temp_bytes,
                   void *stream);

/*
 * Free the temporary storage the context holds for its streams, after waiting for all work
 * of the device's context (cuCtxSynchronize). For applications that create and destroy many
 * streams over the life of one context: the context keeps a block per stream it has seen,
 * and past 64 streams it does this by itself. Safe while other threads reduce on the
 * context: they wait for it, then allocate again. Storage that a captured CUDA graph uses
 * is not freed here (nor when its stream's block grows): the context keeps it until
 * rt_close. Not to be called while a stream of this device is capturing (it synchronises).
 */
int rt_release_temp(rt_ctx *ctx);

/*
 * Explain the choice for (op, type, n) into buf[0..len) (NUL-terminated, truncated to fit),
 * as several lines: which kernel (family, parameters, launch plan, hash prefix); which
 * database entry it comes from (device name, tuned n, median microseconds); the fallback
 * level ("exact device", "same compute capability", "same major architecture", "built-in
 * default"; where the built-in default replaces a winner whose kernel cannot be made here,
 * "none used", that winner and NVRTC's reason); and whether the CUBIN came from the database
 * or was compiled by NVRTC.
 * Chooses and loads the kernel as rt_reduce would. Returns RT_OK or an error as rt_reduce.
 */
int rt_explain(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n, char *buf,
               size_t len);

/* ---------------------------------------------------------------- user-defined operators
 *
 * An operator of your own, registered once on a context and then passed as the 'op' of
 * rt_reduce, rt_reduce_temp, rt_temp_bytes, rt_explain and the segmented calls, with 'type'
 * equal to the operator's. The fields are those of the tuner's operator file
 * (`redtune --op-file myop.lua`, docs/ops.md), so a database tuned with that file serves the
 * registered operator: its winners are used when their definition fingerprint (a hash of type,
 * identity, combine and commutative, and of map, acc, finalize and result where given,
 * docs/ops.md) equals the registered one, which needs
 * identity and combine to be the very bytes Lua read from the file. Winners of another
 * definition under the same name are never used (rt_explain says so).
 */
typedef struct rt_op_desc {
    const char *name;      /* [a-z0-9_]+, at most 47 characters, not a built-in's name */
    rt_type type;          /* the element type (and the accumulator's and the result's
                              unless acc and result say otherwise) */
    const char *identity;  /* a CUDA expression of the identity (at most 255 bytes); a brace
                              initializer or an expression of a struct accumulator */
    const char *combine;   /* the body of rt_combine(rt_acc_t a, rt_acc_t b), which must
                              return the result; a covers the lower indices (< 4096 bytes) */
    int commutative;       /* 1 when combine(a, b) == combine(b, a), else 0 */
    /* Optional, appended later: NULL (or "") for the default. ABI note: zero-initialise the
     * description (rt_op_desc d = {0}; or = {"name", ...} with the rest left out) so that a
     * program written before these fields existed, recompiled, keeps the defaults. */
    const char *map;       /* the body of rt_acc_t rt_lift(rt_value_t x, unsigned long long i):
                              element x at index i into the accumulator (< 4096 bytes);
                              default: x (f16/bf16 widened when acc is a float) */
    const char *acc;       /* the accumulator: "f32" "f64" "i32" "u32" "i64" "u64" or
                              "struct { float m; float s; unsigned n; }" (scalar CUDA fields,
                              at most 32 bytes, laid out 8-byte aligned); default: type.
                              A struct needs a map; f16, bf16, i8, u8 elements need an acc */
    const char *finalize;  /* the body of rt_res_t rt_final(rt_acc_t a): the accumulator into
                              one result (< 4096 bytes); default: a */
    const char *result;    /* the result type, as acc; default: the accumulator. Only with a
                              finalize. rt_reduce writes one result of this type */
} rt_op_desc;

#define RT_OP_USER_FIRST 256   /* the first handle rt_register_op gives */
#define RT_USER_OPS_MAX 16     /* operators one context holds */

/*
 * Register 'desc' on 'ctx' and set *op to its handle (RT_OP_USER_FIRST + i, valid on this
 * context only). The description is checked before the context: RT_EINVAL naming the field
 * for a missing or ill-formed one. Registering the same definition again gives the same
 * handle; the same name with another definition is RT_EINVAL. Where NVRTC can be loaded the
 * operator is compiled and its identity evaluated on the GPU now (RT_ENVRTC with NVRTC's log
 * when it does not compile); without NVRTC registration succeeds, and a call then needs a
 * CUBIN of the database for it (n == 0 needs NVRTC: the identity is only known compiled).
 * The built-in default for a user operator that has no winner in the database is diffwarps
 * (keeps the order of the elements), or gridstride when it commutes; seg_lb for the
 * segmented calls. argmin/argmax-like operators with an index are not user operators.
 * Thread-safe; at most RT_USER_OPS_MAX operators per context (RT_EINVAL past that).
 */
int rt_register_op(rt_ctx *ctx, const rt_op_desc *desc, rt_op *op);

/* ---------------------------------------------------------------- segmented reductions
 *
 * Many independent reductions in one call (docs/segmented.md). Two layouts:
 *   keys     d_keys[0..n) (u32), the segment of each element: sorted non-decreasing, each
 *            < nseg (the paper's owner array). out[s] is the reduction of the elements whose
 *            key is s, in index order; a key that does not occur gives the identity. The key
 *            of out[s] is s itself.
 *   offsets  d_offsets[0..nseg] (int, or long long with RT_SEG_OFF64), CSR begin offsets:
 *            non-decreasing, offsets[nseg] <= n. Segment s is elements
 *            [offsets[s], offsets[s+1]); an empty one gives the identity. Elements outside
 *            [offsets[0], offsets[nseg]) belong to no segment.
 * d_out receives nseg accumulators (the element type; 16 bytes {value, 8-byte index} for
 * argmin/argmax, the index counted in the whole input, -1 for an empty segment; 8 bytes, the
 * index alone, with RT_RESULT_INDEX). nseg == 0
 * writes nothing; n == 0 gives every segment the identity.
 *
 * Input that breaks the rules is unchecked by default: the result is then unspecified, but
 * no kernel reads outside d_in[0..n), the keys or the offsets, nor writes outside
 * d_out[0..nseg). With RT_SEG_CHECK the keys or offsets are checked on the GPU first (a
 * synchronous check kernel, compiled with NVRTC once per context): RT_EINVAL naming how many
 * entries break which rule and the first one, and nothing is written.
 *
 * The kernel is the database's winner for this GPU, layout, op and type nearest to n and to
 * the mean segment length n / nseg (the tuner measures profiles of segment lengths:
 * `redtune --segmented keys|offsets`); else a built-in default. A winner that uses vector
 * loads runs with scalar loads when d_in (or the keys) are not 16-byte aligned, and one tuned
 * for the other offset width is specialised for this one; both are compiled with NVRTC once.
 * A winner whose kernel cannot be made here (such a variant NVRTC refuses, or no NVRTC) gives
 * way to the built-in default, as for rt_reduce.
 * Temporary storage as rt_reduce (one block per stream). Thread-safe as rt_reduce. Under
 * stream capture as rt_reduce (RT_ECAPTURE), and RT_SEG_CHECK, synchronous, is refused.
 *
 * The winner is chosen by the mean length only: a kernel that gives each segment a group of
 * threads (seg_per) is fast for lengths near their mean, but a call whose lengths spread widely
 * (a few segments far longer than the mean: heavy-tailed, power-law) then leaves one group with
 * a long segment, and can take many times a balanced kernel's time. RT_SEG_SKEWED says the
 * lengths may spread so: only load-balanced kernels (each thread's work bounded whatever the
 * lengths: seg_lb, seg_stream, seg_mark, and every keys kernel) serve the call, the database's
 * winner among them nearest in n and mean length, else the built-in default (seg_lb). It costs
 * nothing per call. Without it, a kernel with a group per segment (seg_per, LANES < 32) keeps a
 * list of the segments longer than its LONG rounds and reduces them with the whole block after
 * its tiles, so that a heavy tail costs a block's read of each long segment, not one lane's
 * walk of it (docs/segmented.md, "Heavy tails"); where every segment is short the list costs up
 * to 12% (measured on the H100, docs/results.md). RT_SEG_UNIFORM says the lengths stay near
 * their mean (the longest within 16 times it): the winner runs without the list (seg_per's
 * and seg_pipe's LONG=0, compiled with NVRTC once). RT_SEG_SKEWED with RT_SEG_UNIFORM is RT_EINVAL. With
 * RT_SEG_CHECK the check kernel also finds the longest segment of the offsets, and a call whose
 * longest segment is over 256 elements and 16 times the mean length n / nseg is served as with
 * RT_SEG_SKEWED, any other as with RT_SEG_UNIFORM, whichever one the caller passed.
 *
 * Returns RT_OK, or the codes of rt_reduce; RT_EINVAL also for a NULL keys/offsets array with
 * nseg > 0, a misaligned one, unknown flags, RT_SEG_SKEWED with RT_SEG_UNIFORM, RT_SEG_OFF64
 * with keys, more than 2^31 - 1 elements with 32-bit offsets, or input RT_SEG_CHECK rejects.
 */
#define RT_SEG_CHECK 1u    /* check the keys or offsets first (synchronous) */
#define RT_SEG_OFF64 2u    /* the offsets are long long (default: int) */
#define RT_SEG_SKEWED 4u   /* lengths may spread widely: load-balanced kernels only */
#define RT_SEG_UNIFORM 8u  /* lengths stay near their mean: no long-segment list (seg_per) */

#define RT_LAYOUT_KEYS 1
#define RT_LAYOUT_OFFSETS 2

int rt_reduce_keys(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   const unsigned *d_keys, unsigned long long n, unsigned long long nseg,
                   void *d_out, void *stream, unsigned flags);

int rt_reduce_offsets(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                      unsigned long long n, const void *d_offsets, unsigned long long nseg,
                      void *d_out, void *stream, unsigned flags);

/*
 * rt_explain for a segmented call: layout RT_LAYOUT_KEYS or RT_LAYOUT_OFFSETS, n elements in
 * nseg segments (flags: RT_SEG_OFF64 as the call would pass). Assumes 16-byte aligned
 * pointers.
 */
int rt_explain_segmented(rt_ctx *ctx, int layout, rt_op op, rt_type type, unsigned long long n,
                         unsigned long long nseg, unsigned flags, char *buf, size_t len);

/*
 * Reductions along an axis (docs/axis.md). d_in is a contiguous row-major tensor viewed as
 * [outer, len, inner]; it is reduced along len into d_out[outer * inner] (row-major
 * [outer, inner]), one result of the op's result type per output (RT_RESULT_ELEM and the
 * type spec as rt_reduce). Rows of a matrix are inner = 1, its columns outer = 1; the middle
 * axis of a 3-D tensor has both. argmin/argmax give the position along the axis (0 .. len - 1),
 * as torch's dim reductions do; len == 0 gives every output the empty result of rt_reduce
 * (the identity; -1 for the index); outer * inner == 0 writes nothing. Asynchronous on
 * 'stream' as rt_reduce, with the same temporary storage, thread safety and CUDA-graph rules.
 *
 * The kernel is the database's winner for this GPU, op and type whose tuned shape is nearest
 * to (outer, len, inner) on a log scale (among shapes of the same kind: inner == 1 or not),
 * with the fallbacks of rt_reduce; else a built-in default chosen by the shape, which also
 * runs in place of a winner whose kernel cannot be made here (no CUBIN for it and no NVRTC,
 * or NVRTC refuses it), as for rt_reduce: rt_explain_axis names that winner and NVRTC's
 * reason, and REDTUNE_LOG=warn prints a line.
 *
 * Returns RT_OK or the codes of rt_reduce (RT_ENVRTC only when the built-in default cannot be
 * made; where it was to stand in for a winner, the message names both failures); RT_EINVAL
 * also when outer * len * inner (or outer * inner) overflows 64 bits, names NULL pointers for
 * a non-empty shape, or a pointer not aligned to its element (or result) size.
 */
int rt_reduce_axis(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                   unsigned long long outer, unsigned long long len, unsigned long long inner,
                   void *d_out, void *stream);

/* Bytes of temporary storage rt_reduce_axis_temp needs for the case (0 when none). */
int rt_axis_temp_bytes(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                       unsigned long long len, unsigned long long inner, size_t *bytes);

/* rt_reduce_axis with temporary storage the caller owns, as rt_reduce_temp. */
int rt_reduce_axis_temp(rt_ctx *ctx, rt_op op, rt_type type, const void *d_in,
                        unsigned long long outer, unsigned long long len,
                        unsigned long long inner, void *d_out, void *d_temp,
                        size_t temp_bytes, void *stream);

/* rt_explain for an axis reduction: the kernel, the tuned shape it comes from, the fallback
 * (where the built-in default replaces a winner whose kernel cannot be made here, "none
 * used", that winner and NVRTC's reason). */
int rt_explain_axis(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long outer,
                    unsigned long long len, unsigned long long inner, char *buf, size_t len_buf);

#ifdef __cplusplus
}
#endif
#endif
