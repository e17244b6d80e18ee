-- affine composition claimed commutative, which it is not: the families that combine out of
-- order compute wrong results, which the tuner must record as 'wrong', never as best
return {
  name = "affine_claims",
  type = "u64",
  commutative = true,
  identity = "0x100000000ULL",
  combine = [[
    unsigned int af = (unsigned int)(a >> 32), bf = (unsigned int)a;
    unsigned int ag = (unsigned int)(b >> 32), bg = (unsigned int)b;
    return ((unsigned long long)(ag * af) << 32) | (unsigned int)(ag * bf + bg);
  ]],
  sample = function(i, r) return r | (1 << 32) end,
}
