/*
 * redtune.h - the public C API of libredtune, the runtime half of redtune.
 *
 * redtune tunes GPU parallel reductions and stores the winners in SQLite; this header is
 * the only one an application includes. Every function that can fail returns RT_OK (0) or
 * a negative RT_E* code, and leaves a message that names what went wrong.
 */
#ifndef REDTUNE_H
#define REDTUNE_H

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

/* Built-in reduction operators. */
typedef enum rt_op {
    RT_SUM = 0,
    RT_PROD,
    RT_MIN,
    RT_MAX,
    RT_ARGMIN,     /* value and index of the least element; ties: the lowest index */
    RT_ARGMAX,     /* value and index of the greatest element; ties: the lowest index */
    RT_OP_COUNT
} rt_op;

/* The result of RT_ARGMIN / RT_ARGMAX: 16 bytes, the value in the first 4 or 8 (the element
 * type), the index at offset 8. NaN elements are ignored; an input of only NaN gives the
 * first NaN; n == 0 gives index -1. */
typedef struct rt_arg_f32 { float value; int pad_; long long index; } rt_arg_f32;

/* Element types. For sum, prod, min and max the result has the element type (integer sums and
 * products wrap modulo 2^bits; float min/max ignore NaN unless every element is NaN). */
typedef enum rt_type {
    RT_F32 = 0,
    RT_F64,
    RT_I32,
    RT_U32,
    RT_I64,
    RT_U64,
    RT_TYPE_COUNT
} rt_type;

/* Short name of a result code ("RT_EDB"); never NULL. */
const char *rt_strerror(int code);

/* Names used on the command line and in the database ("min", "f32"); NULL when out of range. */
const char *rt_op_name(rt_op op);
const char *rt_type_name(rt_type type);

#ifdef __cplusplus
}
#endif
#endif
