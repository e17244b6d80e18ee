-- axis_balance_space.lua - experiment space (forty-sixth session, issue 16): split counts that
-- fill the GPU evenly. plan.c splits a tile S = min(ceil(fit / tiles), len / CHUNK) ways, so a
-- CHUNK just under len / S picks S. On the H100 (132 SMs) [16 x 2^22] rows take 16 S blocks,
-- an even number an SM for S = 33, 66, 99, 132 (the powers of two 32, 64, 128 beside them);
-- [65536 x 128] columns with one tile of 128 columns (CV = 4) S = 132, 264, with two (CV = 2)
-- S = 66, 132 (beside 64, 128, 256); [4096 x 4096] columns with 32 tiles (CV = 4) S = 33,
-- 66; [64 x 2048 x 512] bf16 with 256 tiles (CV = 4) S = 33 (16 even waves of 528 blocks),
-- beside the few splits that fill the GPU once and unsplit. Timed beside the shipped
-- winners' configs (V and CV narrower than the widest too):
--   build/redtune --axis --shapes 16,4194304,1 --op sum --type f32 --space tools/exp/axis_balance_space.lua
--   build/redtune --axis --shapes 1,65536,128 --op sum --type f32 --space tools/exp/axis_balance_space.lua
--   build/redtune --axis --shapes 1,4096,4096 --op sum --type f32 --space tools/exp/axis_balance_space.lua
--   build/redtune --axis --shapes 64,2048,512 --op sum --type bf16 --space tools/exp/axis_balance_space.lua
local size = case.type_size
local len = case.len or 1
local V = 16 // size
-- CHUNK values with len // CHUNK == s for each s
local function chunks(list)
  local t = {}
  for _, s in ipairs(list) do t[#t + 1] = len // s end
  return t
end
if (case.inner or 1) == 1 then
  return {
    { family = "axis_rows",
      params = { B = { 128, 256 }, L = { 128, 256 }, V = { V // 2, V }, U = { 2, 4 },
                 CHUNK = chunks({ 32, 33, 64, 66, 99, 128, 132 }), IL = 1 },
      constraint = function(c, dev, case) return c.L == c.B end },
  }
end
-- the split counts offered by shape (len); 0 is unsplit
local SPLITS = {
  [65536] = { 64, 66, 128, 132, 256, 264 },
  [4096] = { 0, 2, 4, 8, 16, 32, 33, 66 },
  [2048] = { 0, 2, 3, 4, 8, 16, 33 },
}
local CV = { 1, 2, 4, 8 }
if size ~= 2 then CV = { 1, 2, 4 } end
local list, t = SPLITS[len] or { 0 }, {}
for _, s in ipairs(list) do t[#t + 1] = s == 0 and 0 or len // s end
return {
  { family = "axis_cols",
    params = { B = { 256, 512, 1024 }, TX = 32, CV = CV, U = { 2, 4 }, IL = { 0, 2 }, CHUNK = t },
    constraint = function(c, dev, case)
      if c.B > dev.max_threads_per_block then return false end
      if c.CHUNK > 0 and c.CHUNK < (c.B // c.TX) * c.U then return false end
      -- IL = 2 where split (the default space's rule), IL = 0 unsplit (the shipped winners')
      return (c.IL == 2) == (c.CHUNK > 0) or (c.CHUNK == 0 and len == 65536)
    end },
}
