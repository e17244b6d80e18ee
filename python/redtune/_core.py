"""The calls: reduce and its shortcuts (sum, prod, min, max, argmin, argmax, amax, asum,
sumsq, norm2, mean, var_mean, std_mean), the general path every call falls back to
(_reduce), the route under torch.compile, temp_bytes and explain. The contexts and operators
are in _context, the arguments' checks in _args, dim= in _axes, the fast paths in _fastpath,
the segmented reductions in _segments."""
import sys

from . import _consts as C
from . import _fastpath as _fp
from . import _types
from ._arrays import TYPE_NAMES, describe, _prod
from ._args import (stream_handle, _allocate, _check_contiguous, _out, _raw, _resolve_device,
                    _spec, _wait_producer)
from ._axes import _axis, _strided_axis
from ._context import ARG_OPS, UserOp, _builtin_op, _contexts, context
from ._fastpath import (_FAST_OPS, _capture_retry, _cupy_call, _cupy_fast, _current_stream,
                        _fast_code, _torch_axis_call, _torch_call, _torch_compiling,
                        _torch_fast)
from ._lib import check, library, require


def reduce(x, op, dim=None, keepdim=False, out=None, stream=None, temp=None, dtype=None):
    """Reduce the CUDA array 'x' with 'op' ("sum", "prod", "min", "max", "argmin", "argmax",
    or a UserOp), asynchronously on 'stream' (default: the framework's current stream).

    dim=None reduces every element (so do dims that leave only extents of 1). An int dim
    (negative counts from the end), or a tuple of adjacent dims, reduces the contiguous x
    along that axis (rt_reduce_axis: x viewed as [outer, len, inner]); a view of x's dims
    permuted (x.t(), x.mT) is reduced in place where its memory allows (docs/python.md,
    "Element types"); the result has x's
    shape without dim (with 1 there for keepdim), as torch.sum(x, dim). The result is an
    array of x's framework on x's device, of the op's result dtype (argmin/argmax: the int64
    index into the flattened x, or along dim), shaped as the framework's own reduction with
    that dim and keepdim; or it is written to 'out' (for argmin/argmax: two int64 per
    result, the value's bits then the index; along an axis 'out' must have exactly the
    result's shape, with a last extent of 2 for argmin/argmax and var/std_mean).
    'temp' gives the temporary storage (temp_bytes(x, op) bytes, 256-byte aligned) instead
    of the context's (rt_reduce_temp)."""
    if type(x) is _fp._tensor and stream is None and temp is None and dtype is None:
        cls = op.__class__
        code = _FAST_OPS.get(op) if cls is str or cls is int else None
        if code is not None:
            r = (_torch_call(x, code, out) if dim is None and not keepdim else
                 _torch_axis_call(x, code, dim, keepdim, out))
            if r is not None:
                return r
    return _reduce(x, op, dim, keepdim, out, stream, temp, "redtune.reduce", dtype)


_modules = sys.modules


