-- a one-block config (oneblock's @max_n is 2^18) beside a grid-stride one: test_tune's
-- tune_max_n checks that sizes past 2^18 leave the one-block config out
return {
  { family = "oneblock", params = { B = 256, V = 4, U = 1 } },
  { family = "gridstride", params = { B = 256, V = 4, U = 2, G = 2 } },
}
