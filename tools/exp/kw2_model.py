#!/usr/bin/env python3
"""kw2_model.py [TRIALS] - a model of one thread's keys walk in templates/seg_lb_keys.cuh, KW = 1
against KW = 2 (min as the operator), over random threads: R elements (some past the tile's
end), sorted keys with gaps (empty segments) and, one time in ten, shuffled ones, keys near
0 and near 2^32 - 1, a key before the thread of -1 (the first tile) or below its first key,
the tile's first element or not. Both walks must store the same segments in the same order
and leave the same flag, head, head key, accumulator and last key for the block scan. It
checks the reasoning behind KW = 2 (a key change after a thread's first element is
kx[k] != kx[k-1]; the empty segments' test in 32 bits), not the CUDA code: the harness and
the GPU tests do that. Standard library only."""
import random
import sys

INF = float("inf")   # min's identity


def kw1(x, kx, pk, first_is_a, nvalid, put):
    flag, head, acc, hk = False, INF, INF, 0
    for k in range(nvalid):
        kk, v = kx[k], x[k]
        ch = kk != pk
        cl = ch and not (first_is_a and k == 0)
        if kk > pk + 1:
            for s in range(pk + 1, kk):
                put(s, INF)
        if cl and flag:
            put(pk, acc)
        if cl and not flag:
            head, hk = acc, pk
        flag = flag or cl
        acc = v if ch else min(acc, v)
        pk = kk
    return flag, head, acc, hk, pk


def kw2(x, kx, pk, first_is_a, nvalid, put):
    if nvalid == 0:
        return False, INF, INF, 0, pk
    # the first element as KW = 1 walks it
    flag, head, acc, hk, pk = kw1(x, kx, pk, first_is_a, 1, put)
    for k in range(1, nvalid):
        kk, pq, v = kx[k], kx[k - 1], x[k]
        ch = kk != pq
        if kk > pq and (kk - pq) % 2**32 > 1:   # 32-bit: kk_ > pq_ && kk_ - pq_ > 1u
            for s in range(pq + 1, kk):
                put(s, INF)
        if ch and flag:
            put(pq, acc)
        if ch and not flag:
            head, hk = acc, pq
        flag = flag or ch
        acc = v if ch else min(acc, v)
        pk = kk
    return flag, head, acc, hk, pk


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    rnd = random.Random(1)
    for _ in range(trials):
        r = rnd.randint(1, 8)
        nvalid = rnd.randint(0, r)
        base = rnd.choice([0, 5, 2**32 - 6])
        keys = sorted(min(base + rnd.randint(0, 6), 2**32 - 1) for _ in range(r))
        if rnd.random() < 0.1:
            rnd.shuffle(keys)
        x = [rnd.random() for _ in range(r)]
        below = min(keys) - rnd.randint(0, 2)
        pk = rnd.choice([-1, max(-1, below)]) if base == 0 else below
        first_is_a = rnd.random() < 0.3
        o1, o2 = [], []
        r1 = kw1(x, keys, pk, first_is_a, nvalid, lambda s, v: o1.append((s, v)))
        r2 = kw2(x, keys, pk, first_is_a, nvalid, lambda s, v: o2.append((s, v)))
        if r1 != r2 or o1 != o2:
            print("differ: keys %s, pk %d, first %s, %d valid: %s %s / %s %s"
                  % (keys, pk, first_is_a, nvalid, r1, o1, r2, o2))
            return 1
    print("%d threads: KW = 1 and KW = 2 agree" % trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
