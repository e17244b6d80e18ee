/*
 * affine.h - an associative, non-commutative operator with exact results, for proving that the
 * families which claim to keep order do: composition of affine maps x -> a*x + b over 32-bit
 * integers, packed in a u64 as (a << 32) | b. combine(f, g) is "f, then g": g(f(x)) =
 * (ag*af) x + (ag*bf + bg), all modulo 2^32. Swapping any two elements changes the result.
 */
#ifndef RT_TESTS_AFFINE_H
#define RT_TESTS_AFFINE_H

#include <stdint.h>
#include "runtime/codegen.h"

static const rt_user_op affine_op = {
    "affine", RT_U64, "0x100000000ULL",
    "unsigned int af = (unsigned int)(a >> 32), bf = (unsigned int)a;"
    " unsigned int ag = (unsigned int)(b >> 32), bg = (unsigned int)b;"
    " return ((unsigned long long)(ag * af) << 32) | (unsigned int)(ag * bf + bg);",
    0};

static inline uint64_t affine_combine(uint64_t f, uint64_t g)
{
    uint32_t af = (uint32_t)(f >> 32), bf = (uint32_t)f, ag = (uint32_t)(g >> 32), bg = (uint32_t)g;
    return ((uint64_t)(uint32_t)(ag * af) << 32) | (uint32_t)(ag * bf + bg);
}

#endif
