// seg_lb_keys.cuh - seg_lb's register path over keys (STAGE = 0), included by seg_lb.cu with
// LAYOUT = 1: a tile's loads (lb_keys_load) apart from its walk (lb_keys_walk). A block that
// loads its next tile into a second lb_ktile before it walks this one (a resident grid, the two
// by turns) was measured on the H200 and not kept: 1.3-1.9x slower at 30M (keys len3, heavy;
// docs/results.md, twenty-ninth session; tools/exp/seg_lb_pf.patch). Uses seg_lb.cu's RT_*
// parameters, LB_T and seg_common.cuh.

/* The register path (STAGE = 0): thread r owns the R consecutive elements a + r*R .. and
 * loads them, their keys, and the two keys at the tile's start (a-1 and a) before it looks
 * at any: R/V vector loads of values and R/KV of keys, all in flight at once, no shared
 * memory. The key before the thread's first element comes from the lane before (shuffle);
 * lane 0 loads it. A whole tile has no bound checks; the last one loads element by element. */
#define LB_KV (RT_V == 1 ? 1 : RT_R % 4 == 0 ? 4 : RT_R % 2 == 0 ? 2 : 1)   /* keys per key load */

/* OST = 1: the outputs a tile owns, keys kbase = key(a-1)+1 .. key(b-1), when there are at most
 * LB_OC of them, go to s_o[key - kbase] and are copied out coalesced after the block scan (one
 * dense store stream instead of scattered 4-byte stores); more (long runs of empty keys) or
 * keys outside that range (unsorted input) are stored directly. Up to 40 KiB, so that a tile of
 * one-element segments (B*R outputs) is staged whole for f64 at B*R = 4096 and f32 at 8192
 * (24 KiB left those to scattered stores: H200 len1 30M f64, 390 us whether OST was 0 or 1;
 * thirtieth session). Three blocks of 512 an SM (MINB = 3) take 120 KiB of the SM's 228.
 * OST = 2: the same, with the stage filled with the empty segment's output before the walk (a
 * barrier after), so that a run of empty keys inside it needs no store: the walk's loop over
 * them, a branch a warp diverges on wherever one of its threads meets an empty segment (the
 * heavy profile: one segment in ten), is taken only for keys outside the stage. */
#define LB_OC (LB_T < 40 * 1024 / sizeof(rt_acc_t) ? LB_T : 40 * 1024 / sizeof(rt_acc_t))

/* A thread's part of a tile as loaded: its R values and keys, the tile's edge keys (a-1, a
 * and, with OST, b-1) and the key before its first element (lane 0). */
struct lb_ktile {
    rt_value_t x[RT_R];
    unsigned int kx[RT_R];
    unsigned int ka1, ka, kb1, kp;
};

/* Tile t's elements [a, b), this thread's first p, and its registers of d as x and kx. */
#define LB_KEYS_POS()                                                         \
    const unsigned long long a = t * LB_T;                                   \
    const unsigned long long b = a + LB_T < n ? a + LB_T : n;                \
    const unsigned long long p = a + (unsigned long long)tid * RT_R;         \
    rt_value_t *const x = d.x;                                               \
    unsigned int *const kx = d.kx

/* Issues tile t's loads into d; nothing waits for them until the walk reads d. */
static __device__ __forceinline__ void lb_keys_load(const rt_value_t *__restrict__ in,
                                                    const unsigned int *__restrict__ keys,
                                                    unsigned long long n, unsigned long long t,
                                                    lb_ktile &d)
{
    const unsigned int tid = threadIdx.x, lane = tid % 32;
    LB_KEYS_POS();
    /* The tile's edge keys (broadcast loads) and the key before this thread's first element
     * (lane 0 only): issued with the others. */
    d.ka1 = a > 0 && a <= n ? keys[a - 1] : 0u;
    d.ka = a < n ? keys[a] : 0u;
#if RT_OST
    d.kb1 = b > a ? keys[b - 1] : 0u;
#else
    d.kb1 = 0u;
#endif
    d.kp = lane == 0 && p > 0 && p <= n ? keys[p - 1] : 0u;
    if (b - a == LB_T) {
#pragma unroll
        for (unsigned int q = 0; q < RT_R / RT_V; q++)
            sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + p + q * RT_V, x + q * RT_V);
#pragma unroll
        for (unsigned int q = 0; q < RT_R / LB_KV; q++)
            sc_ldv<unsigned int, LB_KV, SC_STREAM>(keys + p + q * LB_KV, kx + q * LB_KV);
    } else {
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++) {
            x[k] = (rt_value_t)0;   /* unused past b; no load (with n == 0, in may be NULL) */
            kx[k] = 0u;
            if (p + k < b) {
                x[k] = in[p + k];
                kx[k] = keys[p + k];
            }
        }
    }
}

