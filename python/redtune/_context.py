"""Contexts and operators: the Context of a device (rt_open) and its per-device cache
(context(), set_database()), user operators (UserOp, register_op) and the names and values of
the built-in ones."""
import ctypes
import os
import threading

from . import _consts as C
from ._lib import check, error, library, require, rt_op_desc


ARG_OPS = (C.RT_ARGMIN, C.RT_ARGMAX)
OP_NAMES = {v: k for k, v in C.OPS.items()}

# ---------------------------------------------------------------- contexts

_db = None            # set_database(); None: the library's search (docs/api.md)
_contexts = {}        # device ordinal -> Context
_contexts_lock = threading.Lock()


class Context:
    """libredtune opened on one GPU (rt_open): the tuned database, the kernels loaded so far,
    the registered operators. One per device is made and cached by the calls (context());
    make one yourself for another database, and close() it when done. Thread-safe: the
    library is, and this object locks only around registering operators."""

    def __init__(self, device=0, db=None):
        lib = library()
        h = ctypes.c_void_p()
        msg = ctypes.create_string_buffer(4096)
        rc = lib.rt_open_err(os.fsencode(db) if db else None, int(device), ctypes.byref(h),
                             msg, len(msg))
        if rc != 0:
            raise error(rc, msg.value.decode("utf-8", "replace"))
        self.device = int(device)
        self.db = db
        self._h = h.value
        self._lock = threading.Lock()
        self._ops = {}   # UserOp -> handle on this context

    @property
    def handle(self):
        """The rt_ctx pointer, as an int (for calling libredtune directly)."""
        if self._h is None:
            raise ValueError("redtune: the context of device %d is closed" % self.device)
        return self._h

    def close(self):
        """rt_close: waits for the device's work, frees what the context holds."""
        with _contexts_lock:
            if _contexts.get(self.device) is self:   # context() opens a new one next time
                del _contexts[self.device]
        h, self._h = self._h, None
        if h is not None:
            library().rt_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def op_handle(self, op):
        """The rt_op value of 'op' (a name, an rt_op value or a UserOp) on this context,
        registering a UserOp the first time."""
        if isinstance(op, UserOp):
            h = self._ops.get(op)
            if h is None:
                with self._lock:
                    h = self._ops.get(op)
                    if h is None:
                        h = op._register(self)
                        self._ops[op] = h
            return h
        return _builtin_op(op, "redtune")[0]

    def temp_bytes(self, op, rtype, n):
        """rt_temp_bytes: the temporary storage a reduce(..., temp=) of n elements needs."""
        size = ctypes.c_size_t()
        check(library().rt_temp_bytes(self.handle, self.op_handle(op), rtype, n,
                                      ctypes.byref(size)), self._h)
        return size.value

    def release_temp(self):
        """rt_release_temp: free the temporary storage the context keeps per stream."""
        check(library().rt_release_temp(self.handle), self._h)

    def explain(self, op, rtype, n):
        """rt_explain: which kernel serves (op, type, n) and why, as text."""
        buf = ctypes.create_string_buffer(8192)
        check(library().rt_explain(self.handle, self.op_handle(op), rtype, n, buf, len(buf)),
              self._h)
        return buf.value.decode("utf-8", "replace")

    def axis_temp_bytes(self, op, rtype, outer, len_, inner):
        """rt_axis_temp_bytes: the temporary storage of reduce(..., dim=, temp=)."""
        size = ctypes.c_size_t()
        fn = require(library(), "rt_axis_temp_bytes", "redtune.temp_bytes")
        check(fn(self.handle, self.op_handle(op), rtype, outer, len_, inner, ctypes.byref(size)),
              self._h)
        return size.value

    def explain_axis(self, op, rtype, outer, len_, inner):
        """rt_explain_axis: which kernel reduces [outer, len, inner] along len, and why."""
        buf = ctypes.create_string_buffer(8192)
        fn = require(library(), "rt_explain_axis", "redtune.explain")
        check(fn(self.handle, self.op_handle(op), rtype, outer, len_, inner, buf, len(buf)),
              self._h)
        return buf.value.decode("utf-8", "replace")

    def explain_segmented(self, layout, op, rtype, n, nseg, off64=False, skewed=False,
                          uniform=False):
        """rt_explain_segmented; layout "keys" or "offsets"; skewed: RT_SEG_SKEWED; uniform:
        RT_SEG_UNIFORM."""
        lay = {"keys": C.RT_LAYOUT_KEYS, "offsets": C.RT_LAYOUT_OFFSETS}.get(layout)
        if lay is None:
            raise ValueError("redtune.explain_segmented: layout is %r; 'keys' or 'offsets'"
                             % (layout,))
        buf = ctypes.create_string_buffer(8192)
        check(library().rt_explain_segmented(
            self.handle, lay, self.op_handle(op), rtype, n, nseg,
            (C.RT_SEG_OFF64 if off64 else 0) | (C.RT_SEG_SKEWED if skewed else 0)
            | (C.RT_SEG_UNIFORM if uniform else 0), buf, len(buf)), self._h)
        return buf.value.decode("utf-8", "replace")


