"""walk_check.py - the host check of the twelfth session (issue 16): the index arithmetic of the
split walks in templates/axis_rows.cu (ar_reduce, IL = 0 contiguous parts from ax_part and
IL = 1 interleaved rounds) and templates/axis_cols.cu (IL = 2, rows interleaved over the splits
and row groups), transcribed line by line, must visit every element (rows) or row (columns)
of len exactly once over all splits and lanes (row groups), for random len, S, L, V, U, TY.

    python3 tools/exp/walk_check.py [CASES]     (default 3000; exit 1 on the first miss)
"""
import random
import sys

AX_ALIGN = 16   # axis_common.cuh


def ax_part(n, s, S):
    if S <= 1:
        return 0, n
    per = ((n + S - 1) // S + AX_ALIGN - 1) // AX_ALIGN * AX_ALIGN
    lo = min(per * s, n)
    return lo, (n if n - lo < per else lo + per)


def rows_walk(n, s, S, L, VV, U, il):
    """The elements lane j = 0..L-1 of split s reads (ar_output + ar_reduce)."""
    STEP, ROUND = L * VV, L * VV * U
    IL = il and S > 1
    lo, hi = (0, n) if IL else ax_part(n, s, S)
    got = []
    if hi <= lo:
        return got
    rounds = (hi - lo) // ROUND
    nfull = ((rounds - s + S - 1) // S if rounds > s else 0) if IL else rounds
    rstep = S * ROUND if IL else ROUND
    for j in range(L):
        l = lo + (s * ROUND if IL else 0) + j * VV
        for _ in range(nfull):
            got += [l + u * STEP + e for u in range(U) for e in range(VV)]
            l += rstep
        if (rounds % S == s and lo + rounds * ROUND < hi) if IL else lo + nfull * ROUND < hi:
            if IL:
                l = lo + rounds * ROUND + j * VV
            got += [l + u * STEP + e for u in range(U) if l + u * STEP < hi for e in range(VV)]
    return got


def cols_il2_rows(n, s, S, TY):
    """The rows of len that row groups 0..TY-1 of split s walk (axis_cols, IL = 2)."""
    got = []
    step = S * TY
    for ty in range(TY):
        first = s * TY + ty
        rb = (n - first + step - 1) // step if first < n else 0
        got += [first + l * step for l in range(rb)]
    return got


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    rng = random.Random(1)
    for _ in range(cases):
        L, VV, U = rng.choice([1, 2, 8, 32, 64]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4])
        S, il = rng.randint(1, 40), rng.choice([0, 1])
        n = rng.randint(0, 5000)
        n -= n % VV   # vector loads need len % V == 0
        got = sorted(x for s in range(S) for x in rows_walk(n, s, S, L, VV, U, il))
        if got != list(range(n)):
            sys.exit(f"axis_rows: len {n} S {S} L {L} V {VV} U {U} IL {il}: not every element once")
        TY = rng.choice([1, 2, 4, 8, 16, 32])
        got = sorted(x for s in range(S) for x in cols_il2_rows(n, s, S, TY))
        if got != list(range(n)):
            sys.exit(f"axis_cols IL=2: len {n} S {S} TY {TY}: not every row once")
    print(f"walk_check: {cases} cases, every element and row once")


if __name__ == "__main__":
    main()
