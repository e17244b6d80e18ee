"""Reading an operator file (docs/ops.md) in Python, for redtune.register_op(path).

The tuner runs these files in its Lua sandbox; this package has no Lua, so it reads the form
every operator file of the project has: `return { key = value, ... }` whose values are
literals (strings, long strings, numbers, booleans) or, for 'sample', a function (skipped:
only the tuner's test data uses it). The strings come out as Lua reads them (escapes decoded,
a long string's first newline dropped), and a number identity is written as the tuner writes
it ("%.17g", "(5LL)", "5ULL"), so the definition fingerprint equals the tuner's and the
database's winners for the operator serve. Anything else (a local, an expression, a call) is
a ValueError naming the file and line: register the description instead.
"""
import math
import re

from . import _consts as C

FIELDS = ("name", "type", "identity", "combine", "commutative", "sample", "tolerance")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM = re.compile(r"0[xX](?:[0-9a-fA-F]*\.?[0-9a-fA-F]*)(?:[pP][+-]?[0-9]+)?"
                  r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
        "\\": "\\", '"': '"', "'": "'", "\n": "\n"}


class _Lexer:
    def __init__(self, text, path):
        self.s, self.i, self.path = text, 0, path

    def fail(self, msg, at=None):
        line = self.s.count("\n", 0, self.i if at is None else at) + 1
        raise ValueError("%s:%d: %s (the Python reader takes `return { key = literal, ... }`;"
                         " register a description instead, docs/python.md)"
                         % (self.path, line, msg))

    def _long_bracket(self):
        """At '[', the level of a long bracket '[==[' there, or -1."""
        m = re.compile(r"\[(=*)\[").match(self.s, self.i)
        return len(m.group(1)) if m else -1

    def _long(self, level):
        start = self.i
        self.i += level + 2
        close = "]" + "=" * level + "]"
        end = self.s.find(close, self.i)
        if end < 0:
            self.fail("unfinished long string or comment", start)
        body = self.s[self.i:end]
        self.i = end + len(close)
        if body.startswith("\r\n") or body.startswith("\n\r"):
            body = body[2:]
        elif body[:1] in ("\n", "\r"):
            body = body[1:]
        return body

    def _quoted(self):
        q, start = self.s[self.i], self.i
        self.i += 1
        out = []
        while True:
            if self.i >= len(self.s) or self.s[self.i] == "\n":
                self.fail("unfinished string", start)
            c = self.s[self.i]
            self.i += 1
            if c == q:
                return "".join(out)
            if c != "\\":
                out.append(c)
                continue
            e = self.s[self.i:self.i + 1]
            self.i += 1
            if e in _ESC:
                out.append(_ESC[e])
            elif e == "x":
                out.append(chr(int(self.s[self.i:self.i + 2], 16)))
                self.i += 2
            elif e == "z":
                while self.i < len(self.s) and self.s[self.i].isspace():
                    self.i += 1
            elif e.isdigit():
                m = re.compile(r"[0-9]{1,3}").match(self.s, self.i - 1)
                out.append(chr(int(m.group(0))))
                self.i = m.end()
            elif e == "u":
                m = re.compile(r"\{([0-9a-fA-F]+)\}").match(self.s, self.i)
                if not m:
                    self.fail("bad \\u escape")
                out.append(chr(int(m.group(1), 16)))
                self.i = m.end()
            else:
                self.fail("invalid escape '\\%s'" % e)

    def next(self):
        """The next token as (kind, value, position): kind is 'name', 'str', 'num', 'op'
        or 'eof'."""
        s = self.s
        while True:
            while self.i < len(s) and s[self.i].isspace():
                self.i += 1
            if s.startswith("--", self.i):
                self.i += 2
                if s.startswith("[", self.i) and self._long_bracket() >= 0:
                    self._long(self._long_bracket())
                else:
                    end = s.find("\n", self.i)
                    self.i = len(s) if end < 0 else end
                continue
            break
        at = self.i
        if self.i >= len(s):
            return ("eof", None, at)
        c = s[self.i]
        if c in "\"'":
            return ("str", self._quoted(), at)
        if c == "[" and self._long_bracket() >= 0:
            return ("str", self._long(self._long_bracket()), at)
        m = _NUM.match(s, self.i)
        if c.isdigit() or (c == "." and m and m.group(0) != "."):
            self.i = m.end()
            return ("num", m.group(0), at)
        m = _NAME.match(s, self.i)
        if m:
            self.i = m.end()
            return ("name", m.group(0), at)
        for op in ("==", "~=", "<=", ">=", "//", "::", "<<", ">>", "..."):
            if s.startswith(op, self.i):
                self.i += len(op)
                return ("op", op, at)
        self.i += 1
        return ("op", c, at)


