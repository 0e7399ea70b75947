"""The tree's side of split grading: the code under test in a process of its
own.

The wrapper starts this program as the test uid, with the tree under test
on sys.path and one end of a socket pair on the descriptor named by its
argument. The hidden tests, pytest and every assertion run in another
interpreter, as another uid (testfirst_split); this one imports the tree's
modules, runs what that interpreter asks and answers over the socket.
Nothing here is trusted: the code under test can rewrite this program as
it runs. The other side decodes every answer as a hostile peer's, and never
sends an assertion's expected value here except to a tree object's own
comparison, which it records as decided by the tree.

Frames are a 4-byte big-endian length and UTF-8 JSON; see testfirst_split
for the values and the operations.
"""

import base64
import builtins
import datetime
import decimal
import fractions
import importlib
import io
import json
import keyword
import logging
import math
import os
import pathlib
import queue
import socket
import struct
import sys
import traceback
import threading
import types
import uuid
import warnings

MAX_FRAME = 64 << 20

# Value types that cross by value, by their exact type.
_SCALARS = (type(None), bool, int, float, complex, str, bytes, bytearray)
_CONTAINERS = (tuple, list, dict, set, frozenset)
# The builtin types a tree class may subclass and still cross with its value.
_VALUE_BASES = (bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)

# The dunder methods the other side forwards, when a tree class defines them.
FORWARDED = frozenset("""
__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __bool__ __len__ __iter__
__next__ __reversed__ __contains__ __getitem__ __setitem__ __delitem__
__call__ __str__ __repr__ __format__ __int__ __float__ __index__ __complex__
__bytes__ __enter__ __exit__ __fspath__ __add__ __radd__ __sub__ __rsub__
__mul__ __rmul__ __truediv__ __rtruediv__ __floordiv__ __rfloordiv__ __mod__
__rmod__ __pow__ __rpow__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__
__lshift__ __rlshift__ __rshift__ __rrshift__ __matmul__ __rmatmul__ __neg__
__pos__ __abs__ __invert__ __round__ __iadd__ __isub__ __imul__ __ior__
__iand__ __get__ __set_name__
""".split())

_BUILTIN_NAMES = {name: obj for name, obj in vars(builtins).items()
                  if isinstance(obj, type) or obj is Ellipsis or obj is NotImplemented}


def _crossing_builtin(cls):
    """Whether the other side uses its own copy of builtin class cls: the
    value types, object, type and the builtin exceptions. Other builtin
    types (generators, iterators, functions, modules) are described like
    the tree's own classes, so their objects cross as proxies."""
    return _BUILTIN_NAMES.get(getattr(cls, "__name__", None)) is cls and (
        cls in _VALUE_BASES or cls in (object, type, bytearray) or issubclass(cls, BaseException))


class _Mutable:
    """A list, dict or set the tests read as an attribute (a module's
    registry, say): it crosses with its value and a reference, so the
    tests' changes to it reach the tree's."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _HandleBase:
    """An object of the trusted side: it can be asked for public
    attributes, its text, and the operations its type has (see
    _handle_class), as far as that side allows."""

    __slots__ = ("_hid", "_server", "__weakref__")

    def __init__(self, server, hid):
        self._server, self._hid = server, hid

    def __getattr__(self, name):
        # Private names are asked too, to be refused there: the other side
        # records what the tests' object has and the split did not give
        # (a function's __globals__), for the per-test fallback.
        return self._server.ask({"t": "cbget", "h": self._hid, "n": name})

    def __setattr__(self, name, value):
        if name in _HandleBase.__slots__:
            object.__setattr__(self, name, value)
            return
        self._op("__setattr__", name, value)

    def __repr__(self):
        return self._op("__repr__")

    def __str__(self):
        return self._op("__str__")

    def _op(self, name, *args):
        return self._server.ask({"t": "cbop", "h": self._hid, "n": name, "a": self._server.enc(list(args))})


class TrustedHandle(_HandleBase):
    """The operations a handle may have, for _handle_class to pick."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        return self._server.ask({"t": "cb", "h": self._hid, "a": self._server.enc(list(args)),
                                 "k": self._server.enc(kwargs)})

    def __iter__(self):
        return self._server.ask({"t": "cbiter", "h": self._hid})

    def __next__(self):
        return self._server.ask({"t": "cbnext", "h": self._hid})

    def __enter__(self):
        return self._server.ask({"t": "cbenter", "h": self._hid})

    def __exit__(self, *exc):
        # The traceback stays here; the tests' object hears whether
        # something was raised and, when it is an exception, which.
        msg = {"t": "cbexit", "h": self._hid, "x": exc[0] is not None}
        if isinstance(exc[1], BaseException):
            # The exception crosses as any of the tree's does (by value
            # for a builtin class, else by reference): pytest.raises or
            # assertRaises of the tests, entered by a helper of the tree,
            # judges it there.
            msg["e"] = self._server.exc(exc[1], 0)
        return bool(self._server.ask(msg))


