-- a family that no template declares
return {
  { family = "gridstride", params = { B = 256 } },
  { family = "tree_sideways", params = { B = 256 } },
}
