-- a constraint that forgets to return
return {
  { family = "gridstride", params = { B = 256 },
    constraint = function(c, dev, case)
      local ok = c.B <= dev.max_threads_per_block
    end },
}
