-- a struct accumulator needs a map: an element is not a struct
return {
  name = "pair",
  type = "u32",
  commutative = true,
  acc = "struct { unsigned lo; unsigned hi; }",
  identity = "{0xffffffffu, 0u}",
  combine = "rt_acc_t r = {min(a.lo, b.lo), max(a.hi, b.hi)}; return r;",
}
