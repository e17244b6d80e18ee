-- a config that passes the space's checks but not the compiler (tb2's data block of 1024 x 16
-- words does not fit in 48 KB of static shared memory, and PAD_PERIOD = 1 is refused by its
-- static_assert) beside one that compiles: test_tune's tune_max_n checks that a search that
-- compiles as it picks says so and goes on
return {
  { family = "tb2", params = { B = 1024, R = 16, PAD = 1, PAD_PERIOD = 1 } },
  { family = "gridstride", params = { B = 256, V = 4, U = 2, G = 2 } },
}
