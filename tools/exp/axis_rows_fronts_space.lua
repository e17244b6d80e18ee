-- axis_rows_fronts_space.lua - experiment space (fourteenth session, issue 16): split rows,
-- interleaved rounds (IL = 1), around the [16 x 2^22] winners, for the same 256 MiB of f32 cut
-- into 1, 4, 16 and 64 rows: does the rows kernel lose its ~2 us against the flat reduction
-- of the same bytes (90.4 against 92.5 us, H100) to the number of rows read at once, or in
-- every shape?
--   build/redtune --axis --shapes "1,67108864,1;4,16777216,1;16,4194304,1;64,1048576,1" \
--     --op sum --type f32 --space tools/exp/axis_rows_fronts_space.lua
local size = case.type_size
return {
  { family = "axis_rows",
    params = { B = { 256, 512 }, L = { 128, 256 }, V = 4, U = { 2, 4 },
               CHUNK = { 8192, 65536 }, IL = 1 },
    constraint = function(c, dev, case)
      return c.L <= c.B and c.V * size <= 16
    end },
}
