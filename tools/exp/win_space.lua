-- win_space.lua - seg_per STAGE = 2's WIN (kilobytes of shared memory a block's windows take;
-- 40 until the twenty-eighth session) and GRID (blocks an SM of a grid that loops over the
-- tiles, the next tile's offsets loaded ahead; 0: a block a tile, as before) for offsets
-- rand10_50, the profile STAGE = 2 wins. An SM holds 228 KB, 1 KB of it reserved a block, so
-- 40 KB let 5 blocks share it, 36 six, 27 eight (B = 256: the 2048 threads an SM runs); a
-- warp's span of 32 segments (about 960 elements) fits one window of WIN * 1024 / (B / 32)
-- bytes or takes several. A block a tile leaves a last wave part empty (1M segments are 4096
-- tiles of 256: 6.2 waves of 660). NZ where the glue has rt_fold_nz. For
-- tools/exp/dev_session29.sh `win` (written after the twenty-eighth session's last GPU run):
-- each variant's best per case by tools/exp/stage2_sum.py.
local function vec(case) return 16 // case.type_size end
local function nz(case)
  return (case.op == "min" or case.op == "max") and (case.type == "f32" or case.type == "f64")
end
return {
  { family = "seg_per",
    params = { B = {128, 256}, LANES = 1, STAGE = 2, V = {2, 4}, NZ = {0, 1},
               WIN = {24, 27, 32, 36, 40}, GRID = {0, 4, 5, 6, 8} },
    constraint = function(c, dev, case)
      return case.layout == "offsets" and c.V == vec(case) and (c.NZ == 1) == nz(case)
    end },
}