_PARAM_SYNTAX = {"p": "%s", "pk": "%s", "v": "*%s", "k": "%s", "vk": "**%s"}


def _signed(handle, sig):
    """A function of this process with the signature of the tests' function
    behind handle (see testfirst_split._signature): a call of the wrong
    arity fails here, in the caller's frame, as it would in one process;
    one that binds is the handle's call. Its name is the function's; its
    defaults stand for values it does not know, and are left out of the
    call. The handle itself when the signature cannot be written."""
    try:
        name, params = sig
        if not (type(name) is str and name.isidentifier()) or type(params) is not list:
            return handle
        parts, pos, seen, star = [], [], set(), False
        order = ("p", "pk", "v", "k", "vk")
        last = 0
        for p in params:
            kind, pname, has_default = p
            if kind not in _PARAM_SYNTAX or type(pname) is not str or not pname.isidentifier() \
                    or pname.startswith("_tf_") or pname in seen or keyword.iskeyword(pname):
                return handle
            rank = order.index(kind)
            if rank < last:
                return handle
            last = rank
            seen.add(pname)
            if kind == "k" and not star:
                parts.append("*")
                star = True
            if kind == "v":
                star = True
            text = _PARAM_SYNTAX[kind] % pname
            if has_default is True and kind in ("p", "pk", "k"):
                text += "=_tf_D"
            parts.append(text)
            pos.append((kind, pname))
        if any(k == "p" for k, _ in pos):
            i = max(i for i, (k, _) in enumerate(pos) if k == "p")
            parts.insert(i + 1, "/")
        src = "def %s(%s):\n    return _tf_call(%s)\n" % (
            name, ", ".join(parts), ", ".join("(%r, %r, %s)" % (k, n, n) for k, n in pos))
        ns = _Globals(handle._server, {"_tf_D": _DEFAULT, "_tf_call": lambda *got: _call_signed(handle, got)})
        exec(compile(src, "<a function of the tests>", "exec"), ns)
        fn = ns[name]
        fn.__qualname__ = name
        return fn
    except Exception:
        return handle


class _Globals(dict):
    """A signed function's globals: what the tree looks up there would have
    been the test module's, so a lookup tells the other side (a refusal in
    fixed words, as for a handle's __globals__) and finds nothing."""

    def __init__(self, server, names):
        super().__init__(names)
        self._server = server

    def _refused(self):
        self._server.send({"t": "refuse", "k": "globals"})

    def __missing__(self, key):
        self._refused()
        raise KeyError(key)


def _reporting_read(name):
    read = getattr(dict, name)

    def m(self, *args):
        self._refused()
        return read(self, *args)
    m.__name__ = name
    return m


for _name in ("get", "__contains__", "keys", "items", "values", "__iter__"):
    setattr(_Globals, _name, _reporting_read(_name))


class _Default:
    __slots__ = ()

    def __repr__(self):
        return "<a default of the tests' function>"


_DEFAULT = _Default()


