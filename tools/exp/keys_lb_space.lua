-- keys_lb_space.lua - seg_lb over keys at the H100's shipped winners' shapes (B=512, R 8 or 16,
-- STAGE=0, OST 0 or 1), V 2 or 4, the keys walk with a branch at each key change (KW = 0) and
-- without (KW = 1): dev_session24.sh iter2 (run 4 compared two binaries, the second with the
-- walk of KW = 1 unconditional; KW = 0 and 1 are that comparison in one binary).
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = 512, R = {8, 16}, V = {2, 4}, STAGE = 0, OST = {0, 1}, KW = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V * case.type_size <= 16
    end },
}
