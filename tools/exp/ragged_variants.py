"""ragged_variants.py SRC OUT VARIANT - tree_sequential's ragged tile in an emitted kernel
rewritten for tools/exp/ragged_tile.sh: 'sel' (the combines as selects of the identity),
'off32' (indices within the tile in 32 bits from a pointer to the tile: one min and one
address a load), 'off32sel' (both). Timing only: the index given to rt_lift is the tile's."""
import re
import sys

src, out, variant = sys.argv[1:4]
s = open(src).read()
start = s.index("        acc = rt_identity();\n        constexpr unsigned int K = RT_R * TS_PER_LOAD;")
end = s.index("\n    }\n", start)
sel = "sel" in variant
if variant.startswith("off32"):
    body = """        acc = rt_identity();
        const In *__restrict__ p = in + base;
        const unsigned int lim = (unsigned int)(n - base);
        constexpr unsigned int K = RT_R * TS_PER_LOAD;
        constexpr unsigned int GRP = K < 8 ? K : 8;
#pragma unroll 1
        for (unsigned int k0 = 0; k0 < K; k0 += GRP) {
            if (tid + k0 * RT_B >= lim)
                break;
            rt_acc_t x[GRP];
#pragma unroll
            for (unsigned int g = 0; g < GRP; g++) {
                const unsigned int j = tid + (k0 + g) * RT_B;
                x[g] = Load::at(p, j < lim ? j : lim - 1);
            }
#pragma unroll
            for (unsigned int g = 0; g < GRP; g++) {
                const unsigned int j = tid + (k0 + g) * RT_B;
                COMBINE
            }
        }"""
    ok = "k0 + g < K && j < lim"
else:
    body = s[start:end]
    ok = "k0 + g < K && i < n"
    body = re.sub(r"if \(k0 \+ g < K && i < n\)\n\s*acc = rt_combine\(acc, x\[g\]\);", "COMBINE", body)
comb = ("acc = rt_combine(acc, %s ? x[g] : rt_identity());" % ok if sel
        else "if (%s)\n                    acc = rt_combine(acc, x[g]);" % ok)
assert "COMBINE" in body
open(out, "w").write(s[:start] + body.replace("COMBINE", comb) + s[end:])
