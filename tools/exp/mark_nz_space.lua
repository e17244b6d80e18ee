-- mark_nz_space.lua - seg_mark's NZ (a thread's elements after its first that continue a run
-- folded by the glue's rt_fold_nz: float min and max, fmin alone an element), NZ 0 and 1
-- side by side at the shipped space's seg_mark shapes (B = 128, R 8 and 16,
-- MINW 0 and 32). For tools/exp/dev_session33.sh `marknz` (written after the thirty-third
-- session's last GPU run): each config's time by NZ from the run's CSV (tools/exp/nz_sum.py).
-- The thirty-fourth session's MP (the marks padded against bank conflicts) 0 and 1 beside NZ,
-- and J 4 and 8 (a tile of the heavy tail's dense parts holds more starts than J = 4's 496
-- window entries, and the rest come from global memory, two barriers a round of B), R = 16
-- and CH = 8 only (the heavy rows' winners); tools/exp/nz_sum.py CSV MP (or J... by hand)
-- sets MP side by side.
local function lb_vec(case) return case.type_size >= 8 and 2 or 4 end
local function nz_ok(c, case)
  return c.NZ == 0 or ((case.op == "min" or case.op == "max")
                       and (case.type == "f32" or case.type == "f64"))
end
return {
  { family = "seg_mark",
    params = { B = 128, R = 16, V = {2, 4}, CH = 8, J = {4, 8}, PF = 1, MINW = {0, 32},
               NZ = {0, 1}, MP = {0, 1} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == lb_vec(case) and c.R % c.V == 0 and nz_ok(c, case)
    end },
}
