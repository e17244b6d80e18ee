-- products of 2x2 matrices mod 2^16, packed in a u64 as p | q << 16 | r << 32 | s << 48 for
-- [[p q] [r s]]: associative, not commutative, yet claimed commutative. The families that
-- combine out of order compute wrong results, which the tuner must record as 'wrong', never
-- as best.
return {
  name = "mat2_claims",
  type = "u64",
  commutative = true,
  identity = "0x0001000000000001ULL",
  combine = [[
    unsigned int ap = a & 0xffff, aq = (a >> 16) & 0xffff, ar = (a >> 32) & 0xffff, as = a >> 48;
    unsigned int bp = b & 0xffff, bq = (b >> 16) & 0xffff, br = (b >> 32) & 0xffff, bs = b >> 48;
    unsigned long long p = (ap * bp + aq * br) & 0xffff, q = (ap * bq + aq * bs) & 0xffff;
    unsigned long long r = (ar * bp + as * br) & 0xffff, s = (ar * bq + as * bs) & 0xffff;
    return p | q << 16 | r << 32 | s << 48;
  ]],
  -- p and s odd, q and r even: an odd determinant, so products never collapse to 0
  sample = function(i, r)
    return (r | 0x0001000000000001) & ~0x0000000100010000
  end,
}
