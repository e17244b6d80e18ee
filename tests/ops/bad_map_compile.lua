-- a map that does not compile: NVRTC's message points at line 9 of this file
return {
  name = "typo",
  type = "bf16",
  commutative = true,
  acc = "struct { float s; unsigned n; }",
  map = [[
    rt_acc_t r;
    r.s = rt_b2f(y);
    r.n = 1;
    return r;
  ]],
  identity = "{0.0f, 0u}",
  combine = "a.s += b.s; a.n += b.n; return a;",
}
