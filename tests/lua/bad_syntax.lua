-- a missing comma between two fields
return {
  { family = "gridstride"
    params = { B = 256 } },
}
