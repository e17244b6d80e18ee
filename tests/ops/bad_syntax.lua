-- a missing comma between two fields
return {
  name = "first"
  type = "f32",
}
