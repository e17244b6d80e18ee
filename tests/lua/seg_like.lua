-- seg_like.lua - offsets configs of two families for test_tune's start at a like profile:
-- seg_lb's centre is where the seeds begin, seg_per's single config is the one to start from.
return {
  { family = "seg_lb", params = { B = 256, R = 16, V = 4, STAGE = 0, PERSIST = 0, MP = 1, FAST = {0, 1} } },
  { family = "seg_per", params = { B = 256, LANES = 1, V = 1 } },
}
