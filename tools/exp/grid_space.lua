-- grid_space.lua - experiment (twenty-first session): gridstride with 16-byte vectors, 2 or 4
-- in flight per thread, from half to twice the threads an SM holds, for the large inputs of
-- issue 15 retuned under the balanced grid of runtime/plan.c (grid_for: the same rounds over
-- the tiles, fewer than R blocks idle in the last).

local pow2 = redtune.pow2

return {
  { family = "gridstride",
    params = { B = pow2(128, 1024), V = {4, 8}, U = {2, 4}, G = pow2(1, 16) },
    constraint = function(c, dev, case)
      local threads = c.B * c.G
      return c.B <= dev.max_threads_per_block
        and c.V * case.type_size == 16
        and threads >= dev.max_threads_per_sm // 2
        and threads <= 2 * dev.max_threads_per_sm
    end },
}
