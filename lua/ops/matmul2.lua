-- matmul2.lua - the product of 2x2 matrices modulo 2^16: an associative operator that does
-- not commute, with a struct accumulator. Only the families that keep the order reduce it.
--
-- An element packs the matrix [[a, b], [c, d]] in a u64, 16 bits each: a | b << 16 |
-- c << 32 | d << 48. The map unpacks it into the accumulator; the reduction of M0, M1, ...,
-- Mn-1 is the product M0 M1 ... Mn-1 (mod 2^16), the accumulator itself (no finalize).
--
--   redtune --op-file lua/ops/matmul2.lua --family diffwarps,seg_lb --sizes 1M

return {
  name = "matmul2",
  type = "u64",
  commutative = false,

  acc = "struct { unsigned short a, b, c, d; }",

  map = [[
    rt_acc_t m;
    m.a = (unsigned short)x;
    m.b = (unsigned short)(x >> 16);
    m.c = (unsigned short)(x >> 32);
    m.d = (unsigned short)(x >> 48);
    return m;
  ]],

  -- The unit matrix.
  identity = "{1, 0, 0, 1}",

  -- a times b, a the lower indices; products in 32 bits, kept modulo 2^16.
  combine = [[
    rt_acc_t r;
    r.a = (unsigned short)((unsigned)a.a * b.a + (unsigned)a.b * b.c);
    r.b = (unsigned short)((unsigned)a.a * b.b + (unsigned)a.b * b.d);
    r.c = (unsigned short)((unsigned)a.c * b.a + (unsigned)a.d * b.c);
    r.d = (unsigned short)((unsigned)a.c * b.b + (unsigned)a.d * b.d);
    return r;
  ]],

  -- Test data: matrices of odd determinant (a, d odd, b even), invertible modulo 2^16, so
  -- that long products never collapse to zero and every element keeps its weight.
  sample = function(i, r)
    local a = (r & 0xffff) | 1
    local b = (r >> 16) & 0xfffe
    local c = (r >> 32) & 0xffff
    local d = (r >> 48) | 1
    return a | (b << 16) | (c << 32) | (d << 48)
  end,
}
