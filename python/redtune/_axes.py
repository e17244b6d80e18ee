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
    if _prod(shape[i] for i in range(nd) if i not in red) == 1:
        return res, None
    lo, hi = red[0], red[-1]
    if hi - lo + 1 != len(red):
        raise NotImplementedError(
            "%s: dim=%r of an array of shape %r: redtune reduces along one axis, or along "
            "adjacent axes as one; these are not adjacent (move them together first: "
            "x.movedim(...).contiguous())" % (what, dim, tuple(shape)))
    return res, (_prod(shape[:lo]), _prod(shape[lo:hi + 1]), _prod(shape[hi + 1:]))


def _dims(dim, shape, keepdim, what):
    """The result's shape (see _axis)."""
    return _axis(dim, shape, keepdim, what)[0]
