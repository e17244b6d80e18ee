"""PyTorch integration: the custom operator torch.ops.redtune.reduce(x, op), so that a
torch.compile graph calls redtune without a graph break (redtune.reduce and the shortcuts
route to it while torch is compiling). Registered once, when torch is imported (at
`import redtune` if torch was imported before, else at the first torch tensor seen)."""
import threading

_lock = threading.Lock()
_done = False

ARG_NAMES = ("argmin", "argmax")


def register(torch):
    """Define redtune::reduce with torch.library (custom_op, PyTorch 2.4+); a no-op on an
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
        from . import _core

        @lib.custom_op("redtune::reduce", mutates_args=())
        def reduce_op(x: torch.Tensor, op: str) -> torch.Tensor:
            r = _core._reduce(x, op, None, False, None, None, None, "torch.ops.redtune.reduce",
                              raw_pair=True)
            # argmin/argmax give a view of a {value, index} pair: the graph wants a tensor
            # of its own (a custom op's output may not be a view).
            return r.clone() if op in ARG_NAMES else r

        @reduce_op.register_fake
        def _(x, op):
            if op in ARG_NAMES:
                return x.new_empty((), dtype=torch.int64)
            from . import _arrays, _types
            from . import _consts as C
            rt = _arrays._torch_types(torch)[x.dtype]
            spec, res, k = _types.resolve(C.OPS[op], rt)
            return x.new_empty(() if k == 1 else (2,), dtype=_core._torch_dtype(torch, res))

        _done = True
        return True
