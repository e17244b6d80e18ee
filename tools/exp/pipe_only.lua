-- pipe_only.lua - seg_pipe alone at the shapes that won len3 and rand10_50 in runs 1-2 of the
-- twenty-sixth session, so that redtune_bench runs it under Nsight Compute
-- (tools/exp/dev_session26.sh `pipe2`).
return {
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = {1, 4}, V = 4, RV = 1, KB = 16 },
    constraint = function(c, dev, case) return case.layout == "offsets" and (c.B == 128) == (c.SEGS == 1) end },
  { family = "seg_pipe", params = { B = 128, SEGS = 1, V = 4, RV = 1, KB = 8 },
    constraint = function(c, dev, case) return case.layout == "offsets" end },
}
