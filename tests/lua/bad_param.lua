-- gridstride has no parameter Q
return {
  { family = "gridstride", params = { B = 256, Q = {1, 2} } },
}