/* Walks tile t from d (loaded by lb_keys_load): the runs, the block scan, the stores. */
static __device__ __forceinline__ void lb_keys_walk(const unsigned int *__restrict__ keys,
                                                    unsigned long long n, unsigned long long nseg,
                                                    rt_acc_t *__restrict__ out,
                                                    rt_seg_carry *__restrict__ carry,
                                                    unsigned long long t, lb_ktile &d)
{
    const unsigned int tid = threadIdx.x, lane = tid % 32;
    LB_KEYS_POS();
    const unsigned int ka1 = d.ka1, ka = d.ka;
#if RT_OST
    const unsigned int kb1 = d.kb1;
#endif
    unsigned int kp = d.kp;
    /* Clamp every key into [0, nseg) (sc_key's rule). */
    const unsigned int kmax = (unsigned int)(nseg - 1 < 0xffffffffull ? nseg - 1 : 0xffffffffull);
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++)
        kx[k] = kx[k] < kmax ? kx[k] : kmax;
    const long long prevkey = a > 0 && a <= n ? (long long)min(ka1, kmax) : -1;
    const bool first_carry = a < b && a > 0 && (long long)min(ka, kmax) == prevkey;
    if (tid == 0 && !first_carry) {
        rt_seg_carry c;
        c.key = RT_SEG_NONE;
        c.val = rt_identity();
        carry[t] = c;
    }
    {
        const unsigned int up = __shfl_up_sync(SC_FULL, kx[RT_R - 1], 1);
        kp = lane == 0 ? min(kp, kmax) : up;
    }
#if RT_OST
    __shared__ rt_acc_t s_o[LB_OC];
    const unsigned long long kbase = (unsigned long long)(prevkey + 1);
    const unsigned long long klast = min(kb1, kmax);
    /* Block-uniform: every input is a broadcast load. */
    const bool ost = a < b && klast >= kbase && klast - kbase < LB_OC;
    const unsigned long long ospan = ost ? klast - kbase + 1 : 0;
#if RT_OST == 2
    /* Here, with the tile's loads in flight (before them, ptxas spends more registers) */
    for (unsigned int j = tid; j < ospan; j += RT_B)
        s_o[j] = rt_seg_out(rt_identity());
    __syncthreads();   /* the stage is filled before any run is put in it */
#endif
#define LB_PUT(K_, V_)                                                        \
    do {                                                                     \
        const unsigned long long k_ = (K_);                                 \
        if (k_ - kbase < ospan)                                              \
            s_o[k_ - kbase] = rt_seg_out(V_);                                   \
        else if (k_ < nseg)                                                  \
            out[k_] = rt_seg_out(V_);                                           \
    } while (0)
#else
#define LB_PUT(K_, V_)                                                        \
    do {                                                                     \
        const unsigned long long k_ = (K_);                                 \
        if (k_ < nseg)                                                       \
            out[k_] = rt_seg_out(V_);                                           \
    } while (0)
