-- parameter values are integers
return {
  { family = "gridstride", params = { B = 256, V = {1, 2.5} } },
}
