-- affine composition with a wrong identity (the constant map 0 instead of x -> x): the tuner's
-- identity check stops it before anything is measured or stored
return {
  name = "affine_badid",
  type = "u64",
  commutative = false,
  identity = "0ULL",
  combine = [[
    unsigned int af = (unsigned int)(a >> 32), bf = (unsigned int)a;
    unsigned int ag = (unsigned int)(b >> 32), bg = (unsigned int)b;
    return ((unsigned long long)(ag * af) << 32) | (unsigned int)(ag * bf + bg);
  ]],
}
