"""PyTorch integration: the custom operator torch.ops.redtune.reduce(x, op, dim=None), so
that a torch.compile graph calls redtune without a graph break (redtune.reduce and the
shortcuts route to it while torch is compiling); dim gives the reduction along that axis.
Registered once, when torch is imported (at `import redtune` if torch was imported before,
else at the first torch tensor seen)."""
import threading
from typing import Optional

_lock = threading.Lock()
_done = False

ARG_NAMES = ("argmin", "argmax")


def register(torch):
    """Define redtune::reduce(Tensor x, str op, int? dim=None) with torch.library (custom_op, PyTorch 2.4+); a no-op on an
    older PyTorch or when done already. Returns whether the operator exists."""
    global _done
    if _done:
        return True
    with _lock:
        if _done:
            return True
        lib = getattr(torch, "library", None)
        if lib is None or not hasattr(lib, "custom_op"):
            return False
        from . import _args, _axes, _core

        @lib.custom_op("redtune::reduce", mutates_args=())
        def reduce_op(x: torch.Tensor, op: str, dim: Optional[int] = None) -> torch.Tensor:
            r = _core._reduce(x, op, dim, False, None, None, None, "torch.ops.redtune.reduce",
                              raw_pair=True)
            # argmin/argmax of the whole tensor give a view of a {value, index} pair: the
            # graph wants a tensor of its own (a custom op's output may not be a view); along
            # an axis they give the index alone, a tensor of its own already.
            return r.clone() if op in ARG_NAMES and r._base is not None else r

        @reduce_op.register_fake
        def _(x, op, dim=None):
            from . import _arrays, _types
            from . import _consts as C
            shape = ()
            if dim is not None:
                shape = _axes._axis(dim, tuple(x.shape), False, "torch.ops.redtune.reduce")[0]
            if op in ARG_NAMES:
                return x.new_empty(shape, dtype=torch.int64)
            rt = _arrays._torch_types(torch)[x.dtype]
            spec, res, k = _types.resolve(C.OPS[op], rt)
            return x.new_empty(shape if k == 1 else shape + (2,),
                               dtype=_args._torch_dtype(torch, res))

        _done = True
        return True
