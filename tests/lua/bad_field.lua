-- a misspelt field would silently keep every point
return {
  { family = "gridstride", params = { B = {128, 256} },
    constriant = function(c) return c.B > 128 end },
}
