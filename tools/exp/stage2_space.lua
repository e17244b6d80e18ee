-- stage2_space.lua - the twenty-second session's question (issue 14, offsets rand10_50 and
-- len3): seg_per's thread per segment unstaged (STAGE = 0), staged with each lane walking its
-- own segment (STAGE = 1), and staged with the chunk split evenly between the lanes (STAGE =
-- 2), side by side at two block sizes; plus the families that won the other profiles, so that
-- one tuning run ranks them all on one machine.
return {
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 0, LONG = {0, 64}, V = {1, 4} } },
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = {1, 2}, V = {4, 8, 16} },
    constraint = function(c, dev, case)
      return c.B * c.V * case.type_size * 33 / 32 + c.B * 8 <= 44 * 1024
    end },
  { family = "seg_lb",
    params = { B = 512, R = 16, V = {2, 4}, STAGE = 0, PERSIST = 0, MP = 0, FAST = {0, 1} },
    constraint = function(c, dev, case) return c.V * case.type_size == 16 end },
}