def _reduce(x, op, dim, keepdim, out, stream, temp, what, dtype=None, raw_pair=False):
    if (type(x) is _fp._cparray and stream is None and temp is None and dim is None and
            not keepdim and dtype is None and not raw_pair):
        code = _fast_code(op)
        if code is not None:
            r = _cupy_call(x, code, out)
            if r is not None:
                return r
    torch = _modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if _torch_compiling():
            return _torch_route(x, op, dim, keepdim, out, stream, temp, what, dtype)
        # The calls try _torch_call before coming here for a torch.Tensor once torch has
        # been seen: try it for the first tensor and for subclasses (torch.nn.Parameter).
        fresh = _fp._fast is None or _fp._tensor is not torch.Tensor
        if fresh:
            _torch_fast(torch)
        if ((fresh or type(x) is not _fp._tensor) and stream is None and temp is None and
                dim is None and not keepdim and dtype is None and not raw_pair):
            code = _fast_code(op)
            if code is not None:
                r = _torch_call(x, code, out)
                if r is not None:
                    return r
    else:
        cupy = _modules.get("cupy")
        if cupy is not None and type(x) is cupy.ndarray and _fp._cparray is not cupy.ndarray:
            _cupy_fast(cupy)    # the first CuPy array
            code = _fast_code(op)
            if (code is not None and stream is None and temp is None and dim is None and
                    not keepdim and dtype is None and not raw_pair):
                r = _cupy_call(x, code, out)
                if r is not None:
                    return r
    if isinstance(op, UserOp):
        code, uop = None, op
        if dtype is not None:
            raise ValueError("%s: dtype= is for the built-in operators; a UserOp reduces its "
                             "own type" % what)
    else:
        code, name = _builtin_op(op, what)
        uop = None
    s = None if stream is None else stream_handle(stream, what)
    info = describe(x, "x", what, s)
    layout = None
    if info.strides is not None:
        # a view in another order of one dense block (x.t(), x.mT) is reduced in place; any
        # other view is refused
        layout = _strided_axis(dim, info.shape, info.strides, keepdim, what,
                               code in ARG_OPS or (uop is not None and not uop.commutative))
        if layout is None:
            _check_contiguous(info, "x", what)
    rtype = info.type
    if uop is not None and uop.rt_type != rtype:
        raise TypeError("%s: x has dtype %s and operator %r reduces %s"
                        % (what, TYPE_NAMES[rtype], uop.name, uop.type))
    spec, res, k = rtype, rtype, 1
    if uop is None:
        spec, res, k = _spec(code, rtype, dtype, what)
    if layout is not None:
        shape, axis = layout
    else:
        shape, axis = _axis(dim, info.shape, keepdim, what) if (dim is not None or keepdim) else (
            (), None)
    device = info.device
    if device is None:
        device = _resolve_device(info, "x", what)
    arg = code in ARG_OPS
    work = s if s is not None else _current_stream(info)
    if out is not None:
        if axis is None:
            o = _out(out, device, res, k, what, work, arg)
        else:
            o = _out(out, device, res, None, what, work, arg,
                     shape + ((2,) if arg or k == 2 else ()))
        result, optr = out, o.ptr
    elif arg and axis is not None:
        # along an axis the index alone (RT_RESULT_INDEX), written as torch.argmax's int64
        result, optr = _allocate(info, shape, C.RT_I64, what, work)
        spec |= _types.RESULT_INDEX
    elif arg:
        buf, optr = _allocate(info, shape + (2,), C.RT_I64, what, work)
        result = buf[..., 1]
    elif k == 2:
        buf, optr = _allocate(info, shape + (2,), res, what, work)
        result = buf if raw_pair else (buf[..., 0], buf[..., 1])
    else:
        result, optr = _allocate(info, shape, res, what, work)
    ctx = _contexts.get(device) or context(device)
    if uop is not None:
        code = ctx.op_handle(uop)
    if info.stream is not None:
        _wait_producer(info, device, work)
    lib = library()
    if axis is not None:
        if axis[0] * axis[2] == 0:
            return result   # no output: nothing to write (nor does the library)
        if temp is None:
            rc = _fp._rt_axis(ctx._h, code, spec, info.ptr, axis[0], axis[1], axis[2], optr,
                              work)
            if rc == C.RT_ECAPTURE and info.framework == "torch":
                rc = _capture_retry(ctx, code, spec, info.ptr, info.size, optr, work, info.obj,
                                    axis)
        else:
            t = _raw(temp, "temp", what, device)
            rc = require(lib, "rt_reduce_axis_temp", what)(
                ctx._h, code, spec, info.ptr, axis[0], axis[1], axis[2], optr, t[0], t[1],
                work)
    elif temp is None:
        rc = lib.rt_reduce(ctx._h, code, spec, info.ptr, info.size, optr, work)
        if rc == C.RT_ECAPTURE and info.framework == "torch":
            rc = _capture_retry(ctx, code, spec, info.ptr, info.size, optr, work, info.obj)
    else:
        t = _raw(temp, "temp", what, device)
        rc = lib.rt_reduce_temp(ctx._h, code, spec, info.ptr, info.size, optr, t[0], t[1],
                                work)
    if rc != 0:
        check(rc, ctx._h)
    return result



def _torch_route(x, op, dim, keepdim, out, stream, temp, what, dtype=None):
    """Inside torch.compile: the custom op, which the graph records (no graph break)."""
    if (isinstance(op, UserOp) or out is not None or stream is not None or temp is not None
            or dtype is not None):
        raise NotImplementedError("%s under torch.compile: a built-in op with no out=, "
                                  "stream=, temp= or dtype= (they are eager-mode only)" % what)
    torch = sys.modules["torch"]
    name = _builtin_op(op, what)[1]
    if not _torch_registered():
        raise RuntimeError("%s under torch.compile: torch.ops.redtune.reduce is not defined: "
                           "import torch before redtune, or call redtune.register_torch_ops() "
                           "before compiling (it needs PyTorch 2.4+)" % what)
    shape, axis = _axis(dim, tuple(x.shape), keepdim, what) if (
        dim is not None or keepdim) else ((), None)
    pair = name in _PAIR_NAMES
    if axis is None:
        r = torch.ops.redtune.reduce(x, name)
    elif isinstance(dim, int):
        r = torch.ops.redtune.reduce(x, name, dim)
    else:   # adjacent dims: one axis of the [outer, len, inner] view
        r = torch.ops.redtune.reduce(x.reshape(axis), name, 1)
    if dim is not None or keepdim:
        r = r.reshape(shape + ((2,) if pair else ()))
    if pair:   # var/std_mean: the pair
        return r[..., 0], r[..., 1]
    return r


