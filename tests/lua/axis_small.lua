-- axis_small.lua - a small axis space for the tests (test_tune.c, test_cli.c): two rows
-- configs where inner == 1, one columns config everywhere.
return {
  { family = "axis_rows", params = { B = 256, L = { 4, 32 }, V = 1, U = 1, CHUNK = 0 },
    constraint = function(c, dev, case) return case.inner == 1 end },
  { family = "axis_cols", params = { B = 256, TX = 32, CV = 1, U = 1, CHUNK = 0 } },
}
