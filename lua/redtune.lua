-- redtune.lua - helpers for search spaces, preloaded as the global table `redtune` before a
-- space script (lua/spaces/*.lua) runs; tuner/space.c loads it from the copy built into the
-- binary.
--
-- A space script runs in a sandbox: base (less dofile, loadfile, load, require; print goes
-- to stderr), math, string and table; io, os, package and debug are nil. Two globals describe
-- what it is expanded for:
--   dev   every field of rt_device (runtime/device.h): name, cc_major, cc_minor, sm_count,
--         warp_size, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm,
--         smem_per_block, smem_per_sm, regs_per_sm, l2_bytes, ...; plus cc = 10*major + minor
--         and max_threads (= max_threads_per_block)
--   case  op ("min", or a user operator's name), type ("f32"), type_size (bytes),
--         commutative (a boolean), layout ("flat", or "keys" / "offsets" for --segmented,
--         "axis" for --axis: families that cannot run the layout are left out); an axis
--         case also has outer, len and inner (the shape [outer, len, inner] reduced along
--         len) and n (their product)
-- The same two tables are passed to derive and constraint functions.
--
-- The script returns a list of family entries:
--
--   { family = "gridstride",                                  -- a template family
--     params = { B = redtune.pow2(128, 1024), V = {1, 4}, U = 2 },   -- a list, or one integer
--     derive = function(c, dev, case) c.G = ... end,               -- optional
--     constraint = function(c, dev, case) return ... end },        -- optional, true or false
--
-- Expansion. Each entry is the cartesian product of its parameter lists, taken in the
-- family's declaration order (the @param lines of templates/<family>.cu), the first parameter
-- varying slowest and each list in the order written; a parameter the entry leaves out takes
-- the family's default. For each point c (a fresh table: parameter name -> integer), derive
-- runs first and may set or change parameters, then constraint keeps c when it returns true.
-- Entries expand in the order listed. The tuner then drops duplicates (the first stays) and
-- the entries of families that need a commutative operator when case.commutative is false.

local error, tostring, type = error, tostring, type
local tointeger = math.tointeger

local redtune = {}

-- The integer value of v (an integer, or a float with an integral value), or an error
-- blaming the caller of the helper.
local function int_arg(fname, what, v)
  local i = type(v) == "number" and tointeger(v)
  if not i then
    error(("redtune.%s: %s must be an integer, not %s"):format(fname, what,
      type(v) == "number" and tostring(v) or type(v)), 3)
  end
  return i
end

-- {lo, 2*lo, 4*lo, ...} up to and including hi (empty when hi < lo); lo must be positive.
-- redtune.pow2(32, 1024) -> {32, 64, 128, 256, 512, 1024}
function redtune.pow2(lo, hi)
  lo, hi = int_arg("pow2", "lo", lo), int_arg("pow2", "hi", hi)
  if lo < 1 then
    error(("redtune.pow2: lo must be positive, not %d"):format(lo), 2)
  end
  local t = {}
  local v = lo
  while v <= hi do
    t[#t + 1] = v
    if v > hi // 2 then break end   -- the next double passes hi (or overflows)
    v = v * 2
  end
  return t
end

-- {lo, lo+step, ...} up to and including hi; step defaults to 1 and may be negative, not 0.
-- redtune.range(1, 8, 3) -> {1, 4, 7}
function redtune.range(lo, hi, step)
  lo, hi = int_arg("range", "lo", lo), int_arg("range", "hi", hi)
  step = step == nil and 1 or int_arg("range", "step", step)
  if step == 0 then
    error("redtune.range: step must not be 0", 2)
  end
  local t = {}
  for v = lo, hi, step do t[#t + 1] = v end
  return t
end

-- Expand one entry (already checked by space.c: its family exists, its parameter names are
-- the family's, its values are integers). 'names' and 'defaults' list the family's parameters
-- in declaration order. Returns the list of kept configs, or nil and what the constraint
-- returned when that was not a boolean (space.c turns it into a message naming the line).
local function expand(entry, names, defaults, dev, case)
  local params = entry.params or {}
  local derive, constraint = entry.derive, entry.constraint
  local n, lists, lens, idx = #names, {}, {}, {}
  for i = 1, n do
    local v = params[names[i]]
    if v == nil then
      v = { defaults[i] }
    elseif type(v) ~= "table" then
      v = { v }
    end
    if #v == 0 then return {} end   -- an empty list: no point at all
    lists[i], lens[i], idx[i] = v, #v, 1
  end
  local out = {}
  repeat
    local c = {}
    for i = 1, n do c[names[i]] = lists[i][idx[i]] end
    if derive then derive(c, dev, case) end
    local keep = true
    if constraint then
      keep = constraint(c, dev, case)
      if type(keep) ~= "boolean" then
        return nil, keep == nil and "nil" or ("a " .. type(keep))
      end
    end
    if keep then out[#out + 1] = c end
    -- next point: the last parameter fastest, like nested loops
    local i = n
    while i > 0 do
      if idx[i] < lens[i] then
        idx[i] = idx[i] + 1
        break
      end
      idx[i] = 1
      i = i - 1
    end
  until i == 0
  return out
end

return redtune, expand