_PAIR_NAMES = ("var_mean", "var_mean_sample", "std_mean", "std_mean_sample")


def _torch_registered():
    from . import _torch
    return _torch._done


def temp_bytes(x, op, dim=None):
    """The bytes of temporary storage reduce(x, op, dim=dim, temp=...) needs (rt_temp_bytes;
    along an axis rt_axis_temp_bytes)."""
    what = "redtune.temp_bytes"
    info = describe(x, "x", what)
    layout = None if info.strides is None else _strided_axis(dim, info.shape, info.strides,
                                                             False, what, False)
    if layout is not None:
        axis = layout[1]
    else:
        axis = None if dim is None else _axis(dim, info.shape, False, what)[1]
    dev = _resolve_device(info, "x", what)
    if axis is not None:
        return context(dev).axis_temp_bytes(op, info.type, *axis)
    return context(dev).temp_bytes(op, info.type, info.size)


def sum(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of x's elements (integer sums wrap modulo 2^bits of the accumulator, as the
    library's): float16/bfloat16 accumulate in float32, int8 in int32, uint8 in uint32, and
    the result has the accumulator's type; dtype= chooses another accumulator (float64)."""
    if type(x) is _fp._tensor and stream is None and dtype is None:
        r = (_torch_call(x, C.RT_SUM, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_SUM, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_SUM, dim, keepdim, out, stream, None, "redtune.sum", dtype)


def prod(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The product of x's elements (integer products wrap; accumulator as sum)."""
    if type(x) is _fp._tensor and stream is None and dtype is None:
        r = (_torch_call(x, C.RT_PROD, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_PROD, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_PROD, dim, keepdim, out, stream, None, "redtune.prod", dtype)


def min(x, dim=None, keepdim=False, out=None, stream=None):
    """The least element (floats: NaN ignored unless every element is NaN, as nanmin)."""
    if type(x) is _fp._tensor and stream is None:
        r = (_torch_call(x, C.RT_MIN, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_MIN, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_MIN, dim, keepdim, out, stream, None, "redtune.min")


def max(x, dim=None, keepdim=False, out=None, stream=None):
    """The greatest element (floats: NaN ignored unless every element is NaN, as nanmax)."""
    if type(x) is _fp._tensor and stream is None:
        r = (_torch_call(x, C.RT_MAX, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_MAX, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_MAX, dim, keepdim, out, stream, None, "redtune.max")


def argmin(x, dim=None, keepdim=False, out=None, stream=None):
    """The flat index of the least element (ties: the lowest index; n == 0: -1); with dim,
    the index along dim per output, as torch.argmin(x, dim)."""
    if type(x) is _fp._tensor and stream is None:
        r = (_torch_call(x, C.RT_ARGMIN, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_ARGMIN, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_ARGMIN, dim, keepdim, out, stream, None, "redtune.argmin")


def argmax(x, dim=None, keepdim=False, out=None, stream=None):
    """The flat index of the greatest element (ties: the lowest index; n == 0: -1); with dim,
    the index along dim per output, as torch.argmax(x, dim)."""
    if type(x) is _fp._tensor and stream is None:
        r = (_torch_call(x, C.RT_ARGMAX, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_ARGMAX, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_ARGMAX, dim, keepdim, out, stream, None, "redtune.argmax")


def _shortcut(x, code, dim, keepdim, out, stream, dtype, what):
    if type(x) is _fp._tensor and stream is None and dtype is None:
        r = (_torch_call(x, code, out) if dim is None and not keepdim else
             _torch_axis_call(x, code, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, code, dim, keepdim, out, stream, None, what, dtype)


def amax(x, dim=None, keepdim=False, out=None, stream=None):
    """The greatest |x| of a float array, in x's dtype (the FP8/INT8 scaling reduction; NaN
    ignored unless every element is NaN; 0 for an empty array)."""
    return _shortcut(x, C.RT_AMAX, dim, keepdim, out, stream, None, "redtune.amax")


def asum(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of |x| of a float array, accumulated in float32 for float16/bfloat16 (or
    dtype=)."""
    return _shortcut(x, C.RT_ASUM, dim, keepdim, out, stream, dtype, "redtune.asum")


def sumsq(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of x*x of a float array in one pass (accumulator as asum)."""
    return _shortcut(x, C.RT_SUMSQ, dim, keepdim, out, stream, dtype, "redtune.sumsq")


def norm2(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The Euclidean norm sqrt(sum(x*x)) of a float array in one pass, in the accumulator
    (float32 for float16/bfloat16, or dtype=), as torch.linalg.vector_norm."""
    return _shortcut(x, C.RT_NORM2, dim, keepdim, out, stream, dtype, "redtune.norm2")


def mean(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The mean, in the accumulator (float32 for float16/bfloat16; float64 for integer
    arrays); NaN for an empty array."""
    return _shortcut(x, C.RT_MEAN, dim, keepdim, out, stream, dtype, "redtune.mean")


def _correction(correction, what):
    # isinstance, not __class__: torch.compile's tracer (Dynamo) answers isinstance on a
    # constant but not a comparison of its __class__ with int.
    if isinstance(correction, bool) or not isinstance(correction, int) or correction not in (0, 1):
        raise ValueError("%s: correction is %r; 0 (population) or 1 (sample, the default as "
                         "torch's)" % (what, correction))
    return correction


def var_mean(x, dim=None, keepdim=False, correction=1, out=None, stream=None, dtype=None):
    """(variance, mean) in one pass (Chan's pairwise merge), as torch.var_mean: correction=1
    divides by n - 1, correction=0 by n. With out=, one array of two values {var, mean}
    (along an axis: of the result's shape + (2,)); with dim, two arrays of the result's
    shape (views of one {var, mean} buffer), as torch.var_mean(x, dim)."""
    code = C.RT_VAR_MEAN_SAMPLE if _correction(correction, "redtune.var_mean") else C.RT_VAR_MEAN
    return _reduce(x, code, dim, keepdim, out, stream, None, "redtune.var_mean", dtype)


def std_mean(x, dim=None, keepdim=False, correction=1, out=None, stream=None, dtype=None):
    """(standard deviation, mean) in one pass, as torch.std_mean."""
    code = C.RT_STD_MEAN_SAMPLE if _correction(correction, "redtune.std_mean") else C.RT_STD_MEAN
    return _reduce(x, code, dim, keepdim, out, stream, None, "redtune.std_mean", dtype)


# ---------------------------------------------------------------- explain

def explain(x, op="sum", type=None, device=None, dim=None):
    """rt_explain: which kernel reduces 'x' with 'op', and why (the database entry, the
    fallback level, where the CUBIN came from). 'x' is an array, an element count, or (with
    dim=) a shape; for a count or a shape type= ("f32", ...; default that of a UserOp, else
    "f32") and device= (default 0). With dim= the reduction along that axis
    (rt_explain_axis, which names the tuned shape the kernel comes from)."""
    what = "redtune.explain"
    if isinstance(x, tuple) or (isinstance(x, int) and not isinstance(x, bool)):
        if isinstance(x, tuple) and dim is None:
            raise TypeError("%s: x is a shape %r; give dim= (or an element count without "
                            "it)" % (what, x))
        tname = type or (op.type if isinstance(op, UserOp) else "f32")
        if tname not in C.TYPES:
            raise ValueError("%s: type is %r; one of %s" % (what, tname, ", ".join(C.TYPES)))
        shape, rtype, ctx = (x if isinstance(x, tuple) else (x,)), C.TYPES[tname], None
    else:
        info = describe(x, "x", what)
        shape, rtype = info.shape, info.type
        ctx = context(_resolve_device(info, "x", what))
    axis = None if dim is None else _axis(dim, shape, False, what)[1]
    ctx = ctx or context(device)
    if axis is not None:
        # argmin/argmax along an axis run for the index alone, as reduce(x, op, dim) does
        if not isinstance(op, UserOp) and _builtin_op(op, what)[0] in ARG_OPS:
            rtype |= _types.RESULT_INDEX
        return ctx.explain_axis(op, rtype, *axis)
    return ctx.explain(op, rtype, _prod(shape))
