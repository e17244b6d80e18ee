-- an identity that closes rt_identity and opens a kernel of its own
return {
  name = "inject", type = "i32", commutative = true, combine = "return a + b;",
  identity = '0); } extern "C" __global__ void evil(int *p) { *p = 1; return (0',
}
