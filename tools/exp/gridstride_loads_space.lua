-- gridstride_loads_space.lua - experiment space (fourteenth session, issues 16 and 15):
-- gridstride near its 2^26 f32 winner (B=512 V=4 U=4 G=8), timed beside axis_rows on the same
-- 256 MiB (tools/exp/dev_session14.sh f), with the streaming hint and without (REDTUNE_LOADS).
return {
  { family = "gridstride", params = { B = { 256, 512 }, V = 4, U = { 2, 4 }, G = { 2, 4, 8 } } },
}
