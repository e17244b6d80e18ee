-- pipe_h.lua - seg_pipe at the shapes the H200's len3 and len1 rows ship (twenty-sixth
-- session, run 4) with H (elements folded without a branch first) 0, 2 and 4: which H to
-- keep (tools/exp/dev_session26.sh `final`).
return {
  { family = "seg_pipe",
    params = { B = {128, 256}, SEGS = 8, V = 4, RV = 1, KB = {8, 12, 16}, H = {0, 2, 4} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and case.type_size == 4
             and ((c.B == 128 and c.KB >= 12) or (c.B == 256 and c.KB == 8))
    end },
}