#endif
#define LB_EMIT(K_, V_, F_)                                            \
    do {                                                                     \
        if ((F_) && first_carry) {                                    \
            rt_seg_carry c_;                                                 \
            c_.key = (K_);                                                  \
            c_.val = (V_);                                                    \
            carry[t] = c_;                                                   \
        } else {                                                             \
            LB_PUT(K_, V_);                                                  \
        }                                                                    \
    } while (0)

    bool flag = false;
    rt_acc_t head = rt_identity(), acc = rt_identity();
    unsigned long long hk = 0;
    long long pk = p == a ? prevkey : (long long)kp;
    /* KW = 1: no branch but for empty segments; a key change at i != a closes the run of key
     * pk (the thread's first such run waits for the scan, later ones are stored, predicated);
     * at i == a the tile's first run begins (acc is still the identity, so acc = v there is
     * combine(acc, v)). Fewer instructions where keys change often, more where they seldom
     * do: every element pays for the predicated store. KW = 0: a branch at each change. */
#define LB_EMPTIES()   /* segments pk+1 .. kk-1 have no element: the identity (rule 2) */ \
    for (long long s = pk + 1; s < (long long)kk; s++)                                  \
        LB_PUT((unsigned long long)s, rt_identity())
#if RT_KW == 2
    /* The thread's first element as KW = 1 walks it (pk may be the tile's key before, or -1);
     * then elements 1 .. R-1 in 32 bits, whose key before is the register of the one before. */
#pragma unroll
    for (unsigned int k = 0; k < 1; k++) {
#else
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
#endif
        if (p + k < b) {
            const unsigned long long i = p + k;
            const unsigned int kk = kx[k];
            const rt_acc_t v = rt_lift(x[k], i);
#if RT_KW
            const bool ch = (long long)kk != pk;
            const bool cl = ch && i != a;   /* the run of key pk ends at i-1 */
            if ((long long)kk > pk + 1)
                LB_EMPTIES();
            if (cl && flag)
                LB_PUT((unsigned long long)pk, acc);
            if (cl && !flag) {
                head = acc;
                hk = (unsigned long long)pk;
            }
            flag = flag || cl;
            acc = ch ? v : rt_combine(acc, v);
#else
            if ((long long)kk != pk) {
                LB_EMPTIES();
                if (i != a) {   /* the run of key pk ends at i-1 */
                    if (!flag) {
                        flag = true;
                        head = acc;
                        hk = (unsigned long long)pk;
                    } else {
                        LB_EMIT((unsigned long long)pk, acc, false);
                    }
                    acc = v;
                } else {
                    acc = rt_combine(acc, v);
                }
            } else {
                acc = rt_combine(acc, v);
            }
#endif
            pk = kk;
        }
    }
