-- an accumulator of 40 bytes: more than the 32 a warp shuffles and shared memory allow
return {
  name = "wide",
  type = "f32",
  commutative = true,
  acc = [[struct {
    double a, b, c, d;
    float e;
  }]],
  map = "rt_acc_t r = {x, 0, 0, 0, 0}; return r;",
  identity = "{0, 0, 0, 0, 0}",
  combine = "a.a += b.a; return a;",
}
