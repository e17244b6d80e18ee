"""The segmented reductions: reduce_offsets (CSR begin offsets) and reduce_keys (sorted
segment keys), rt_reduce_offsets and rt_reduce_keys."""
from . import _consts as C
from ._arrays import TYPE_NAMES, describe
from ._args import (stream_handle, _allocate, _check_contiguous, _out, _resolve_device, _spec,
                    _wait_producer)
from ._context import ARG_OPS, UserOp, _builtin_op, context
from ._fastpath import _current_stream
from ._lib import check, library


def _segmented(what, x, seg, segname, op, out, stream, validate, nseg, layout, skewed=False,
               uniform=False):
    if isinstance(op, UserOp):
        code, uop = None, op
    else:
        code, uop = _builtin_op(op, what)[0], None
    s = None if stream is None else stream_handle(stream, what)
    info = describe(x, "x", what, s)
    _check_contiguous(info, "x", what)
    sinfo = describe(seg, segname, what, s)
    _check_contiguous(sinfo, segname, what)
    if len(sinfo.shape) != 1:
        raise ValueError("%s: %s has shape %r; a 1-D array is expected"
                         % (what, segname, sinfo.shape))
    rtype = info.type
    if uop is not None and uop.rt_type != rtype:
        raise TypeError("%s: x has dtype %s and operator %r reduces %s"
                        % (what, TYPE_NAMES[rtype], uop.name, uop.type))
    if not isinstance(skewed, bool):
        raise TypeError("%s: skewed is %r; True or False is expected" % (what, skewed))
    if not isinstance(uniform, bool):
        raise TypeError("%s: uniform is %r; True or False is expected" % (what, uniform))
    if skewed and uniform:
        raise ValueError("%s: skewed=True (the lengths may spread widely) and uniform=True "
                         "(they stay near their mean) contradict each other" % what)
    flags = ((C.RT_SEG_CHECK if validate else 0) | (C.RT_SEG_SKEWED if skewed else 0)
             | (C.RT_SEG_UNIFORM if uniform else 0))
    if layout == C.RT_LAYOUT_OFFSETS:
        if sinfo.type not in (C.RT_I32, C.RT_I64):
            raise TypeError("%s: offsets has dtype %s; int32 or int64 is expected"
                            % (what, TYPE_NAMES[sinfo.type]))
        if sinfo.size == 0:
            raise ValueError("%s: offsets is empty; nseg + 1 begin offsets are expected "
                             "(the last one the end of the last segment)" % what)
        if sinfo.type == C.RT_I64:
            flags |= C.RT_SEG_OFF64
        nseg = sinfo.size - 1
    else:
        if sinfo.type not in (C.RT_U32, C.RT_I32):
            raise TypeError("%s: keys has dtype %s; uint32 (or int32 holding keys below "
                            "2^31) is expected" % (what, TYPE_NAMES[sinfo.type]))
        if sinfo.size != info.size:
            raise ValueError("%s: keys has %d entries and x %d; one key per element"
                             % (what, sinfo.size, info.size))
        if nseg is None:
            if info.framework not in ("torch", "cupy"):
                raise TypeError("%s: pass nseg (it is found from the keys only for torch "
                                "and CuPy arrays)" % what)
            # The keys are sorted: the last is the largest. Reading it waits for the stream.
            nseg = int(seg[-1]) + 1 if sinfo.size else 0
        nseg = int(nseg)
        if nseg < 0:
            raise ValueError("%s: nseg is %d" % (what, nseg))
    device = _resolve_device(info, "x", what)
    sdev = _resolve_device(sinfo, segname, what)
    if sdev != device:
        raise ValueError("%s: %s is on device %d and x on device %d"
                         % (what, segname, sdev, device))
    arg = code in ARG_OPS
    spec, res, k = rtype, rtype, 1
    if uop is None:
        spec, res, k = _spec(code, rtype, None, what)
    work = s if s is not None else _current_stream(info)
    if out is not None:
        o = _out(out, device, res, nseg * k, what, work, arg)
        result, optr = out, o.ptr
    elif arg:
        buf, optr = _allocate(info, (nseg, 2), C.RT_I64, what, work)
        result = buf[:, 1]
    elif k == 2:
        buf, optr = _allocate(info, (nseg, 2), res, what, work)
        result = buf[:, 0], buf[:, 1]
    else:
        result, optr = _allocate(info, (nseg,), res, what, work)
    ctx = context(device)
    if uop is not None:
        code = ctx.op_handle(uop)
    for i in (info, sinfo):
        if i.stream is not None:
            _wait_producer(i, device, work)
    lib = library()
    if layout == C.RT_LAYOUT_OFFSETS:
        rc = lib.rt_reduce_offsets(ctx._h, code, spec, info.ptr, info.size, sinfo.ptr, nseg,
                                   optr, work, flags)
    else:
        rc = lib.rt_reduce_keys(ctx._h, code, spec, info.ptr, sinfo.ptr, info.size, nseg,
                                optr, work, flags)
    if rc != 0:
        check(rc, ctx._h)
    return result


def reduce_offsets(x, offsets, op, out=None, stream=None, check=False, skewed=False,
                   uniform=False):
    """Segmented reduction of x (flattened) by CSR begin offsets (int32 or int64, nseg + 1 of
    them): result[s] reduces x[offsets[s]:offsets[s+1]], the identity when empty
    (argmin/argmax: the index into x, -1 when empty). check=True validates the offsets on
    the GPU first (synchronous) and raises InvalidArgumentError for bad ones. skewed=True
    (RT_SEG_SKEWED) when the lengths may spread widely (a few segments far longer than the
    mean): only load-balanced kernels serve the call. uniform=True (RT_SEG_UNIFORM) when they
    stay near their mean (the longest within 16 times it): a group-per-segment winner runs
    without its list of long segments (up to 12% faster; a long segment then costs one group
    its whole length). check=True decides between the two from the offsets itself."""
    return _segmented("redtune.reduce_offsets", x, offsets, "offsets", op, out, stream, check,
                      None, C.RT_LAYOUT_OFFSETS, skewed, uniform)


def reduce_keys(x, keys, op, nseg=None, out=None, stream=None, check=False):
    """Segmented reduction of x (flattened) by sorted segment keys (uint32, one per element):
    result[s] reduces the elements whose key is s. nseg defaults to the last key + 1 (read
    back from the device: that waits for the stream)."""
    return _segmented("redtune.reduce_keys", x, keys, "keys", op, out, stream, check, nseg,
                      C.RT_LAYOUT_KEYS)
