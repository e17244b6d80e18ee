-- wide_u_space.lua - experiment (twentieth session, run 6): gridstride with the widest
-- vector and 4 or 8 of them in flight per thread (up to 128 bytes; the default space stops at
-- 64), for the large inputs of the operators whose accumulator holds more than one register
-- (argmax, var_mean) and whose winners run fewer blocks per SM than sum's (argmax f32 2^26:
-- B=512 G=2 at 92.35 us, sum f32 B=512 G=8 at 90.27).

local pow2 = redtune.pow2

return {
  { family = "gridstride",
    params = { B = pow2(128, 1024), V = {4, 8}, U = {4, 8}, G = pow2(1, 16) },
    constraint = function(c, dev, case)
      local bytes = c.V * case.type_size
      local threads = c.B * c.G
      return c.B <= dev.max_threads_per_block
        and bytes == 16
        and threads >= dev.max_threads_per_sm // 2
        and threads <= 2 * dev.max_threads_per_sm
    end },
}
