"""Along an axis: the dim= and keepdim= arguments turned into the result's shape and the
[outer, len, inner] view that rt_reduce_axis reduces (docs/python.md, "Along an axis")."""
from ._arrays import _prod


def _axis(dim, shape, keepdim, what):
    """(the result's shape, the axis): the axis is (outer, len, inner), the contiguous array
    of 'shape' viewed as [outer, len, inner] reduced along len (docs/python.md, "Along an
    axis"), or None for a reduction of every element (dim=None, or dims that leave only
    extents of 1). 'dim' is an int (negative counts from the end) or a tuple of adjacent
    dims, which reduce as one axis."""
    nd = len(shape)
    if dim is None:
        return ((1,) * nd if keepdim else ()), None
    red, res = _reduced(dim, shape, keepdim, what)
    if _prod(shape[i] for i in range(nd) if i not in red) == 1:
        return res, None
    lo, hi = red[0], red[-1]
    if hi - lo + 1 != len(red):
        raise NotImplementedError(
            "%s: dim=%r of an array of shape %r: redtune reduces along one axis, or along "
            "adjacent axes as one; these are not adjacent (move them together first: "
            "x.movedim(...).contiguous())" % (what, dim, tuple(shape)))
    return res, (_prod(shape[:lo]), _prod(shape[lo:hi + 1]), _prod(shape[hi + 1:]))


def _reduced(dim, shape, keepdim, what):
    """(the reduced dims, sorted; the result's shape) of dim= (not None) over 'shape'."""
    nd = len(shape)
    if isinstance(dim, int) and not isinstance(dim, bool):
        dims = (dim,)
    else:
        try:
            dims = tuple(dim)
        except TypeError:
            raise TypeError("%s: dim is %r; an int or a tuple of ints is expected"
                            % (what, dim)) from None
    red = []
    lim = nd if nd else 1
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError("%s: dim holds %r; ints are expected" % (what, d))
        if not -lim <= d < lim:
            raise IndexError("%s: dim %d is out of range for %d dimension%s (%d to %d)"
                             % (what, d, nd, "" if nd == 1 else "s", -lim, lim - 1))
        if d % lim in red:
            raise ValueError("%s: dim %d appears twice in dim=%r" % (what, d, dim))
        red.append(d % lim)
    if not red:   # dim=(): every dim, as torch's
        red = list(range(nd))
    red.sort()
    if keepdim:
        res = tuple(1 if i in red else shape[i] for i in range(nd))
    else:
        res = tuple(shape[i] for i in range(nd) if i not in red)
    return red, res


def _dense_order(shape, strides):
    """The dims of a view, outermost first in memory, when its elements are one dense block
    laid out in another order than C's (its dims permuted: x.t(), x.mT, x.permute(...)),
    the dims of one element left out; None when they are not (a slice with gaps, a broadcast,
    negative or overlapping strides). 'strides' in elements."""
    order = sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: -strides[d])
    step = 1
    for d in reversed(order):
        if strides[d] != step:
            return None
        step *= shape[d]
    return order


def _strided_axis(dim, shape, strides, keepdim, what, ordered):
    """_axis for a view whose elements are one dense block in another order (_dense_order),
    None for any other view: (the result's shape, the axis or None), the axis being the
    memory viewed as [outer, len, inner] with the reduced dims in len; dim=None reduces every
    element (the axis None). The reduced dims (of more than one element) must be adjacent in
    memory, and the dims kept in the view's order there, so that the result is a contiguous
    array of the result's shape; with 'ordered' (argmin/argmax, an operator that does not
    commute) the reduced dims too, so that an index along them, or the order of the combine,
    is the view's."""
    order = _dense_order(shape, strides)
    if order is None:
        return None
    nd = len(shape)
    if dim is None:
        red, res = list(range(nd)), ((1,) * nd if keepdim else ())
    else:
        red, res = _reduced(dim, shape, keepdim, what)
    big = [d for d in red if shape[d] != 1]
    pos = sorted(order.index(d) for d in big)
    lo, hi = (pos[0], pos[-1]) if pos else (len(order), len(order) - 1)
    layout = "x is a view of shape %r with strides %r in elements" % (tuple(shape),
                                                                      tuple(strides))
    if pos and hi - lo + 1 != len(pos):
        raise NotImplementedError(
            "%s: %s: the dims it reduces are not adjacent in memory (pass x.contiguous())"
            % (what, layout))
    kept = order[:lo] + order[hi + 1:]
    if kept != sorted(kept):
        raise NotImplementedError(
            "%s: %s: the dims it keeps are in another order in memory, and redtune writes "
            "the result contiguous (pass x.contiguous())" % (what, layout))
    if ordered and order[lo:hi + 1] != big:
        raise NotImplementedError(
            "%s: %s: the dims it reduces are in another order in memory, which changes the "
            "index (or an operator's order) along them (pass x.contiguous())" % (what, layout))
    if not kept:
        return res, None
    return res, (_prod(shape[order[i]] for i in range(lo)),
                 _prod(shape[order[i]] for i in range(lo, hi + 1)),
                 _prod(shape[order[i]] for i in range(hi + 1, len(order))))


def _dims(dim, shape, keepdim, what):
    """The result's shape (see _axis)."""
    return _axis(dim, shape, keepdim, what)[0]
