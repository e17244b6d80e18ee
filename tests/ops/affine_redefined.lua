-- another operator under the name 'affine': composition in the other order ("g, then f"),
-- associative too; a database that holds the first 'affine' must refuse it
return {
  name = "affine",
  type = "u64",
  commutative = false,
  identity = "0x100000000ULL",
  combine = [[
    unsigned int af = (unsigned int)(b >> 32), bf = (unsigned int)b;
    unsigned int ag = (unsigned int)(a >> 32), bg = (unsigned int)a;
    return ((unsigned long long)(ag * af) << 32) | (unsigned int)(ag * bf + bg);
  ]],
}
