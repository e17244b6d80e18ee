-- a field of a vector type: only scalar CUDA types make an accumulator
return {
  name = "vec",
  type = "f32",
  commutative = true,
  acc = [[struct {
    float s;
    float3 v;
  }]],
  map = "rt_acc_t r; r.s = x; return r;",
  identity = "{0}",
  combine = "a.s += b.s; return a;",
}
