/*
 * axis_data.cu - redtune_bench --axis's data and references (axis_data.h): seeded inputs of
 * small integers (exact in every type), the CPU reference per output in double, and the check
 * of every output an implementation wrote.
 */
#include "axis_data.h"
#include "scalars.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

namespace axis_data {

template <class F>
static void parallel(unsigned long long n, int threads, F &&body)
{
    std::vector<std::thread> pool;
    unsigned long long chunk = (n + threads - 1) / threads;
    for (int k = 0; k < threads; k++) {
        unsigned long long a = k * chunk, b = std::min(n, a + chunk);
        if (a >= b)
            break;
        pool.emplace_back([=, &body] { body(a, b); });
    }
    for (std::thread &th : pool)
        th.join();
}

/* Small integers, exact in every type: sums 0..16 (their f32 partials stay exact for long,
 * and the check's tolerance covers the rest); min/max/argmax -128..127, so that long rows
 * hold many ties and argmax must give the first. */
void fill(void *buf, rt_op op, rt_type t, unsigned long long n, uint64_t seed, int threads)
{
    parallel(n, threads, [&](unsigned long long a, unsigned long long b) {
        for (unsigned long long i = a; i < b; i++) {
            uint64_t h = data_mix(seed + i);
            int v = op == RT_SUM ? (int)(h % 17) : (int)(h % 256) - 128;
            switch (t) {
            case RT_BF16: ((uint16_t *)buf)[i] = bf16_bits((float)v); break;
            case RT_F16: ((uint16_t *)buf)[i] = f16_bits((float)v); break;
            case RT_F32: ((float *)buf)[i] = (float)v; break;
            case RT_F64: ((double *)buf)[i] = v; break;
            default: ((int32_t *)buf)[i] = v; break;
            }
        }
    });
}


axis_ref compute_reference(const void *buf, rt_op op, rt_type t, const axis_shape &s,
                           int threads)
{
    unsigned long long m = s.outer * s.inner;
    axis_ref r;
    r.v.assign(m, 0.0);
    r.idx.assign(m, -1);
    parallel(m, threads, [&](unsigned long long a, unsigned long long b) {
        for (unsigned long long k = a; k < b; k++) {
            unsigned long long o = k / s.inner, i = k % s.inner;
            double acc = op == RT_SUM ? 0.0 : op == RT_MIN ? INFINITY : -INFINITY;
            long long best = -1;
            for (unsigned long long l = 0; l < s.len; l++) {
                double x = scalar_at(buf, t, (o * s.len + l) * s.inner + i);
                if (op == RT_SUM)
                    acc += x;
                else if (op == RT_MIN)
                    acc = std::min(acc, x);
                else if (x > acc || best < 0)
                    acc = x, best = (long long)l;
            }
            r.v[k] = acc;
            r.idx[k] = best;
        }
    });
    return r;
}

/* Every output against the reference: sums within 1e-6 of the row's sum of |x| (all
 * positive here: the reference itself) plus 1e-6, the rest exact. */
bool check_all(const unsigned char *got, const out_layout &L, rt_op op, const axis_ref &ref,
               const axis_shape &s, std::string *why)
{
    unsigned long long m = s.outer * s.inner;
    for (unsigned long long k = 0; k < m; k++) {
        const unsigned char *p = got + k * L.stride;
        double v = L.has_val ? scalar_at(p + L.val_off, L.res, 0) : ref.v[k];
        bool ok;
        long long idx = -1;
        if (op == RT_SUM)
            ok = fabs(v - ref.v[k]) <= 1e-6 * fabs(ref.v[k]) + 1e-6;
        else
            ok = v == ref.v[k];
        if (op == RT_ARGMAX) {
            if (L.idx_bytes == 8) {
                memcpy(&idx, p + L.idx_off, 8);
            } else {
                int32_t i32;
                memcpy(&i32, p + L.idx_off, 4);
                idx = i32;
            }
            ok = ok && idx == ref.idx[k];
        }
        if (!ok) {
            char b[256];
            unsigned long long o = k / s.inner, i = k % s.inner;
            if (op == RT_ARGMAX)
                snprintf(b, sizeof b, "output %llu (outer %llu, inner %llu): expected %.9g at "
                         "%lld, got %.9g at %lld", k, o, i, ref.v[k], ref.idx[k], v, idx);
            else
                snprintf(b, sizeof b, "output %llu (outer %llu, inner %llu): expected %.9g, "
                         "got %.9g", k, o, i, ref.v[k], v);
            *why = b;
            return false;
        }
    }
    return true;
}

}  // namespace axis_data