#undef LB_EMPTIES
#if RT_KW == 2
    /* KW = 2: elements 1 .. R-1 with 32-bit keys and no branch but for empty segments: the
     * key before element k is kx[k-1] (element k-1 is in the tile when k is), so a change is
     * one 32-bit compare and never at the tile's first element; a store is two predicated
     * ones (the tile's shared outputs, or global memory where nseg > 0: every key is clamped
     * to at most nseg - 1). A whole tile has no bound tests (the walk twice, whole and
     * partial). A run's elements after its first fold by sc_fold_step<true>: the glue's
     * rt_fold_nz where it has one (float min and max; acc holds an element from the thread's
     * first on: a lift, or a lift combined), else lift and combine. The same outputs as KW = 1
     * for sorted keys (unsorted: stores in range all the same, their values unspecified as for
     * every walk). */
    {
        const bool any = nseg > 0;
#if RT_OST
        /* kbase is 2^32 only when the key before the tile is 0xffffffff: then ospan is 0 */
        const unsigned int kb32 = (unsigned int)kbase, osp32 = (unsigned int)ospan;
#define LB_PUTC(C_, K_, V_)                                                   \
    do {                                                                     \
        const unsigned int k_ = (K_);                                        \
        const bool s_ = k_ - kb32 < osp32;                                   \
        const rt_acc_t o_ = rt_seg_out(V_);                                  \
        if ((C_) && s_)                                                      \
            s_o[k_ - kb32] = o_;                                             \
        if ((C_) && !s_ && any)                                              \
            out[k_] = o_;                                                    \
    } while (0)
#else
#define LB_PUTC(C_, K_, V_)                                                   \
    do {                                                                     \
        const unsigned int k_ = (K_);                                        \
        if ((C_) && any)                                                     \
            out[k_] = rt_seg_out(V_);                                        \
    } while (0)
#endif
#if RT_OST == 2
        /* Staged (ost), keys pq+1 .. kk-1 lie in the stage when the keys are sorted (pq >=
         * kbase - 1, kk <= klast), which was filled before the walk: nothing to store (no
         * 32-bit gap exceeds gmax then). Unsorted keys, whose results are unspecified, may
         * leave such outputs unwritten (docs/segmented.md). A bound, not a flag: on a flag
         * ptxas split the loop in two, at 14 more registers. */
        const unsigned int gmax = ost ? 0xffffffffu : 1u;
#else
        const unsigned int gmax = 1u;
#endif
#define LB_KW2_ELEM(K_)                                                       \
    do {                                                                     \
        const unsigned int kk_ = kx[K_], pq_ = kx[(K_) - 1];                 \
        const rt_acc_t v_ = rt_lift(x[K_], p + (K_));                        \
        const bool ch_ = kk_ != pq_;                                         \
        if (kk_ > pq_ && kk_ - pq_ > gmax) {                                \
            /* empty segments pq+1 .. kk-1 */                                \
            _Pragma("unroll 1")                                              \
            for (unsigned int s_ = pq_ + 1; s_ < kk_; s_++)                  \
                LB_PUTC(true, s_, rt_identity());                            \
        }                                                                    \
        LB_PUTC(ch_ && flag, pq_, acc);                                      \
        head = ch_ && !flag ? acc : head;                                    \
        hk = ch_ && !flag ? (unsigned long long)pq_ : hk;                    \
        flag = flag || ch_;                                                  \
        acc = ch_ ? v_ : sc_fold_step<true>(acc, x[K_], p + (K_));            \
    } while (0)
        if (b - a == LB_T) {
#pragma unroll
            for (unsigned int k = 1; k < RT_R; k++)
                LB_KW2_ELEM(k);
            pk = (long long)kx[RT_R - 1];
        } else if (p < b) {
#pragma unroll
            for (unsigned int k = 1; k < RT_R; k++)
                if (p + k < b) {
                    LB_KW2_ELEM(k);
                    pk = (long long)kx[k];
                }
        }
#undef LB_KW2_ELEM
#undef LB_PUTC
    }
#endif

    bool before, total_f;
    rt_acc_t total;
    const rt_acc_t excl = sc_block_scan<RT_B>(flag, acc, rt_identity(), before, total, total_f);
    if (flag)
        LB_EMIT(hk, rt_combine(excl, head), !before);
    /* The tile's last run: its key is the last thread's pk when the tile is whole, else
     * the key of element b-1 (already clamped by the thread that holds it). */
    if (a < b && p < b && p + RT_R >= b)
        LB_EMIT((unsigned long long)pk, total, !total_f);
#if RT_OST
    if (ost) {
        __syncthreads();   /* s_o is complete */
        for (unsigned int j = tid; j < ospan; j += RT_B)
            out[kbase + j] = s_o[j];
    }
#endif
#undef LB_EMIT
#undef LB_PUT
    /* After the last element: the segments no element names (all of them when n == 0). */
    if (b == n) {
        const unsigned long long lo = n > 0 ? (unsigned long long)sc_key(keys, n - 1, n, nseg) + 1 : 0;
        sc_fill(out, lo, nseg);
    }
}

static __device__ __forceinline__ void lb_keys_reg(const rt_value_t *__restrict__ in,
                                                   const unsigned int *__restrict__ keys,
                                                   unsigned long long n, unsigned long long nseg,
                                                   rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry,
                                                   unsigned long long t)
{
    lb_ktile d;
    lb_keys_load(in, keys, n, t, d);
    lb_keys_walk(keys, n, nseg, out, carry, t, d);
}
#undef LB_KEYS_POS