def set_database(path):
    """The database the contexts opened from now on use (None: the library's search:
    $REDTUNE_DB, ./redtune.db, the one beside libredtune, which is the package's own, the
    installed one). Contexts already open keep theirs: call this before the first reduction."""
    global _db
    _db = path


def context(device=None):
    """The cached Context of CUDA device 'device' (default: 0), opened the first time."""
    dev = 0 if device is None else int(device)
    ctx = _contexts.get(dev)
    if ctx is None:
        with _contexts_lock:
            ctx = _contexts.get(dev)
            if ctx is None:
                ctx = Context(dev, _db)
                _contexts[dev] = ctx
    return ctx


# ---------------------------------------------------------------- operators

class UserOp:
    """An operator of your own (docs/ops.md): name, type, identity, combine, commutative.
    Made by register_op; registered on each device's context at its first use there (or at
    once, with register_op(..., device=N)). Pass it as the 'op' of any call."""

    def __init__(self, name, type, identity, combine, commutative):
        if type not in C.TYPES:
            raise ValueError("redtune.register_op: type is %r; one of %s"
                             % (type, ", ".join(C.TYPES)))
        self.name, self.type, self.identity = str(name), type, str(identity)
        self.combine, self.commutative = str(combine), bool(commutative)
        self.rt_type = C.TYPES[type]

    def __repr__(self):
        return "redtune.UserOp(%r, %r, commutative=%r)" % (self.name, self.type,
                                                            self.commutative)

    def _register(self, ctx):
        desc = rt_op_desc(self.name.encode(), self.rt_type, self.identity.encode(),
                          self.combine.encode(), int(self.commutative))
        h = ctypes.c_int()
        check(library().rt_register_op(ctx.handle, ctypes.byref(desc), ctypes.byref(h)),
              ctx.handle)
        return h.value


def register_op(desc=None, device=None, **fields):
    """A user operator from an operator file's path (the Lua file of `redtune --op-file`,
    read as described in docs/python.md), a dict, or keywords (name, type, identity,
    combine, commutative). With 'device' it is registered on that device's context now, so
    that a bad definition (or one NVRTC refuses) raises here."""
    if isinstance(desc, (str, bytes, os.PathLike)):
        from . import _opfile
        fields = dict(_opfile.load(os.fsdecode(desc)), **fields)
    elif isinstance(desc, dict):
        fields = dict(desc, **fields)
    elif desc is not None:
        raise TypeError("redtune.register_op: desc is a %s; an operator file path or a dict"
                        % type(desc).__name__)
    missing = [k for k in ("name", "type", "identity", "combine", "commutative")
               if k not in fields]
    if missing:
        raise TypeError("redtune.register_op: missing %s" % ", ".join(missing))
    unknown = set(fields) - {"name", "type", "identity", "combine", "commutative"}
    if unknown:
        raise TypeError("redtune.register_op: unknown field %s" % ", ".join(sorted(unknown)))
    op = UserOp(**fields)
    if device is not None:
        context(device).op_handle(op)
    return op


def _builtin_op(op, what):
    """(rt_op, name) of a built-in operator given by name or value."""
    if isinstance(op, str):
        v = C.OPS.get(op)
        if v is None:
            raise ValueError("%s: op is %r; one of %s, or a redtune.UserOp"
                             % (what, op, ", ".join(C.OPS)))
        return v, op
    if isinstance(op, int) and not isinstance(op, bool) and op in OP_NAMES:
        return op, OP_NAMES[op]
    raise ValueError("%s: op is %r; one of %s, or a redtune.UserOp"
                     % (what, op, ", ".join(C.OPS)))
