-- axis_rows_chunk_space.lua - experiment space (fourteenth session, issue 16): split rows,
-- interleaved rounds, with chunks from 16K to 1M elements (the default space offers 8192 and
-- 65536), so fewer splits (blocks) per row: on [16 x 2^22] f32, every config of 256 or 512
-- threads, 128 or 256 lanes a row, U = 2 or 4:
--   build/redtune --axis --shapes 16,4194304,1 --op sum --type f32 --space tools/exp/axis_rows_chunk_space.lua
local size = case.type_size
return {
  { family = "axis_rows",
    params = { B = { 256, 512 }, L = { 128, 256 }, V = 4, U = { 2, 4 },
               CHUNK = { 16384, 32768, 65536, 131072, 262144, 524288, 1048576 }, IL = 1 },
    constraint = function(c, dev, case)
      return c.L <= c.B and c.V * size <= 16
    end },
}
