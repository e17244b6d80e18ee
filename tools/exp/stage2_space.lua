-- stage2_space.lua - the twenty-second session's question (issue 14, offsets rand10_50 and
-- len3): seg_per's thread per segment unstaged (STAGE = 0), staged in chunks of 32 * V with
-- each lane walking its own segment (STAGE = 1), and with the warp's whole span copied into
-- shared memory by cp.async (STAGE = 2), side by side; plus seg_lb MP=0, so that one tuning
-- run ranks them on one machine. (Run 1 of the session timed an earlier STAGE = 2, the chunk
-- split evenly between the lanes, commit 77eced8, taken out again.)
return {
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 0, LONG = {0, 64}, V = {1, 4} },
    constraint = function(c, dev, case) return c.V == 1 or c.V * case.type_size == 16 end },
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 1, V = {8, 16} },
    constraint = function(c, dev, case) return c.B * c.V * case.type_size <= 44 * 1024 end },
  { family = "seg_per",
    params = { B = {128, 256, 512}, LANES = 1, STAGE = 2, V = {1, 2, 4} },
    constraint = function(c, dev, case)
      return c.V * case.type_size == 16 or c.V * case.type_size == 8
    end },
  { family = "seg_lb",
    params = { B = 512, R = 16, V = {2, 4}, STAGE = 0, PERSIST = 0, MP = 0, FAST = {0, 1} },
    constraint = function(c, dev, case) return c.V * case.type_size == 16 end },
}
