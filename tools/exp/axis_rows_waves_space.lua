-- axis_rows_waves_space.lua - experiment space (fourteenth session, issue 16): split rows with
-- a block per row (L = B), chunks of 16384 and 65536, both walks, for the splits-per-row
-- experiment (more splits than the GPU holds at once; an experimental build only).
return {
  { family = "axis_rows",
    params = { B = { 256, 512 }, L = { 256, 512 }, V = 16 // case.type_size, U = { 2, 4 },
               CHUNK = { 16384, 65536 }, IL = { 0, 1 } },
    constraint = function(c, dev, case) return c.L == c.B end },
}
