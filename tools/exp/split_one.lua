-- split_one.lua - the H200's best seg_per SPLIT config for offsets heavy at 30M (min f32,
-- twenty-third session), alone: for Nsight Compute over the tuner (dev_session23.sh ncu).
return {
  { family = "seg_per", params = { B = 128, LANES = 1, STAGE = 0, V = 1, SPLIT = 2048 } },
}
