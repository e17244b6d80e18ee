-- derive may only set the family's parameters, and to integers
return {
  { family = "tree_sequential", params = { B = {128, 256} },
    derive = function(c, dev, case) c.R = 1000 / c.B end },
}