def _call_signed(handle, got):
    """The handle's call with the arguments a signed function took: the
    positional ones up to the first left to its default, the rest by
    name."""
    args, kwargs, by_name = [], {}, False
    for kind, name, value in got:
        if kind == "v":
            if not by_name:
                args.extend(value)
        elif kind == "vk":
            kwargs.update(value)
        elif value is _DEFAULT:
            by_name = True
        elif kind == "k" or (by_name and kind == "pk"):
            kwargs[name] = value
        elif not by_name:
            args.append(value)
    return handle(*args, **kwargs)


def _handle_op(name):
    def op(self, *args):
        return self._op(name, *args)
    op.__name__ = name
    return op


# The operations an object of the tests answers for the tree (a sequence,
# a mapping, an ordering); the other side checks each again.
HANDLE_OPS = ("__len__", "__getitem__", "__contains__", "__bool__", "__hash__", "__eq__", "__ne__", "__lt__",
              "__le__", "__gt__", "__ge__", "__index__", "__int__", "__float__")
# Operations an object of the tests has that a handle refuses: asked
# anyway, so that the other side records the refusal.
REFUSED_OPS = ("__setitem__", "__delitem__")
_handle_classes = {}


def _handle_class(ops):
    """The class of a handle whose object's type has ops: only those of
    the operations a handle can forward."""
    ops = frozenset(o for o in ops if isinstance(o, str))
    cls = _handle_classes.get(ops)
    if cls is None:
        ns = {"__slots__": ()}
        for name in HANDLE_OPS:
            if name in ops:
                ns[name] = _handle_op(name)
        for name in REFUSED_OPS:
            if name in ops:
                ns[name] = _handle_op(name)
        if "__hash__" not in ops:
            ns["__hash__"] = None
        for name in ("__call__", "__iter__", "__next__", "__enter__", "__exit__"):
            if name in ops:
                ns[name] = getattr(TrustedHandle, name)
        if "!__iter__" in ops:
            # The object's class sets __iter__ = None: not iterable, even
            # through __getitem__.
            ns["__iter__"] = None
        cls = _handle_classes[ops] = type("TrustedHandle", (_HandleBase,), ns)
    return cls


