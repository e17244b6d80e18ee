-- win_space.lua - seg_per STAGE = 2's WIN (kilobytes of shared memory a block's windows take;
-- 40 until the twenty-eighth session) for offsets rand10_50, the profile STAGE = 2 wins: an SM
-- holds 228 KB, 1 KB of it reserved a block, so 40 KB let 5 blocks share it, 36 six, 27
-- eight (B = 256: the 2048 threads an SM runs); a warp's span of 32 segments (about 960
-- elements) fits one window of WIN * 1024 / (B / 32) bytes or takes several. NZ where the
-- glue has rt_fold_nz. For a device step of the next session: each variant's best per case
-- by tools/exp/stage2_sum.py (written after the twenty-eighth session's last GPU run).
local function vec(case) return 16 // case.type_size end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 2, V = {2, 4}, NZ = {0, 1},
               WIN = {20, 24, 27, 32, 36, 40} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case) and (c.NZ == 1) == nz(case)
    end },
}
