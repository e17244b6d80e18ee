-- mark_sweep.lua - seg_mark's heavy winner (B=128 R=16 V=4 CH=8 J=4 PF=1) and its neighbours:
-- blocks of 256, CH 4 and 16, J 2, MINW 24 (80 registers: 7 blocks of 128 a SM instead of 5).
-- For tools/exp/dev_session25.sh `f64`, offsets heavy min f32 at 30M.
return {
  { family = "seg_mark",
    params = { B = {128, 256}, R = 16, V = 4, CH = {4, 8, 16}, J = {2, 4}, PF = 1, MINW = {0, 24} },
    constraint = function(c, dev, case) return case.layout == "offsets" end },
}
