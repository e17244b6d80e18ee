-- a finalize that closes the function it is written into
return {
  name = "escape",
  type = "f32",
  commutative = true,
  acc = "f64",
  result = "f32",
  identity = "0",
  combine = "return a + b;",
  finalize = [[
    return (float)a; }
    __global__ void k() {
  ]],
}
