#!/usr/bin/env python3
"""ost_model.py [TRIALS] [SEED] - a CPU model of seg_mark's OST = 1 bookkeeping (templates/
seg_mark.cu: sm_entry, sm_walk_ost, the overflow walk, sm_scan's results, the head fix, the
pending copy-out and the chunk's end), run tile by tile with the threads of a block in
lockstep phases, against a plain per-segment reference, on random segmentations (runs of empty
segments, long segments, segments of one element, elements before offsets[0] and from
offsets[nseg] on) and small shapes (B, R, CH, and buffers smaller than a tile, so that dense
tiles take the overflow walk). A sum of random integers (exact; identity 0) and a min (identity
+inf) are checked. It checks the design of the slots, not the CUDA code: no races, no window
rounds (a tile's starts are all its entries), commutative operators only (tiles without a start
fold into the open run). Exit status 1 on the first mismatch, with the case printed.
"""
import random
import sys

INF = float("inf")


def seg_mark_ost(x, offs, B, R, CH, NO, op, ident):
    """out[0..nseg) as the kernel and rt_seg_fix would leave them."""
    n, nseg = len(x), len(offs) - 1
    T = B * R
    out = [None] * nseg          # None: never written (a bug if it stays)
    carries = []                 # (block, key, value)
    span = CH * T
    nblocks = max(1, -(-n // span))

    def off(w):                  # offsets[w] clamped into [0, n], +inf past nseg
        return min(max(offs[w], 0), n) if w <= nseg else INF

    for g in range(nblocks):
        c0, c1 = min(g * span, n), min(g * span + span, n)
        s_lo = next((w for w in range(nseg + 1) if off(w) >= c0), nseg + 1)
        s_start0 = s_lo <= nseg and off(s_lo) <= c0
        k0 = s_lo - 1
        run, open_first, first = ident, True, None
        bufs = [[None] * (NO + 1), [None] * (NO + 1)]
        par, ps, pn = 0, 0, 0
        a = c0
        while a < c1:
            b = min(a + T, c1)
            ln = b - a
            if off(s_lo) >= b:   # no start: the flat path (commutative)
                for p in range(a, b):
                    run = op(run, x[p])
                a = b
                continue
            lim = nseg - s_lo if nseg > s_lo else 0
            ob = bufs[par]
            mark = [None] * T
            head = [0] * B
            i = 0
            while True:   # every entry inside the tile (the window and the global rounds)
                w = s_lo + i
                ro = off(w) - a if i <= lim and off(w) >= a else INF
                if ro >= ln:
                    break
                rn = off(w + 1) - a if i + 1 <= lim and off(w + 1) >= a else INF
                empty = i < lim and rn <= ro
                if empty:
                    if i < NO:
                        ob[i] = ident
                    else:
                        out[s_lo + i] = ident
                else:
                    mark[ro] = i
                    if rn < ln and rn // R != ro // R:
                        head[rn // R] = i + 1
                i += 1
            c = i
            # the pending outputs of the last tile with starts (after the first barrier)
            for j in range(pn):
                out[ps + j] = bufs[par ^ 1][j]
            fit = c <= NO
            flags, tails, heads, h0s = [], [], [], []
            for t in range(B):
                hk = head[t]
                h0 = hk - 1 if hk > 0 else NO
                acc, hd, flag, cur = ident, ident, False, h0
                for k in range(R):
                    p = t * R + k
                    if p >= ln:
                        break
                    v = x[a + p]
                    s = mark[p] is not None
                    if fit:
                        if s:
                            ob[cur] = acc
                    elif s and flag:
                        if cur < NO:
                            ob[cur] = acc
                        elif cur < lim:
                            out[s_lo + cur] = acc
                    if s and not fit and not flag:
                        hd = acc
                    flag = flag or s
                    if s:
                        cur = mark[p]
                    acc = v if s else op(acc, v)
                if fit:
                    flag = cur != h0
                flags.append(flag)
                tails.append(acc)
                heads.append(hd)
                h0s.append((hk, h0))
            # the segmented scan: init run; excl before each thread, total at the end
            v, f = run, False
            excl, before = [], []
            for t in range(B):
                excl.append(v)
                before.append(f)
                v = tails[t] if flags[t] else op(v, tails[t])
                f = f or flags[t]
            total, total_f = v, f
            for t in range(B):
                if not flags[t]:
                    continue
                hk, h0 = h0s[t]
                hdv = ob[h0] if fit else heads[t]
                hv = op(excl[t], hdv)
                if before[t]:
                    assert hk > 0, "a start below without a head record"
                    hi = hk - 1
                    if hi < NO:
                        ob[hi] = hv
                    elif s_lo + hi < nseg:
                        out[s_lo + hi] = hv
                else:
                    assert hk == 0, "a head record and no start below"
                    if open_first:
                        first = hv
                    elif 0 <= s_lo - 1 < nseg:
                        out[s_lo - 1] = hv
            pn0 = c - 1 if c else 0
            pn0 = min(pn0, lim)
            ps, pn = s_lo, min(pn0, NO)
            run = total
            open_first = open_first and not total_f
            s_lo += c
            par ^= 1
            a = b
        # the chunk's end
        for j in range(pn):
            out[ps + j] = bufs[par ^ 1][j]
        first_v = run if open_first else first
        if c0 < c1 and c0 > 0 and not s_start0 and 0 <= k0 < nseg:
            carries.append((g, k0, first_v))
        if not open_first and 0 <= s_lo - 1 < nseg:
            out[s_lo - 1] = run
        if c1 == n and (c0 < c1 or g == 0):
            for s in range(min(s_lo, nseg), nseg):
                out[s] = ident
    for _, key, val in carries:   # rt_seg_fix, in block order
        out[key] = op(out[key], val)
    return out


def reference(x, offs, op, ident):
    n = len(x)
    res = []
    for s in range(len(offs) - 1):
        lo, hi = min(max(offs[s], 0), n), min(max(offs[s + 1], 0), n)
        v = ident
        for p in range(lo, hi):
            v = op(v, x[p])
        res.append(v)
    return res


def segmentation(rng, n):
    """Offsets over [0, n): a mix of profiles (a random choice each run of segments)."""
    offs = [rng.choice([0, 0, 0, rng.randrange(0, 5)])]
    while offs[-1] < n:
        kind = rng.random()
        if kind < 0.15:
            k = rng.randrange(1, 40)   # a run of empty segments
            offs += [offs[-1]] * k
        elif kind < 0.35:
            offs.append(offs[-1] + 1)
        elif kind < 0.45:
            offs.append(offs[-1] + rng.randrange(50, 400))
        else:
            offs.append(offs[-1] + int(rng.paretovariate(1.2)))
    offs[-1] = n
    if rng.random() < 0.5:   # elements from offsets[nseg] on: no segment's
        offs[-1] = max(offs[-2] if len(offs) > 1 else 0, n - rng.randrange(0, 4))
    if rng.random() < 0.3:
        offs += [offs[-1]] * rng.randrange(1, 30)   # empty segments at the end
    return offs


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    ops = [("sum", lambda u, v: u + v, 0), ("min", min, INF)]
    for trial in range(trials):
        B = rng.choice([2, 4, 8])
        R = rng.choice([1, 2, 3, 4, 8])
        CH = rng.choice([1, 2, 5])
        T = B * R
        NO = rng.choice([T, T, max(0, T // 2), max(0, T // 4), 1, 0])
        n = rng.randrange(0, 6 * CH * T + 7)
        x = [rng.randrange(-1000, 1000) for _ in range(n)]
        offs = segmentation(rng, n)
        for name, op, ident in ops:
            got = seg_mark_ost(x, offs, B, R, CH, NO, op, ident)
            want = reference(x, offs, op, ident)
            if got != want:
                bad = [s for s in range(len(want)) if got[s] != want[s]]
                print("mismatch: trial %d %s B=%d R=%d CH=%d NO=%d n=%d nseg=%d: segments %s"
                      % (trial, name, B, R, CH, NO, n, len(offs) - 1, bad[:10]))
                print("offsets", offs[:60])
                return 1
    print("%d trials, sum and min: every segment as the reference" % trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
