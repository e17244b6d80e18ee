-- stream_space.lua - seg_stream at the shapes its tuned winners have (B=256 R=32 PF=0 and
-- B=512 R=16 PF=1, MINW=24) and two neighbours: the same configs timed by the tuner before and
-- after a change of the template, A B A B (dev_session24.sh walk).
return {
  { family = "seg_stream",
    params = { B = {256, 512}, R = {16, 32}, V = 4, PF = {0, 1}, MINW = 24, WS = 0 },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.B * c.R == 8192
    end },
}
