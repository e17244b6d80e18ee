-- a preprocessor directive in the combine: NVRTC would read the host file and print it
return {
  name = "peek", type = "i32", identity = 0, commutative = true,
  combine = [[
    return a + b;
#include "/etc/passwd"
  ]],
}
