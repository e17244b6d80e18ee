/*
 * scalars.h - the benches' 16-bit floats and scalars of any type as doubles, for the CPU
 * references and the checks of types.cu and axis_data.cu.
 */
#ifndef RT_BENCH_SCALARS_H
#define RT_BENCH_SCALARS_H

#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "common.h"

inline float bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Round to nearest even; the benches' data holds no NaN. */
inline uint16_t bf16_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

inline float f16_value(uint16_t b)
{
    __half_raw r;
    r.x = b;
    return __half2float(__half(r));
}

inline uint16_t f16_bits(float f)
{
    __half_raw r = __half_raw(__float2half_rn(f));
    return r.x;
}

/* Element i of an array of type t as a double (bf16, f16, f32, f64, i32; NaN for another
 * type); read with memcpy, so a result at any byte offset can be read too. */
inline double scalar_at(const void *buf, rt_type t, unsigned long long i)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint16_t h;
    float f;
    double d;
    int32_t k;
    switch (t) {
    case RT_BF16: memcpy(&h, p + 2 * i, 2); return bf16_value(h);
    case RT_F16: memcpy(&h, p + 2 * i, 2); return f16_value(h);
    case RT_F32: memcpy(&f, p + 4 * i, 4); return f;
    case RT_F64: memcpy(&d, p + 8 * i, 8); return d;
    case RT_I32: memcpy(&k, p + 4 * i, 4); return k;
    default: return NAN;
    }
}

#endif