class Server:
    def __init__(self, sock):
        self.sock = sock
        self.objs = {}   # rid -> object
        self.rids = {}   # id(object) -> rid
        self.next = 1
        self.described = set()
        self.classes = {}
        self.handles = {}
        self.lock = threading.RLock()
        self.mail = {0: queue.SimpleQueue()}
        self.read_lock = threading.Lock()
        self.next_conversation = 1

    # Framing.

    def send(self, msg):
        with self.lock:
            if self.classes:
                msg["classes"], self.classes = self.classes, {}
            data = json.dumps(msg, separators=(",", ":"), allow_nan=False).encode()
            self.sock.sendall(struct.pack(">I", len(data)) + data)

    def recv(self):
        head = self._read(4)
        n = struct.unpack(">I", head)[0]
        if n > MAX_FRAME:
            raise SystemExit("testfirst_tree: frame too large")
        return json.loads(self._read(n))

    def _read(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise SystemExit(0)
            buf += chunk
        return bytes(buf)

    # Values.

    def ref(self, obj):
        with self.lock:
            return self._ref(obj)

    def _ref(self, obj):
        key = id(obj)
        rid = self.rids.get(key)
        if rid is None or self.objs.get(rid) is not obj:
            rid = self.next
            self.next += 1
            self.objs[rid], self.rids[key] = obj, rid
        return rid

    def klass(self, cls, instance=False):
        """The class value of cls; instance is set when it is the class of
        an object crossing by reference (a bare object(), say), which
        the other side needs described, not named."""
        if _crossing_builtin(cls) and not (instance and cls is object):
            return ["bt", cls.__name__]
        with self.lock:
            return self._klass(cls)

    def _klass(self, cls):
        rid = self._ref(cls)
        if rid not in self.described:
            self.described.add(rid)
            bases = [self.klass(b) for b in cls.__bases__ if b is not object or cls is not object]
            own = set()
            attrs = []
            for c in cls.__mro__:
                if _crossing_builtin(c) and c is not cls:
                    continue
                for name in vars(c):
                    if name in FORWARDED:
                        own.add(name)
                    elif not name.startswith("__") and len(attrs) < 10000:
                        attrs.append(name)
            value = next((b.__name__ for b in cls.__mro__ if b in _VALUE_BASES), None)
            meta = [n for n in ("__iter__", "__len__", "__getitem__", "__contains__")
                    if any(n in vars(m) for m in type(cls).__mro__ if m is not type and m is not object)]
            self.classes[str(rid)] = {
                "name": str(cls.__name__), "qualname": str(getattr(cls, "__qualname__", cls.__name__)),
                "module": str(getattr(cls, "__module__", "")), "bases": bases,
                "dunders": sorted(own), "attrs": sorted(set(attrs)), "value": value,
                "exception": issubclass(cls, BaseException), "meta": meta,
                "is_module": issubclass(cls, types.ModuleType),
            }
        return ["k", rid]

    def enc(self, v, depth=0):
        if depth > 100:
            raise ValueError("value nested too deep to cross")
        t = type(v)
        if v is None or t is bool:
            return v
        if t is str:
            return v
        if t is int:
            return ["i", format(v, "x")]
        if t is float:
            return ["f", repr(v)]
        if t is complex:
            return ["c", repr(v.real), repr(v.imag)]
        if t is bytes:
            return ["y", base64.b64encode(v).decode()]
        if t is bytearray:
            return ["ba", base64.b64encode(bytes(v)).decode()]
        if t in (tuple, list, set, frozenset):
            tag = {tuple: "t", list: "l", set: "s", frozenset: "fs"}[t]
            return [tag, [self.enc(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[self.enc(k, depth + 1), self.enc(x, depth + 1)] for k, x in v.items()]]
        if isinstance(v, _HandleBase):
            return ["h", v._hid]
        if t is _Mutable:
            value = v.value
            return ["mut", self.ref(value), self.enc(value, depth)]
        if v is Ellipsis or v is NotImplemented or (isinstance(v, type) and _BUILTIN_NAMES.get(getattr(v, "__name__", None)) is v):
            return ["bt", "Ellipsis" if v is Ellipsis else "NotImplemented" if v is NotImplemented else v.__name__]
        std = self.std(v, t, depth)
        if std is not None:
            return std
        if isinstance(v, type):
            return self.klass(v)
        if isinstance(v, BaseException):
            return self.exc(v, depth)
        for base in _VALUE_BASES:
            if isinstance(v, base):
                return ["sub", self.ref(v), self.klass(t), self.enc(base(v) if base not in (str, bytes) else base.__str__(v) if base is str else bytes(v), depth + 1)]
        return ["r", self.ref(v), self.klass(t, instance=True)]

    def std(self, v, t, depth):
        if t is datetime.date:
            return ["std", "date", v.isoformat()]
        if t is datetime.datetime and v.tzinfo is None:
            return ["std", "datetime", v.isoformat()]
        if t is datetime.datetime and v.tzinfo is datetime.timezone.utc:
            return ["std", "datetime_utc", v.replace(tzinfo=None).isoformat()]
        if t is datetime.datetime and type(v.tzinfo) is datetime.timezone and v.tzinfo.utcoffset(None).microseconds == 0:
            return ["std", "datetime_tz", [v.replace(tzinfo=None).isoformat(), int(v.tzinfo.utcoffset(None).total_seconds())]]
        if t is datetime.timezone and v.utcoffset(None).microseconds == 0:
            return ["std", "timezone", int(v.utcoffset(None).total_seconds())]
        if t is datetime.time and v.tzinfo is None:
            return ["std", "time", v.isoformat()]
        if t is datetime.timedelta:
            return ["std", "timedelta", [v.days, v.seconds, v.microseconds]]
        if t is decimal.Decimal:
            return ["std", "decimal", str(v)]
        if t is fractions.Fraction:
            return ["std", "fraction", [format(v.numerator, "x"), format(v.denominator, "x")]]
        if t is uuid.UUID:
            return ["std", "uuid", str(v)]
        if t in (pathlib.PosixPath, pathlib.PurePosixPath):
            return ["std", "path" if t is pathlib.PosixPath else "purepath", str(v)]
        if t is range:
            return ["std", "range", [format(v.start, "x"), format(v.stop, "x"), format(v.step, "x")]]
        if t is slice:
            return ["std", "slice", [self.enc(v.start, depth + 1), self.enc(v.stop, depth + 1), self.enc(v.step, depth + 1)]]
        return None

    def exc(self, e, depth):
        try:
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename != __file__]
            tb = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(e), e))
            tb = tb[-8000:]
        except Exception:
            tb = ""
        return ["x", self.klass(type(e)), self.enc(tuple(e.args), depth + 1), self.ref(e), tb]

    def dec(self, v, depth=0):
        if depth > 100:
            raise ValueError("value nested too deep")
        if v is None or v is True or v is False or type(v) is str:
            return v
        tag = v[0]
        if tag == "i":
            return int(v[1], 16)
        if tag == "f":
            return float(v[1])
        if tag == "c":
            return complex(float(v[1]), float(v[2]))
        if tag == "y":
            return base64.b64decode(v[1])
        if tag == "ba":
            return bytearray(base64.b64decode(v[1]))
        if tag in ("t", "l", "s", "fs"):
            items = [self.dec(x, depth + 1) for x in v[1]]
            return {"t": tuple, "l": list, "s": set, "fs": frozenset}[tag](items)
        if tag == "d":
            return {self.dec(k, depth + 1): self.dec(x, depth + 1) for k, x in v[1]}
        if tag in ("r", "sub", "k"):
            return self.objs[v[1]]
        if tag == "x":
            return self.objs[v[3]]
        if tag == "h":
            h = self.handles.get(v[1])
            if h is None:
                h = _handle_class(v[2] if len(v) > 2 else ())(self, v[1])
                if len(v) > 3:
                    h = _signed(h, v[3])
                self.handles[v[1]] = h
            return h
        if tag == "xb":
            cls = _builtin_exception(v[1], BaseException)
            if cls is None:
                raise ValueError("not a builtin exception: %r" % (v[1],))
            return cls()
        if tag == "bt":
            return _BUILTIN_NAMES[v[1]] if v[1] not in ("Ellipsis", "NotImplemented") else getattr(builtins, v[1])
        if tag == "std":
            return _std(v[1], v[2], lambda x: self.dec(x, depth + 1))
        raise ValueError("unknown value tag %r" % (tag,))

    # Requests.

    def ask(self, msg):
        """Sends a request of this thread to the trusted side (a callback)
        and runs the requests that side nests in it, on this thread, until
        it answers. Any thread may ask: each has its own conversation."""
        with self.lock:
            c = self.next_conversation
            self.next_conversation += 1
            box = self.mail[c] = queue.SimpleQueue()
        try:
            msg["c"] = c
            self.send(msg)
            return self.loop(box)
        finally:
            with self.lock:
                del self.mail[c]

    def wait(self, box):
        """The next frame of box's conversation. Whichever waiting thread
        holds the read lock reads the socket and hands the frames of other
        conversations to their threads, so a tree of one thread reads its
        own frames with no hand-off."""
        while True:
            try:
                return box.get_nowait()
            except queue.Empty:
                pass
            if self.read_lock.acquire(blocking=False):
                try:
                    try:
                        return box.get_nowait()
                    except queue.Empty:
                        pass
                    try:
                        msg = self.recv()
                    except BaseException:
                        # The trusted side is gone (pytest ended) or broke
                        # the protocol: the tree's process ends with it.
                        os._exit(0)
                    key = msg.get("c") if msg.get("t") in ("cbret", "cbexc") else msg.get("in", 0)
                    with self.lock:
                        target = self.mail.get(key)
                    if target is None:
                        os._exit(0)
                    if target is box:
                        return msg
                    # Handed over before the read lock is let go: a
                    # thread that takes it next looks in its box first,
                    # and must find its frame there rather than wait on
                    # the socket for a frame already read.
                    target.put(msg)
                finally:
                    self.read_lock.release()
            else:
                try:
                    return box.get(timeout=0.002)
                except queue.Empty:
                    pass

    def loop(self, box):
        while True:
            req = self.wait(box)
            t = req.get("t")
            if t == "cbret":
                return self.dec(req["v"])
            if t == "cbexc":
                own = self.objs.get(req.get("r")) if type(req.get("r")) is int else None
                if isinstance(own, BaseException):
                    raise own
                raise _rebuild(req)
            self.run(req)

    def run(self, req):
        t = req.get("t")
        self.context(req)
        try:
            value = self.handle(t, req)
            out = {"t": "ret", "q": req.get("q"), "v": self.enc(value)}
        except BaseException as e:
            try:
                out = {"t": "exc", "q": req.get("q"), "v": self.exc(e, 0)}
            except BaseException as e2:
                out = {"t": "exc", "q": req.get("q"), "v": ["x", ["bt", "RuntimeError"], ["t", ["the code under test raised an exception that could not cross: %s" % type(e2).__name__]], self.ref(e2), ""]}
        self.send(out)

    def context(self, req):
        cwd = req.get("cwd")
        if cwd and cwd != os.getcwd():
            try:
                os.chdir(cwd)
            except OSError:
                pass
        for k, v in (req.get("env") or {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def handle(self, t, req):
        if t == "import":
            return importlib.import_module(req["n"])
        if t == "getattr":
            value = getattr(self.objs[req["r"]], req["n"])
            if type(value) in (list, dict, set):
                return _Mutable(value)
            return value
        if t == "callm":
            return getattr(self.objs[req["r"]], req["n"])(*self.dec(req["a"]), **self.dec(req["k"]))
        if t == "setattr":
            setattr(self.objs[req["r"]], req["n"], self.dec(req["v"]))
            return None
        if t == "delattr":
            delattr(self.objs[req["r"]], req["n"])
            return None
        if t == "call":
            return self.objs[req["r"]](*self.dec(req["a"]), **self.dec(req["k"]))
        if t == "op":
            name = req["n"]
            if name not in FORWARDED and name != "__dir__":
                raise TypeError("operation %s is not forwarded" % name)
            obj = self.objs[req["r"]]
            args = self.dec(req["a"])
            if name == "__hash__":
                return hash(obj)
            if name == "__bool__":
                return bool(obj)
            if name == "__len__":
                return len(obj)
            if name == "__iter__":
                return iter(obj)
            if name == "__next__":
                return next(obj)
            if name == "__str__":
                return str(obj)
            if name == "__repr__":
                return repr(obj)
            if name == "__dir__":
                return [str(n) for n in dir(obj)]
            if name == "__format__":
                return format(obj, *args)
            return getattr(type(obj), name)(obj, *args)
        if t == "info":
            return None
        raise ValueError("unknown request %r" % (t,))


def _forward_warning(server):
    def showwarning(message, category, filename, lineno, file=None, line=None):
        server.send({"t": "warn", "c": server.klass(category), "m": str(message)[:10000],
                     "f": str(filename), "l": int(lineno or 0)})
    return showwarning


class _Forward(io.TextIOBase):
    def __init__(self, server, stream):
        self.server, self.stream = server, stream

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        if s:
            self.server.send({"t": "out", "s": self.stream, "d": s})
        return len(s)


class _LogForward(logging.Handler):
    def __init__(self, server):
        super().__init__(logging.NOTSET)
        self.server = server

    def emit(self, record):
        try:
            msg = record.getMessage()
        except Exception:
            msg = str(record.msg)
        exc = None
        if record.exc_info:
            exc = "".join(traceback.format_exception(*record.exc_info))[-8000:]
        self.server.send({"t": "log", "n": str(record.name), "lv": int(record.levelno), "m": msg[:100000],
                          "f": str(record.pathname), "l": int(record.lineno or 0), "fn": str(record.funcName),
                          "x": exc})


def _rebuild(req):
    """The exception a callback of the tests raised, as far as the tree may
    know it: its class when a builtin one, never its message (an
    assertion's message holds its expected value)."""
    cls = _builtin_exception(req.get("x"), Exception)
    if cls is not None:
        return cls()
    return RuntimeError("a callback of the tests raised")


def _builtin_exception(name, base):
    """The builtin exception class of that name, if it derives from base."""
    cls = _BUILTIN_NAMES.get(name) if isinstance(name, str) else None
    return cls if isinstance(cls, type) and issubclass(cls, base) else None


def _std(kind, v, dec):
    if kind == "date":
        return datetime.date.fromisoformat(v)
    if kind == "datetime":
        return datetime.datetime.fromisoformat(v)
    if kind == "datetime_utc":
        return datetime.datetime.fromisoformat(v).replace(tzinfo=datetime.timezone.utc)
    if kind == "time":
        return datetime.time.fromisoformat(v)
    if kind == "datetime_tz":
        return datetime.datetime.fromisoformat(v[0]).replace(tzinfo=datetime.timezone(datetime.timedelta(seconds=v[1])))
    if kind == "timezone":
        return datetime.timezone(datetime.timedelta(seconds=v))
    if kind == "timedelta":
        return datetime.timedelta(days=v[0], seconds=v[1], microseconds=v[2])
    if kind == "decimal":
        return decimal.Decimal(v)
    if kind == "fraction":
        return fractions.Fraction(int(v[0], 16), int(v[1], 16))
    if kind == "uuid":
        return uuid.UUID(v)
    if kind == "path":
        return pathlib.PosixPath(v)
    if kind == "purepath":
        return pathlib.PurePosixPath(v)
    if kind == "range":
        return range(int(v[0], 16), int(v[1], 16), int(v[2], 16))
    if kind == "slice":
        return slice(dec(v[0]), dec(v[1]), dec(v[2]))
    raise ValueError("unknown value kind %r" % (kind,))


def _insert_position(path):
    for i, entry in enumerate(path):
        if "site-packages" in entry or "dist-packages" in entry:
            return i
    return len(path)


def main(argv):
    fd = int(argv[1])
    sock = socket.socket(fileno=fd)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    for entry in reversed([p for p in argv[2:] if p]):
        if entry not in sys.path:
            sys.path.insert(_insert_position(sys.path), entry)
    server = Server(sock)
    # What the tree prints, logs and warns, from any thread, goes to the
    # trusted side, which prints it where pytest captures its own.
    real = sys.stdout, sys.stderr
    sys.stdout = _Forward(server, "stdout")
    sys.stderr = _Forward(server, "stderr")
    logging.getLogger().addHandler(_LogForward(server))
    logging.getLogger().setLevel(logging.NOTSET)
    warnings.simplefilter("always")
    warnings.showwarning = _forward_warning(server)

    def child():
        # A forked child of the tree must not speak on the parent's
        # socket: its output goes where the process's own does.
        sys.stdout, sys.stderr = real
        server.send = _gone
    os.register_at_fork(after_in_child=child)
    sys.addaudithook(_frame_reach(server))
    server.send({"t": "hello", "pid": os.getpid()})
    server.loop(server.mail[0])


def _frame_reach(server):
    """An audit hook that tells the other side when the tree takes a frame
    of this program (sys._getframe past its own callers: pyparsing's
    autoname_elements reads its caller's locals). In one process that
    frame would be the test's; here it is the server's, so the test cannot
    run split as it would in one process. What this hook says is the
    tree's word: the other side acts on it only for the base and reference
    trees (the per-test fallback), where a tree that lies gains nothing."""
    here = __file__

    def hook(event, args):
        if event != "sys._getframe" or not args:
            return
        code = getattr(args[0], "f_code", None)
        if code is not None and code.co_filename == here:
            server.send({"t": "refuse", "k": "frame"})
    return hook


def _gone(msg):
    raise OSError("a forked child of the code under test cannot reach the tests")


if __name__ == "__main__":
    main(sys.argv)
