-- stream_ch_space.lua - the shipped space's seg_stream entry (lua/spaces/segmented_ship.lua)
-- with CH 0, 1, 2, 4: the resident grid against a block per CH tiles a warp (twenty-fourth
-- session, dev_session24.sh chunk).
local function lb_vec(case)
  return math.min(4, 16 // case.type_size)
end
return {
  { family = "seg_stream",
    params = { B = {256, 512}, R = {16, 32}, V = {2, 4}, WS = 0, MINW = {0, 24}, PF = {0, 1},
               CH = {0, 1, 2, 4} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.B * c.R <= 8192
             and c.B <= dev.max_threads_per_block
    end },
}
