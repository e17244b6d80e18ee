-- a combine body that does not compile: NVRTC's message points at line 10 of this file
return {
  name = "broken",
  type = "u32",
  identity = 0,
  commutative = true,
  combine = [[
    unsigned int s = a + b;
    // the next line names a variable that does not exist
    return s + undefined_variable;
  ]],
}
