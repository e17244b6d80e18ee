"""redtune: tuned GPU reductions of PyTorch, CuPy, Numba, JAX ... arrays, over libredtune.

    import torch, redtune
    x = torch.rand(1 << 20, device="cuda")
    redtune.sum(x)                       # a 0-d tensor on x's device, enqueued on the current stream
    redtune.reduce(x, "argmax")          # the int64 index
    redtune.reduce_offsets(x, offsets, "max")
    print(redtune.explain(x, "min"))     # which kernel, from which database entry

docs/python.md has the whole story. Pure Python: libredtune.so is called through ctypes.
"""
import sys as _sys

from . import _consts as consts
from ._consts import OPS, TYPES, RT_VERSION_STRING as __version__
from ._lib import (Error, NoMemoryError, FileError, LuaError, CompileError, CUDAError,
                   DatabaseError, NotFoundError, InvalidArgumentError, VerifyError,
                   KernelTimeoutError, KernelFaultError, CaptureError, error, library,
                   library_path)
from ._context import Context, UserOp, context, set_database, register_op
from ._args import stream_handle
from ._core import (reduce, temp_bytes, sum, prod, min, max, argmin, argmax, amax, asum, sumsq,
                    norm2, mean, var_mean, std_mean, explain)
from ._segments import reduce_offsets, reduce_keys

__all__ = ["Error", "NoMemoryError", "FileError", "LuaError", "CompileError", "CUDAError",
           "DatabaseError", "NotFoundError", "InvalidArgumentError", "VerifyError",
           "KernelTimeoutError", "KernelFaultError", "CaptureError", "Context", "UserOp", "context",
           "set_database", "register_op", "reduce", "temp_bytes", "sum", "prod", "min", "max",
           "argmin", "argmax", "amax", "asum", "sumsq", "norm2", "mean", "var_mean", "std_mean",
           "reduce_offsets", "reduce_keys", "explain", "OPS", "TYPES",
           "consts", "library", "library_path", "error", "stream_handle", "register_torch_ops",
           "__version__"]


def register_torch_ops():
    """Define torch.ops.redtune.reduce (PyTorch 2.4+) now; True when it exists."""
    import torch
    from . import _torch
    return _torch.register(torch)


if "torch" in _sys.modules:
    from . import _torch as _t
    _t.register(_sys.modules["torch"])
