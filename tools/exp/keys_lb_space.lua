-- keys_lb_space.lua - seg_lb over keys at the H100's shipped winners' shapes (B=512, R 8 or 16,
-- STAGE=0, OST 0 or 1) and V 2 or 4: the same configs timed by the tuner before and after a
-- change of the keys walk, A B A B (dev_session24.sh iter2).
return {
  { family = "seg_lb",
    params = { LAYOUT = 1, B = 512, R = {8, 16}, V = {2, 4}, STAGE = 0, OST = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "keys" and c.V * case.type_size <= 16
    end },
}
