"""The library's type model in Python (docs/types.md, runtime/optype.c): which result type
and how many result values an operator gives for an element type and an accumulator, so the
package allocates the result before it calls rt_reduce. python/tests/test_cpu_consts.py checks
the table against the library's own rt_... rules through its refusals."""
from . import _consts as C

FLOATS = (C.RT_F16, C.RT_BF16, C.RT_F32, C.RT_F64)
WIDENING = (C.RT_SUM, C.RT_PROD, C.RT_ASUM, C.RT_SUMSQ, C.RT_NORM2, C.RT_MEAN,
            C.RT_VAR_MEAN, C.RT_VAR_MEAN_SAMPLE, C.RT_STD_MEAN, C.RT_STD_MEAN_SAMPLE)
FLOAT_ONLY = (C.RT_AMAX, C.RT_ASUM, C.RT_SUMSQ, C.RT_NORM2, C.RT_VAR_MEAN,
              C.RT_VAR_MEAN_SAMPLE, C.RT_STD_MEAN, C.RT_STD_MEAN_SAMPLE)
PAIRS = (C.RT_VAR_MEAN, C.RT_VAR_MEAN_SAMPLE, C.RT_STD_MEAN, C.RT_STD_MEAN_SAMPLE)
ARGS = (C.RT_ARGMIN, C.RT_ARGMAX)
# RT_RESULT_INDEX(spec) of include/redtune.h: argmin/argmax give the 8-byte index alone (what
# a reduction along an axis returns, written by the kernel as torch.argmax's int64).
RESULT_INDEX = 0x20000
_NAMES = {v: k for k, v in C.TYPES.items()}
_OPS = {v: k for k, v in C.OPS.items()}


def default_acc(op, t):
    if op == C.RT_MEAN and t not in FLOATS:
        return C.RT_F64 if t in (C.RT_I64, C.RT_U64) else (
            C.RT_I64 if t in (C.RT_I8, C.RT_I32) else C.RT_U64)
    return {C.RT_F16: C.RT_F32, C.RT_BF16: C.RT_F32, C.RT_I8: C.RT_I32,
            C.RT_U8: C.RT_U32}.get(t, t)


def _acc_allowed(op, t, acc):
    if op == C.RT_MEAN and t not in FLOATS:
        return acc == C.RT_F64
    if t in (C.RT_F16, C.RT_BF16, C.RT_F32):
        return acc in (C.RT_F32, C.RT_F64)
    if t in (C.RT_I8, C.RT_I32):
        return acc in (C.RT_I32, C.RT_I64)
    if t in (C.RT_U8, C.RT_U32):
        return acc in (C.RT_U32, C.RT_U64)
    return acc == t


def resolve(op, t, acc=None):
    """(spec, result type, values per result) of built-in 'op' over element type 't' with
    the accumulator 'acc' (None: the default; the result is the accumulator, as torch's
    dtype=); ValueError naming the pair when the library does not define it."""
    on, tn = _OPS[op], _NAMES[t]
    if op in FLOAT_ONLY and t not in FLOATS:
        raise ValueError("%s of %s is not defined: %s takes f16, bf16, f32, f64" % (on, tn, on))
    if op in WIDENING:
        a = default_acc(op, t)
        spec = t
        if acc is not None and acc != a:
            if not _acc_allowed(op, t, acc):
                raise ValueError("%s of %s accumulating in %s is not defined"
                                 % (on, tn, _NAMES[acc]))
            a, spec = acc, t | ((acc + 1) << 8)
        res = C.RT_F64 if op == C.RT_MEAN and t not in FLOATS else a
        return spec, res, 2 if op in PAIRS else 1
    if acc is not None and acc != t:
        raise ValueError("%s of %s accumulating in %s is not defined: %s keeps the element "
                         "type" % (on, tn, _NAMES[acc], on))
    return t, t, 1
