-- a map that reaches for the preprocessor
return {
  name = "sneaky",
  type = "f32",
  commutative = true,
  acc = "f64",
  map = [[
    return x;
    #include "/etc/passwd"
  ]],
  identity = "0",
  combine = "return a + b;",
}