def _number(text):
    """A Lua numeral's value: int for an integer numeral (hex wraps modulo 2^64), float else."""
    t = text.lower()
    if t.startswith("0x"):
        if "." in t or "p" in t:
            return float.fromhex(t)
        v = int(t, 16) & (2**64 - 1)
        return v - 2**64 if v >= 2**63 else v
    if "." in t or "e" in t:
        return float(t)
    v = int(t)
    return v if v < 2**63 else float(v)   # Lua reads a decimal integer that overflows as float


def _skip_function(lx):
    """Past a function value, from after 'function' to its matching 'end'."""
    depth = 1
    while depth:
        kind, val, at = lx.next()
        if kind == "eof":
            lx.fail("unfinished function", at)
        if kind == "name":
            if val in ("function", "if", "do"):
                depth += 1
            elif val == "end":
                depth -= 1


def read_table(text, path):
    """The literal fields of an operator file, as {key: value}."""
    lx = _Lexer(text, path)

    def expect(kind, val=None):
        k, v, at = lx.next()
        if k != kind or (val is not None and v != val):
            lx.fail("expected %s, found %r" % (val or kind, v if k != "eof" else "the end"), at)
        return v

    expect("name", "return")
    expect("op", "{")
    fields = {}
    while True:
        kind, key, at = lx.next()
        if kind == "op" and key == "}":
            break
        if kind != "name":
            lx.fail("expected a field name, found %r" % key, at)
        expect("op", "=")
        kind, val, at = lx.next()
        neg = False
        if kind == "op" and val == "-":
            neg = True
            kind, val, at = lx.next()
            if kind != "num":
                lx.fail("expected a number after '-'", at)
        if kind == "str":
            value = val
        elif kind == "num":
            value = _number(val)
            value = -value if neg else value
        elif kind == "name" and val in ("true", "false"):
            value = val == "true"
        elif kind == "name" and val == "function":
            _skip_function(lx)
            value = None
        else:
            lx.fail("field '%s': a literal is expected, found %r" % (key, val), at)
        if key in fields:
            lx.fail("field '%s' given twice" % key, at)
        fields[key] = value
        kind, val, at = lx.next()
        if kind == "op" and val == "}":
            break
        if not (kind == "op" and val in ",;"):
            lx.fail("expected ',' or '}', found %r" % val, at)
    kind, val, at = lx.next()
    if kind == "op" and val == ";":
        kind, val, at = lx.next()
    if kind != "eof":
        lx.fail("unexpected %r after the table" % val, at)
    return fields


def identity_text(value, tname, path):
    """A number identity written as the tuner writes it (tuner/opfile.c)."""
    if isinstance(value, bool):
        raise ValueError("%s: field 'identity' must be a string or a number" % path)
    if tname in ("f32", "f64"):
        if not math.isfinite(value):
            raise ValueError("%s: field 'identity' is %g; write an infinity or NaN as a CUDA "
                             "expression string" % (path, value))
        return "%.17g" % value
    if isinstance(value, float):
        if not value.is_integer() or abs(value) >= 2**63:
            raise ValueError("%s: field 'identity' must be an integer for %s, not %g"
                             % (path, tname, value))
        value = int(value)
    if tname in ("i32", "i64"):
        return "(%dLL)" % value
    return "%dULL" % (value & (2**64 - 1))


def load(path):
    """The description (name, type, identity, combine, commutative) of operator file 'path'."""
    with open(path, "rb") as f:
        raw = f.read(1 << 20 | 1)
    if len(raw) > 1 << 20:
        raise ValueError("%s: larger than 1 MiB" % path)
    fields = read_table(raw.decode("utf-8", "surrogateescape"), path)
    for key in fields:
        if key not in FIELDS:
            raise ValueError("%s: unknown field '%s' (the fields: %s)" % (path, key,
                                                                          " ".join(FIELDS)))
    for key in ("name", "type", "identity", "combine", "commutative"):
        if key not in fields:
            raise ValueError("%s: field '%s' is missing" % (path, key))
    tname = fields["type"]
    if tname not in C.TYPES:
        raise ValueError("%s: field 'type' is %r; one of %s" % (path, tname,
                                                                 ", ".join(C.TYPES)))
    if not isinstance(fields["commutative"], bool):
        raise ValueError("%s: field 'commutative' must be true or false" % path)
    for key in ("name", "combine"):
        if not isinstance(fields[key], str):
            raise ValueError("%s: field '%s' must be a string" % (path, key))
    ident = fields["identity"]
    if not isinstance(ident, str):
        ident = identity_text(ident, tname, path)
    return {"name": fields["name"], "type": tname, "identity": ident,
            "combine": fields["combine"], "commutative": fields["commutative"]}
