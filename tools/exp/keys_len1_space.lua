-- keys_len1_space.lua - experiment (prepared in the twenty-first session, not yet run):
-- seg_lb's keys register path with and without the tile's outputs staged (OST), for keys
-- len1 f64 (and i64), where the shipped winner B=512 R=8 OST=1 ran 500 us against CUB's 299
-- and f32's 160 (run 3 of that session). A B=512 R=8 tile has 4096 one-element segments and
-- LB_OC holds 24 KB / 8 B = 3072 of them, so such tiles store their outputs thread by thread;
-- tools/exp/seg_lb_oc32.patch raises LB_OC to 32 KB. Tune with and without the patch:
--   redtune --device 0 --op min --type f64 --segmented keys --profiles len1 --sizes 30M \
--       --space tools/exp/keys_len1_space.lua --db build/len1.db

return {
  { family = "seg_lb",
    params = { B = {128, 256, 512}, R = {4, 8, 16}, V = {1, 2}, STAGE = 0, PERSIST = 0,
               OST = {0, 1} } },
}
