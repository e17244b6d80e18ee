-- partial_space.lua - experiment (twentieth session, run 9): three gridstride configs that
-- shipped winners use at small n (argmax f32 at 1024, 8192; var_mean f32 at 4096), timed at
-- sizes that end in a partial tile (878, 5554, 100003) and at whole ones (1024, 8192, 131072).
return {
  { family = "gridstride", params = { B = 128, V = 1, U = 8, G = 8 } },
  { family = "gridstride", params = { B = 256, V = 4, U = 4, G = 8 } },
  { family = "gridstride", params = { B = 512, V = 4, U = 4, G = 8 } },
}
