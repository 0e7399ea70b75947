"""testfirst's split grading, the trusted side: a pytest plugin that runs the
hidden tests here while every module of the tree under test runs in another
process (testfirst_tree), as another uid, behind a socket.

The wrapper starts pytest as the grader uid, with the hidden tests readable
only by that uid, the standard library and the image's own packages on
sys.path and nothing of the tree; the tree's process cannot read this one's
memory, files or descriptors. An import this interpreter cannot satisfy
from the standard library, the runner or the hidden tests is asked of the
tree's process and becomes a module of proxies.

What crosses the socket (frames: a 4-byte big-endian length, UTF-8 JSON):

- values of exact builtin types cross by value and are rebuilt here with
  this interpreter's own types: None, bool, int (hex), float, complex, str,
  bytes, bytearray, tuple, list, dict, set, frozenset, and a few value types
  of the standard library (dates, times, Decimal, Fraction, UUID, paths,
  range, slice);
- a tree object whose class subclasses one of those crosses with the
  builtin value it holds: it is an instance of a local stand-in class that
  subclasses the builtin, so comparing, hashing and testing it uses the
  value, never the tree's methods;
- any other tree object crosses by reference, as a proxy whose class is a
  local stand-in for the tree's class (isinstance, pytest.raises, the class's
  name work); its attributes, calls and the operations its class defines are
  asked of the tree;
- an object of the tests handed to the tree crosses as a handle the tree can
  call, iterate and ask for public attributes, nothing else: no frames,
  globals, modules, classes, or the runner's own objects; a function or
  method of the tests also carries its signature (names and kinds of its
  parameters, never a default's value), so that the tree's handle binds
  its arguments as the function would.

An assertion's expected operand is never sent to the tree, except to a
tree object's own comparison (==, <, in, truth): that answer is recorded as
decided by the tree, with the test's id. The decoder takes the peer for
hostile: every value is checked and bounded (size, depth, count), and a
malformed frame, an unknown reference or an answer nobody asked for breaks
the channel, which fails every later test closed with the reason.

Each time the split cannot do what a test needs (the tree asks an object
of the tests for an attribute or operation it has but a handle does not
give, or the tests hand the tree a frame, traceback, code object or
module), the refusal is recorded against the test with a short reason. The
grader runs split on the base and reference trees too: the tests refused
there are graded in-process on the tree under test (the per-test
fallback), decided where that tree cannot ask for it.

At the end the plugin writes its report (per test: the decisions the tree
made, and the refusals) as JSON to the descriptor TESTFIRST_SPLIT_REPORT_FD
names.
"""

import base64
import binascii
import builtins
import datetime
import decimal
import fractions
import importlib.abc
import importlib.machinery
import inspect
import json
import logging
import os
import pathlib
import random
import re
import select
import socket
import struct
import sys
import threading
import types
import uuid
import warnings

import pytest

SOCKET_FD_ENV = "TESTFIRST_SPLIT_FD"
REPORT_FD_ENV = "TESTFIRST_SPLIT_REPORT_FD"
TIMEOUT_ENV = "TESTFIRST_SPLIT_TIMEOUT"
HIDDEN = os.environ.get("TESTFIRST_SPLIT_HIDDEN", "/hidden").rstrip("/") + "/"

MAX_FRAME = 64 << 20
MAX_NODES = 2_000_000
MAX_DEPTH = 200
MAX_INT_HEX = 1 << 20
MAX_CLASSES = 100_000
MAX_SIDE_BYTES = 64 << 20
MAX_REFUSALS = 5

# The operations whose answer decides an assertion when the tree gives it.
DECISIONS = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__", "__bool__"))
# Operations a value-holding stand-in answers from its value, never the tree.
VALUE_OPS = frozenset(("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__contains__", "__bool__", "__len__"))
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

# Builtins the tree may name ("bt"): classes, and two constants.
_BUILTINS = {name: obj for name, obj in vars(builtins).items() if isinstance(obj, type)}
_BUILTINS["Ellipsis"] = Ellipsis
_BUILTINS["NotImplemented"] = NotImplemented
_VALUE_BASES = {"bool": bool, "int": int, "float": float, "complex": complex, "str": str, "bytes": bytes,
                "tuple": tuple, "list": list, "dict": dict, "set": set, "frozenset": frozenset}

# Top-level modules of the runner: always this interpreter's own. Those
# that pytest loaded before this plugin are added at start, so a tree named
# like a dependency pytest does not load here (tomli on Python 3.11) is the
# tree's.
_RUNNER_OWN = frozenset(("pytest", "_pytest", "pluggy", "testfirst_split", "testfirst_syspath", "testfirst_tree", "unittest"))
_RUNNER = set(_RUNNER_OWN)

_HEX = re.compile(r"-?[0-9a-f]+\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.<>]*\Z")


_CALLBACKS = frozenset(("cb", "cbget", "cbiter", "cbnext", "cbenter", "cbexit", "cbop"))


# What the tree's process may say the split could not give it, in this
# side's words (testfirst_tree: _frame_reach, _Globals).
_TREE_REFUSALS = {
    "frame": "the code under test took its caller's frame (sys._getframe), which would have been the test's",
    "globals": "the code under test asked for `__globals__` of a function of the tests",
}


class ProtocolError(Exception):
    """The code under test broke the split's protocol; the grade fails
    closed."""


class TreeStopped(ProtocolError):
    pass


class _Channel:
    def __init__(self, sock):
        self.sock = sock
        self.broken = None
        self.seq = 0
        self.classes = {}      # rid -> stand-in class
        self.descs = {}        # rid -> description not yet built
        self.proxies = {}      # rid -> proxy
        self.handles = {}      # hid -> object of the tests
        self.handle_ids = {}   # id(object) -> hid
        self.depth = 0
        self.pending = None    # an assertion a callback raised
        self.env = dict(os.environ)
        self.cwd = None
        self.requests = 0
        self.test = None
        self.tests = {}
        self.refused = {}     # test id -> what the split could not do for it
        self.mutex = threading.RLock()
        self.side_bytes = 0
        self.side_dropped = False
        self.serving = []     # the tree's conversations being served
        self.waiting = set()  # requests waiting for their answer
        self.stash = {}       # answers that came before an inner one
        timeout = os.environ.get(TIMEOUT_ENV)
        sock.settimeout(float(timeout) if timeout else None)
        hello = self.read()
        if hello.get("t") != "hello":
            self.fail("the code under test's process did not start: %r" % (hello.get("t"),))

    # Framing.

    def fail(self, why):
        if self.broken is None:
            self.broken = why
        raise ProtocolError(why)

    def write(self, msg):
        data = json.dumps(msg, separators=(",", ":"), allow_nan=False).encode()
        try:
            self.sock.sendall(struct.pack(">I", len(data)) + data)
        except OSError as e:
            self.fail("the code under test's process is gone (%s)" % e.strerror)

    def read(self):
        head = self._exactly(4)
        n = struct.unpack(">I", head)[0]
        if n > MAX_FRAME:
            self.fail("the code under test sent a frame of %d bytes (at most %d)" % (n, MAX_FRAME))
        try:
            msg = json.loads(self._exactly(n))
        except (ValueError, RecursionError) as e:
            self.fail("the code under test sent a frame that is not JSON: %s" % (str(e)[:200],))
        if type(msg) is not dict or type(msg.get("t")) is not str:
            self.fail("the code under test sent a frame without a type")
        classes = msg.get("classes")
        if classes is not None:
            if type(classes) is not dict or len(self.descs) + len(self.classes) + len(classes) > MAX_CLASSES:
                self.fail("the code under test described its classes wrongly")
            for k, desc in classes.items():
                rid = _rid(k, self)
                if rid in self.classes or rid in self.descs:
                    self.fail("the code under test described class %d twice" % rid)
                self.descs[rid] = _check_desc(desc, self)
        return msg

    def _exactly(self, n):
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            except socket.timeout:
                self.fail("the code under test did not answer within %s s" % os.environ.get(TIMEOUT_ENV))
            except OSError as e:
                self.fail("the code under test's process is gone (%s)" % e.strerror)
            if not chunk:
                self.broken = self.broken or "the code under test's process ended"
                raise TreeStopped(self.broken)
            buf += chunk
        return bytes(buf)

    def drain(self):
        """Takes what the tree sent while nobody asked: output, log records
        and warnings are its own; anything else is a protocol error (a
        second answer, a forked process answering)."""
        while select.select([self.sock], [], [], 0)[0]:
            msg = self.read()
            if self.side(msg):
                continue
            if msg["t"] in _CALLBACKS:
                # A thread of the tree called back while the tests were
                # not waiting on it: served now.
                self.callback(msg)
                continue
            self.fail("the code under test sent %r when nothing was asked" % msg["t"])

    # Requests.

    def request(self, msg):
        # One thread of the tests talks to the tree at a time; a callback
        # it serves may ask again on the same thread.
        with self.mutex:
            return self._request(msg)

    def _request(self, msg):
        if self.broken:
            raise ProtocolError(self.broken)
        if self.depth == 0:
            self.drain()
        self.seq += 1
        q = msg["q"] = self.seq
        cwd = os.getcwd() if _cwd_ok() else None
        if cwd and cwd != self.cwd:
            msg["cwd"] = self.cwd = cwd
        if _environ_changed[0]:
            _environ_changed[0] = False
            env = dict(os.environ)
            msg["env"] = {k: env.get(k) for k in set(env) | set(self.env) if env.get(k) != self.env.get(k)}
            self.env = env
        if self.serving:
            # Asked while serving a callback: the tree runs it on the
            # thread that called back.
            msg["in"] = self.serving[-1]
        self.requests += 1
        self.depth += 1
        self.waiting.add(q)
        try:
            self.write(msg)
            while True:
                ans = self.stash.pop(q, None) or self.read()
                t = ans["t"]
                if t in ("ret", "exc"):
                    got = ans.get("q")
                    if got != q:
                        # The answer to a request further out (another
                        # thread of the tree finished first): kept for it.
                        if got not in self.waiting or got in self.stash:
                            self.fail("the code under test answered request %r, which is not waiting" % (got,))
                        self.stash[got] = ans
                        continue
                    if t == "ret":
                        value = self.dec(ans.get("v"))
                        break
                    raise self.dec_exception(ans.get("v"))
                if self.side(ans):
                    continue
                if t in _CALLBACKS:
                    self.callback(ans)
                    continue
                self.fail("the code under test sent an unknown frame %r" % t)
        finally:
            self.waiting.discard(q)
            self.depth -= 1
            if self.depth == 0 and self.pending is not None:
                pending, self.pending = self.pending, None
                raise pending
        return value

    def side(self, msg):
        t = msg["t"]
        if t == "refuse":
            # The tree's word that it took what in one process would have
            # been the test's (its caller's frame, a test function's
            # globals: testfirst_tree's _frame_reach and _Globals): a
            # refusal in fixed words. Only the base's and the reference's
            # refusals choose the fallback.
            why = _TREE_REFUSALS.get(msg.get("k")) if type(msg.get("k")) is str else None
            if why is None:
                self.fail("the code under test sent a refusal of an unknown kind")
            self.refuse(why)
            return True
        if t not in ("out", "log", "warn"):
            return False
        # What the tree prints, logs and warns is bounded: pytest keeps
        # captured output and log records in memory.
        size = len(str(msg.get("d") or msg.get("m") or ""))
        self.side_bytes += size
        if self.side_bytes > MAX_SIDE_BYTES:
            if not self.side_dropped:
                self.side_dropped = True
                sys.stderr.write("\n[testfirst: the code under test printed, logged or warned more than %d MiB; the rest is dropped]\n" % (MAX_SIDE_BYTES >> 20))
            return True
        if t == "out":
            stream = sys.stdout if msg.get("s") == "stdout" else sys.stderr
            d = msg.get("d")
            if type(d) is not str:
                self.fail("the code under test sent output that is not text")
            stream.write(d)
            return True
        if t == "log":
            _log(msg, self)
            return True
        cls = self.dec(msg.get("c"))
        if not (isinstance(cls, type) and issubclass(cls, Warning)) or issubclass(cls, (KeyboardInterrupt, SystemExit)):
            cls = UserWarning
        # The place the tree names is text in the message: a file name
        # given to the warnings machinery is one pytest reads and prints,
        # and this process can read the hidden tests.
        where = "%s:%s" % (str(msg.get("f"))[:300], str(msg.get("l"))[:20])
        warnings.warn_explicit("%s (in the code under test, %s)" % (str(msg.get("m"))[:10000], where), cls,
                               "<code under test>", 0, module="<code under test>")
        return True

    def callback(self, msg):
        c = msg.get("c")
        if type(c) is not int or c in self.serving:
            self.fail("the code under test called back without a conversation of its own")
        self.serving.append(c)
        try:
            out = self._callback(msg)
        finally:
            self.serving.pop()
        out["c"] = c
        self.write(out)

    def _callback(self, msg):
        t = msg["t"]
        hid = msg.get("h")
        obj = self.handles.get(hid) if type(hid) is int else None
        if obj is None:
            self.fail("the code under test named an object of the tests it was never given")
        try:
            if t == "cb":
                args = self.dec(msg.get("a"))
                kwargs = self.dec(msg.get("k"))
                if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
                    self.fail("the code under test called a callback with malformed arguments")
                result = obj(*args, **kwargs)
            elif t == "cbget":
                name = msg.get("n")
                if type(name) is not str or name.startswith("_") or not _attributes_allowed(obj):
                    if type(name) is str and _has_attribute(obj, name):
                        self.refuse("the code under test asked for `%s` of %s" % (name[:60], _kind(obj)))
                    raise AttributeError("an object of the tests gives the code under test no attribute %r" % (name,))
                result = getattr(obj, name)
            elif t == "cbiter":
                result = iter(obj)
            elif t == "cbop":
                name = msg.get("n")
                args = self.dec(msg.get("a"))
                if name not in _HANDLE_OPS or type(args) is not list or not (_attributes_allowed(obj) or name in _IDENTITY_OPS and _identity_allowed(obj)):
                    if type(name) is str and getattr(type(obj), name, None) is not None:
                        self.refuse("the code under test asked for %s of %s" % (_op_words(name), _kind(obj)))
                    raise TypeError("an object of the tests gives the code under test no %s" % (str(name)[:40],))
                result = getattr(type(obj), name)(obj, *args)
            elif t == "cbenter":
                result = type(obj).__enter__(obj)
            elif t == "cbexit":
                # The tree's exception crosses as it would when raised to
                # the tests (a RuntimeError when it did not say which).
                if msg.get("x") is True:
                    err = RuntimeError("an exception in the code under test")
                    if msg.get("e") is not None:
                        err = self.dec_exception(msg["e"])
                    result = type(obj).__exit__(obj, type(err), err, None)
                else:
                    result = type(obj).__exit__(obj, None, None, None)
            else:
                result = next(obj)
            out = {"t": "cbret", "v": self.enc(result)}
        except ProtocolError:
            raise
        except BaseException as e:
            if isinstance(e, (AssertionError, pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception)) and self.pending is None:
                self.pending = e
            name = type(e).__name__ if _BUILTINS.get(type(e).__name__) is type(e) else None
            out = {"t": "cbexc", "x": name}
            rid = _rid_of(e)
            if rid is not None:
                # An exception of the tree's goes back as itself.
                out["r"] = rid
        return out

    # Values: this side to the tree.

    def enc(self, v, depth=0):
        if depth > MAX_DEPTH:
            raise ValueError("a value too deeply nested to hand to the code under test")
        t = type(v)
        if v is None or t is bool or t is str:
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
            return [{tuple: "t", list: "l", set: "s", frozenset: "fs"}[t], [self.enc(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[self.enc(k, depth + 1), self.enc(x, depth + 1)] for k, x in v.items()]]
        rid = _rid_of(v)
        if rid is not None:
            return ["r", rid]
        if v is Ellipsis or v is NotImplemented:
            return ["bt", "Ellipsis" if v is Ellipsis else "NotImplemented"]
        if isinstance(v, type) and _BUILTINS.get(v.__name__) is v:
            return ["bt", v.__name__]
        std = _std_enc(v, t, lambda x: self.enc(x, depth + 1))
        if std is not None:
            return std
        if isinstance(v, (str, bytes, int, float, tuple, list, dict, set, frozenset)) and t.__module__ in ("builtins", "collections", "enum"):
            return self.enc(_plain(v), depth)
        if isinstance(v, (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType, types.CellType)):
            self.refuse("the tests handed the code under test %s" % _kind(v))
            raise TypeError("a %s of the tests cannot be handed to the code under test" % t.__name__)
        hid = self.handle_ids.get(id(v))
        if hid is None or self.handles.get(hid) is not v:
            hid = len(self.handles) + 1
            self.handles[hid] = v
            self.handle_ids[id(v)] = hid
        # The operations its type has: the tree's handle has those alone,
        # so hasattr(x, "__len__") and callable(x) there say what they
        # would say of the object itself.
        t = type(v)
        ops = sorted(n for n in _HANDLE_TYPE_OPS | _REFUSED_OPS if getattr(t, n, None) is not None)
        # A class that sets __iter__ = None says it is not iterable, even
        # with __getitem__: the handle says so too.
        if hasattr(t, "__iter__") and t.__iter__ is None:
            ops.append("!__iter__")
        sig = _signature(v)
        if sig is not None:
            return ["h", hid, ops, sig]
        return ["h", hid, ops]

    # Values: the tree to this side. The peer is hostile: every part is
    # checked, and anything unexpected breaks the channel.

    def dec(self, v):
        budget = [MAX_NODES]
        try:
            return self._dec(v, 0, budget)
        except RecursionError:
            self.fail("the code under test sent a value nested too deep")

    def _dec(self, v, depth, budget):
        budget[0] -= 1
        if budget[0] < 0:
            self.fail("the code under test sent a value of more than %d parts" % MAX_NODES)
        if depth > MAX_DEPTH:
            self.fail("the code under test sent a value nested deeper than %d" % MAX_DEPTH)
        if v is None or v is True or v is False or type(v) is str:
            return v
        if type(v) is not list or not v or type(v[0]) is not str:
            self.fail("the code under test sent a malformed value")
        tag, n = v[0], len(v)
        if tag == "i" and n == 2:
            return _hex(v[1], self)
        if tag == "f" and n == 2:
            return _float(v[1], self)
        if tag == "c" and n == 3:
            return complex(_float(v[1], self), _float(v[2], self))
        if tag in ("y", "ba") and n == 2:
            data = _b64(v[1], self)
            return data if tag == "y" else bytearray(data)
        if tag in ("t", "l", "s", "fs") and n == 2 and type(v[1]) is list:
            items = [self._dec(x, depth + 1, budget) for x in v[1]]
            if tag == "t":
                return tuple(items)
            if tag == "l":
                return items
            try:
                return set(items) if tag == "s" else frozenset(items)
            except TypeError:
                self.fail("the code under test sent a set of unhashable values")
        if tag == "d" and n == 2 and type(v[1]) is list:
            out = {}
            for pair in v[1]:
                if type(pair) is not list or len(pair) != 2:
                    self.fail("the code under test sent a malformed dict")
                k = self._dec(pair[0], depth + 1, budget)
                try:
                    out[k] = self._dec(pair[1], depth + 1, budget)
                except TypeError:
                    self.fail("the code under test sent a dict with an unhashable key")
            return out
        if tag == "bt" and n == 2 and type(v[1]) is str and v[1] in _BUILTINS:
            return _BUILTINS[v[1]]
        if tag == "k" and n == 2:
            return self.standin(_rid(v[1], self))
        if tag == "r" and n == 3:
            rid = _rid(v[1], self)
            p = self.proxies.get(rid)
            if p is not None:
                return p
            cls = self._dec(v[2], depth + 1, budget)
            return self.proxy(rid, cls)
        if tag == "sub" and n == 4:
            rid = _rid(v[1], self)
            p = self.proxies.get(rid)
            if p is not None:
                return p
            cls = self._dec(v[2], depth + 1, budget)
            value = self._dec(v[3], depth + 1, budget)
            return self.valued(rid, cls, value)
        if tag == "x" and n == 5:
            return self.dec_exception(v, depth, budget)
        if tag == "mut" and n == 3:
            rid = _rid(v[1], self)
            value = self._dec(v[2], depth + 1, budget)
            cls = _MUTABLE.get(type(value))
            if cls is None:
                self.fail("the code under test sent a mutable value that is not a list, dict or set")
            p = cls.__new__(cls)
            type(value).__init__(p, value)
            p._tf_rid = rid
            return p
        if tag == "h" and n in (2, 3):
            hid = v[1]
            if type(hid) is not int or hid not in self.handles:
                self.fail("the code under test forged a reference to an object of the tests")
            return self.handles[hid]
        if tag == "std" and n == 3 and type(v[1]) is str:
            try:
                return _std_dec(v[1], v[2], lambda x: self._dec(x, depth + 1, budget))
            except (TypeError, ValueError, OverflowError, IndexError, ZeroDivisionError, ArithmeticError):
                self.fail("the code under test sent a malformed %s" % v[1][:40])
        self.fail("the code under test sent a value with an unknown tag %r" % (tag[:40],))

    def dec_exception(self, v, depth=0, budget=None):
        budget = budget or [MAX_NODES]
        if type(v) is not list or len(v) != 5 or v[0] != "x" or type(v[4]) is not str:
            self.fail("the code under test sent a malformed exception")
        cls = self._dec(v[1], depth + 1, budget)
        args = self._dec(v[2], depth + 1, budget)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)) or type(args) is not tuple:
            self.fail("the code under test raised something that is not an exception")
        rid = _rid(v[3], self)
        if rid in self.proxies:
            e = self.proxies[rid]
            if not isinstance(e, BaseException):
                self.fail("the code under test sent a reference of one kind as another")
            return e
        if issubclass(cls, (KeyboardInterrupt, GeneratorExit)) or issubclass(cls, SystemExit) and getattr(cls, "_tf_rid", None) is not None:
            # These would stop the session or a generator here: the test
            # gets a RuntimeError that names them.
            args = ("the code under test raised %s" % cls.__name__,)
            cls = RuntimeError
        try:
            e = cls.__new__(cls, *args)
            BaseException.__init__(e, *args)
        except Exception:
            e = cls.__new__(cls)
        if getattr(cls, "_tf_rid", None) is not None:
            object.__setattr__(e, "_tf_rid", rid)
            self.proxies[rid] = e
        if v[4]:
            try:
                e.add_note("in the code under test:\n" + v[4][-8000:])
            except Exception:
                pass
        return e

    # Stand-ins and proxies.

    def standin(self, rid):
        cls = self.classes.get(rid)
        if cls is not None:
            return cls
        desc = self.descs.pop(rid, None)
        if desc is None:
            self.fail("the code under test referred to class %d without describing it" % rid)
        budget = [MAX_NODES]
        bases = []
        for b in desc["bases"]:
            base = self._dec(b, 1, budget)
            if not isinstance(base, type):
                self.fail("the code under test gave a class a base that is not a class")
            bases.append(base)
        value = _VALUE_BASES.get(desc["value"]) if desc["value"] else None
        ns = {"__module__": desc["module"], "__qualname__": desc["qualname"], "__doc__": None,
              "_tf_rid": rid, "_tf_value": value, "_tf_attrs": frozenset(desc["attrs"]), "_tf_is_module": desc["is_module"]}
        for name in desc["dunders"]:
            if name in FORWARDED and not (value is not None and name in VALUE_OPS):
                ns[name] = _forwarder(name)
        if value is None and "__repr__" not in ns:
            ns["__repr__"] = _forwarder("__repr__")
        if value is None:
            ns["__dir__"] = _forwarder("__dir__")
        if value is None and not desc["exception"]:
            # Its truth goes through _proxy_bool, which checks a tree
            # equality's answer when the test takes its truth.
            if "__bool__" in ns:
                ns["_tf_fwd_bool"] = ns["__bool__"]
            ns["__bool__"] = _proxy_bool
            ns["__getattr__"] = _getattr
            ns["__setattr__"] = _setattr
            ns["__delattr__"] = _delattr
            if "__eq__" not in ns:
                ns["__hash__"] = object.__hash__
        else:
            ns["__getattr__"] = _getattr
        if desc["exception"] and not any(issubclass(b, BaseException) for b in bases):
            self.fail("the code under test described an exception class without an exception base")
        try:
            cls = _metaclass(desc["meta"])(desc["name"], tuple(bases) or (object,), ns)
        except TypeError:
            # The local stand-ins of the bases cannot be combined (a layout
            # of the tree's that needs its own classes): keep the builtin
            # the class holds values of, or the exception it is.
            fallback = value or next((b for b in bases if issubclass(b, BaseException)), object)
            if not isinstance(fallback, type) or _BUILTINS.get(fallback.__name__) is not fallback:
                fallback = Exception if desc["exception"] else object
            cls = _metaclass(desc["meta"])(desc["name"], (fallback,), ns)
        self.classes[rid] = cls
        self.proxies[rid] = cls
        return cls

    def proxy(self, rid, cls):
        if not isinstance(cls, _RemoteMeta) or cls._tf_value is not None:
            self.fail("the code under test sent an object of a class it did not describe")
        if issubclass(cls, BaseException):
            self.fail("the code under test sent an exception as a plain object")
        if cls._tf_is_module:
            p = _RemoteModule(_UNNAMED)
            object.__setattr__(p, "_tf_rid", rid)
        else:
            p = object.__new__(cls)
            object.__setattr__(p, "_tf_rid", rid)
        self.proxies[rid] = p
        return p

    def valued(self, rid, cls, value):
        if not isinstance(cls, _RemoteMeta) or cls._tf_value is None or type(value) is not cls._tf_value:
            self.fail("the code under test sent a value of a class that does not hold one")
        base = cls._tf_value
        try:
            if base in (list, dict, set):
                p = base.__new__(cls)
                base.__init__(p, value)
            else:
                p = base.__new__(cls, value)
            object.__setattr__(p, "_tf_rid", rid)
        except Exception as e:
            self.fail("the code under test sent a value its class cannot hold: %s" % type(e).__name__)
        self.proxies[rid] = p
        return p

    def refuse(self, why):
        """Records that the split could not do for the running test what it
        needed: the grader may run the test in-process instead, when the
        base or reference tree needed it too."""
        if self.test is None:
            return
        r = self.refused.setdefault(self.test, [])
        if why not in r and len(r) < MAX_REFUSALS:
            r.append(why)

    def record(self, name, obj, kind=None):
        if self.test is None:
            return
        if kind is None:
            cls = type(obj) if not isinstance(obj, _RemoteMeta) else obj
            # The tree names its classes: say whose they are.
            kind = "%s of %s.%s, a class of the code under test" % (name, cls.__module__, cls.__qualname__)
        t = self.tests.setdefault(self.test, {})
        t[kind] = t.get(kind, 0) + 1


_channel = None

# Set when the tests change os.environ (monkeypatch.setenv): the next
# request carries the change to the tree's process.
_environ_changed = [False]


class _TrackedEnviron(type(os.environ)):
    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        _environ_changed[0] = True

    def __delitem__(self, key):
        super().__delitem__(key)
        _environ_changed[0] = True


def _ch():
    if _channel is None:
        raise ProtocolError("split grading is not running")
    return _channel


def _rid(v, ch):
    if type(v) is str and v.isdigit() and len(v) < 12:
        v = int(v)
    if type(v) is not int or v <= 0:
        ch.fail("the code under test sent a malformed reference")
    return v


def _rid_of(v):
    """The tree's reference of a proxy, a stand-in class or a mutable copy;
    None for anything of the tests' own."""
    if isinstance(v, _RemoteMeta):
        return v.__dict__.get("_tf_rid")
    t = type(v)
    if isinstance(t, _RemoteMeta) or t in _MUTABLE_TYPES or isinstance(v, _RemoteModule):
        return _instance_rid(v)
    return None


def _int(v, ch):
    if type(v) is not int:
        ch.fail("the code under test sent a malformed number")
    return v


def _hex(v, ch):
    if type(v) is not str or len(v) > MAX_INT_HEX or not _HEX.match(v):
        ch.fail("the code under test sent a malformed int")
    return int(v, 16)


def _float(v, ch):
    if type(v) is not str or len(v) > 64:
        ch.fail("the code under test sent a malformed float")
    try:
        return float(v)
    except ValueError:
        ch.fail("the code under test sent a malformed float")


def _b64(v, ch):
    if type(v) is not str:
        ch.fail("the code under test sent malformed bytes")
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        ch.fail("the code under test sent malformed bytes")


def _check_desc(desc, ch):
    ok = (type(desc) is dict and type(desc.get("name")) is str and type(desc.get("qualname")) is str
          and type(desc.get("module")) is str and type(desc.get("bases")) is list and len(desc["bases"]) <= 64
          and type(desc.get("dunders")) is list and all(type(d) is str for d in desc["dunders"])
          and type(desc.get("attrs")) is list and len(desc["attrs"]) <= 10000 and all(type(a) is str for a in desc["attrs"])
          and (desc.get("value") is None or desc.get("value") in _VALUE_BASES) and type(desc.get("exception")) is bool
          and type(desc.get("meta")) is list and set(desc["meta"]) <= {"__iter__", "__len__", "__getitem__", "__contains__"}
          and type(desc.get("is_module")) is bool)
    if not ok:
        ch.fail("the code under test described a class wrongly")
    for k in ("name", "qualname", "module"):
        if len(desc[k]) > 1000 or "\x00" in desc[k]:
            ch.fail("the code under test described a class wrongly")
    if not desc["name"].isidentifier():
        desc["name"] = "RemoteClass"
    return desc


def _std_enc(v, t, enc):
    if t is datetime.date:
        return ["std", "date", v.isoformat()]
    if t is datetime.datetime and v.tzinfo is None:
        return ["std", "datetime", v.isoformat()]
    if t is datetime.datetime and v.tzinfo is datetime.timezone.utc:
        return ["std", "datetime_utc", v.replace(tzinfo=None).isoformat()]
    if t is datetime.time and v.tzinfo is None:
        return ["std", "time", v.isoformat()]
    if t is datetime.datetime and type(v.tzinfo) is datetime.timezone and v.tzinfo.utcoffset(None).microseconds == 0:
        return ["std", "datetime_tz", [v.replace(tzinfo=None).isoformat(), int(v.tzinfo.utcoffset(None).total_seconds())]]
    if t is datetime.timezone and v.utcoffset(None).microseconds == 0:
        return ["std", "timezone", int(v.utcoffset(None).total_seconds())]
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
        return ["std", "slice", [enc(v.start), enc(v.stop), enc(v.step)]]
    return None


def _std_dec(kind, v, dec):
    def s(x):
        if type(x) is not str or len(x) > 200:
            raise ValueError(kind)
        return x

    def h(x):
        if type(x) is not str or len(x) > MAX_INT_HEX or not _HEX.match(x):
            raise ValueError(kind)
        return int(x, 16)

    if kind == "date":
        return datetime.date.fromisoformat(s(v))
    if kind == "datetime":
        return datetime.datetime.fromisoformat(s(v))
    if kind == "datetime_utc":
        return datetime.datetime.fromisoformat(s(v)).replace(tzinfo=datetime.timezone.utc)
    if kind == "time":
        return datetime.time.fromisoformat(s(v))
    if kind == "datetime_tz":
        if type(v) is not list or len(v) != 2 or type(v[1]) is not int or abs(v[1]) >= 86400:
            raise ValueError(kind)
        return datetime.datetime.fromisoformat(s(v[0])).replace(tzinfo=datetime.timezone(datetime.timedelta(seconds=v[1])))
    if kind == "timezone":
        if type(v) is not int or abs(v) >= 86400:
            raise ValueError(kind)
        return datetime.timezone(datetime.timedelta(seconds=v))
    if kind == "timedelta":
        if type(v) is not list or len(v) != 3 or not all(type(x) is int for x in v):
            raise ValueError(kind)
        return datetime.timedelta(days=v[0], seconds=v[1], microseconds=v[2])
    if kind == "decimal":
        return decimal.Decimal(s(v))
    if kind == "fraction":
        if type(v) is not list or len(v) != 2:
            raise ValueError(kind)
        return fractions.Fraction(h(v[0]), h(v[1]))
    if kind == "uuid":
        return uuid.UUID(s(v))
    if kind in ("path", "purepath"):
        if type(v) is not str or len(v) > 1 << 16:
            raise ValueError(kind)
        return pathlib.PosixPath(v) if kind == "path" else pathlib.PurePosixPath(v)
    if kind == "range":
        if type(v) is not list or len(v) != 3:
            raise ValueError(kind)
        return range(h(v[0]), h(v[1]), h(v[2]))
    if kind == "slice":
        if type(v) is not list or len(v) != 3:
            raise ValueError(kind)
        return slice(dec(v[0]), dec(v[1]), dec(v[2]))
    raise ValueError(kind)


def _plain(v):
    for base in (bool, int, float, str, bytes, tuple, list, dict, set, frozenset):
        if isinstance(v, base):
            return base(v) if base is not str else str.__str__(v)
    return v


def _cwd_ok():
    try:
        os.getcwd()
        return True
    except OSError:
        return False


# What the tree may ask of an object of the tests beside calling it (see
# testfirst_tree.HANDLE_OPS).
_HANDLE_OPS = frozenset(("__len__", "__getitem__", "__contains__", "__bool__", "__hash__", "__eq__", "__ne__", "__lt__",
                         "__le__", "__gt__", "__ge__", "__index__", "__int__", "__float__", "__repr__", "__str__"))


_HANDLE_TYPE_OPS = _HANDLE_OPS | {"__call__", "__iter__", "__next__", "__enter__", "__exit__"}

# Operations the object's type has that a handle refuses: named to the
# tree so that its asking reaches this side and is recorded as a refusal.
_REFUSED_OPS = frozenset(("__setitem__", "__delitem__"))


# What the tree may ask of any object of the tests it holds but a module,
# frame, code, traceback or cell: identity (a function in a set of
# functions) and its text.
_IDENTITY_OPS = frozenset(("__hash__", "__eq__", "__ne__", "__repr__", "__str__"))


def _identity_allowed(obj):
    return not isinstance(obj, (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType, types.CellType))


def _attributes_allowed(obj):
    """Whether the tree may read public attributes of an object of the
    tests: never of modules, classes, functions' innards, frames, code,
    generators, or anything of the runner."""
    if isinstance(obj, (type, types.ModuleType, types.FrameType, types.CodeType, types.TracebackType,
                        types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, types.FunctionType,
                        types.BuiltinFunctionType, types.MethodType, types.CellType)):
        return False
    mod = getattr(type(obj), "__module__", "") or ""
    top = mod.partition(".")[0]
    return top not in _RUNNER_OWN


_MISSING = object()

_PARAM_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "p", inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
                inspect.Parameter.VAR_POSITIONAL: "v", inspect.Parameter.KEYWORD_ONLY: "k",
                inspect.Parameter.VAR_KEYWORD: "vk"}


def _signature(obj):
    """The call signature of a function or method of the tests, for the
    tree's handle to take its arguments as the function itself would: its
    name and, per parameter, the kind, the name and whether it has a
    default, never the default's value nor an annotation. A call of the
    wrong arity then fails in the tree's own frame, as it would in one
    process (pyparsing tells a parse action's arity by where the TypeError
    is raised). None for any other callable."""
    if not isinstance(obj, (types.FunctionType, types.MethodType)):
        return None
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return None
    name = getattr(obj, "__name__", None)
    if type(name) is not str or not name.isidentifier():
        name = "callback"
    return [name[:100], [[_PARAM_KINDS[p.kind], p.name, p.default is not inspect.Parameter.empty] for p in params]]


def _has_attribute(obj, name):
    """Whether obj has attribute name, found without running anything of
    it (a refused probe for what it lacks refuses nothing the test
    needed); an object whose class answers any name has them all."""
    try:
        if inspect.getattr_static(obj, name, _MISSING) is not _MISSING:
            return True
        return inspect.getattr_static(type(obj), "__getattr__", None) is not None
    except Exception:
        return False


_KINDS = ((types.ModuleType, "a module"), (types.FrameType, "a frame"), (types.TracebackType, "a traceback"),
          (types.CodeType, "a code object"), (types.CellType, "a closure cell"), (type, "a class"),
          (types.FunctionType, "a function"), (types.MethodType, "a method"), (types.BuiltinFunctionType, "a builtin function"),
          (types.GeneratorType, "a generator"), (types.CoroutineType, "a coroutine"), (types.AsyncGeneratorType, "an async generator"))


def _kind(obj):
    """What obj is, in a few words, for a refusal's reason: its kind, or the
    name of its class."""
    for t, words in _KINDS:
        if isinstance(obj, t):
            return words + " of the tests"
    t = type(obj)
    mod = getattr(t, "__module__", "") or ""
    name = "%s.%s" % (mod, getattr(t, "__qualname__", "?")) if mod != "builtins" else t.__qualname__
    whose = "of the runner" if mod.partition(".")[0] in _RUNNER_OWN else "of the tests"
    return "a `%s` object %s" % (name[:80], whose)


def _op_words(name):
    return {"__setitem__": "item assignment", "__delitem__": "item deletion", "__setattr__": "attribute assignment",
            "__delattr__": "attribute deletion"}.get(name, "`%s`" % name[:40])


def _log(msg, ch):
    name, level = msg.get("n"), msg.get("lv")
    if type(name) is not str or type(level) is not int or type(msg.get("m")) is not str:
        ch.fail("the code under test sent a malformed log record")
    logger = logging.getLogger(name[:1000] or None)
    if not logger.isEnabledFor(level):
        return
    record = logger.makeRecord(logger.name, level, str(msg.get("f"))[:1000], msg.get("l") if type(msg.get("l")) is int else 0,
                               msg["m"], None, None, str(msg.get("fn"))[:1000])
    if type(msg.get("x")) is str:
        record.exc_text = msg["x"]
    logger.handle(record)


# Proxies.

class _RemoteMeta(type):
    """The class of every stand-in for a tree class."""

    def __call__(cls, *args, **kwargs):
        rid = cls.__dict__.get("_tf_rid")
        if rid is None:
            # A class the tests made on a class of the tree (a mixin of
            # assertion helpers): its objects are the tests' own, and what
            # they inherit from the tree is asked of it with the object as
            # a handle (see _inherited).
            return type.__call__(cls, *args, **kwargs)
        return _ch().request({"t": "call", "r": rid, "a": _ch().enc(list(args)), "k": _ch().enc(kwargs)})

    def __getattr__(cls, name):
        rid = cls.__dict__.get("_tf_rid")
        if rid is None or name.startswith("_tf_"):
            raise AttributeError(name)
        return _ch().request({"t": "getattr", "r": rid, "n": name})

    def __setattr__(cls, name, value):
        rid = cls.__dict__.get("_tf_rid")
        if rid is None or name.startswith("__") or name.startswith("_tf_"):
            return type.__setattr__(cls, name, value)
        _ch().request({"t": "setattr", "r": rid, "n": name, "v": _ch().enc(value)})

    def __delattr__(cls, name):
        rid = cls.__dict__.get("_tf_rid")
        if rid is None or name.startswith("__"):
            return type.__delattr__(cls, name)
        _ch().request({"t": "delattr", "r": rid, "n": name})

    def __repr__(cls):
        return "<class '%s.%s' of the code under test>" % (cls.__module__, cls.__qualname__)


def _meta_op(name):
    def op(cls, *args):
        ch = _ch()
        result = ch.request({"t": "op", "r": cls.__dict__["_tf_rid"], "n": name, "a": ch.enc(list(args))})
        if name == "__contains__":
            ch.record(name, cls)
        return result
    op.__name__ = name
    return op


_metaclasses = {}


def _metaclass(ops):
    """The stand-in metaclass for a tree class whose own metaclass defines
    ops (an Enum's iteration, length, lookup by name)."""
    ops = frozenset(ops)
    if not ops:
        return _RemoteMeta
    meta = _metaclasses.get(ops)
    if meta is None:
        meta = _metaclasses[ops] = type("_RemoteMeta", (_RemoteMeta,), {n: _meta_op(n) for n in ops})
    return meta


def _instance_rid(self):
    """The reference an object itself holds (never its class's: a stand-in
    class's own reference is a class attribute)."""
    try:
        d = object.__getattribute__(self, "__dict__")
    except AttributeError:
        d = None
    if d is not None:
        return d.get("_tf_rid")
    try:
        return object.__getattribute__(self, "_tf_rid")
    except AttributeError:
        return None


def _self_rid(self):
    rid = _instance_rid(self)
    if rid is None:
        raise ProtocolError("a proxy without a reference")
    return rid


def _own(self):
    """Whether self is an object of the tests' own class made on a class of
    the tree, not a proxy."""
    return _instance_rid(self) is None


def _local_method(self, name):
    """name as the first class of self's that is not a stand-in has it."""
    for c in type(self).__mro__:
        if isinstance(c, _RemoteMeta) and "_tf_rid" in c.__dict__:
            continue
        if name in c.__dict__:
            return c.__dict__[name].__get__(self, type(self))
    raise AttributeError(name)


def _inherited(self, name):
    """What an object of the tests' own class inherits from a class of the
    tree: asked of the tree on that class and bound to the object, which
    the tree gets as a handle. The test then had the tree's say."""
    ch = _ch()
    for c in type(self).__mro__:
        rid = c.__dict__.get("_tf_rid") if isinstance(c, _RemoteMeta) else None
        if rid is None:
            continue
        try:
            value = ch.request({"t": "getattr", "r": rid, "n": name})
        except AttributeError:
            continue
        ch.record("inherited", c, kind="used %s, inherited from %s.%s, a class of the code under test" % (name, c.__module__, c.__qualname__))
        get = getattr(type(value), "__get__", None)
        if get is not None and isinstance(type(value), _RemoteMeta):
            return get(value, self, type(self))
        return value
    raise AttributeError(name)


def _forwarder(name):
    if name == "__call__":
        def call(self, *args, **kwargs):
            if _own(self):
                return _local_method(self, "__call__")(*args, **kwargs)
            ch = _ch()
            return ch.request({"t": "call", "r": _self_rid(self), "a": ch.enc(list(args)), "k": ch.enc(kwargs)})
        return call

    def op(self, *args):
        if _own(self):
            return _local_method(self, name)(*args)
        ch = _ch()
        if name in ("__eq__", "__ne__") and len(args) == 1:
            return _equality(ch, self, name, args[0])
        if name == "__exit__" and len(args) == 3:
            return _exit(ch, self, *args)
        result = ch.request({"t": "op", "r": _self_rid(self), "n": name, "a": ch.enc(list(args))})
        if name in DECISIONS and result is not NotImplemented:
            ch.record(name, self)
        if name == "__hash__" and type(result) is not int:
            ch.fail("the code under test answered a hash that is not an int")
        return result
    op.__name__ = name
    return op


def _exit(ch, proxy, typ, value, tb):
    """A tree context manager's __exit__ after its block raised: the
    traceback stays here (its frames are the tests'), and an exception of
    a builtin class crosses as a new one of that class, with no message (an
    assertion's holds its expected value). The tree may swallow its own
    exceptions and the builtin ones the tests raise, never a failed
    assertion or an outcome of pytest's (fail, skip, xfail): those go on,
    whatever it answers, and its try is recorded against the test."""
    if value is None:
        return ch.request({"t": "op", "r": _self_rid(proxy), "n": "__exit__", "a": ch.enc([None, None, None])})
    if _rid_of(value) is None and isinstance(typ, type) and _BUILTINS.get(typ.__name__) is typ and type(value) is typ:
        sent = [ch.enc(typ), ["xb", typ.__name__], None]
    else:
        sent = [ch.enc(typ), ch.enc(value), None]
    result = ch.request({"t": "op", "r": _self_rid(proxy), "n": "__exit__", "a": ["l", sent]})
    if not result:
        return False
    if isinstance(value, (AssertionError, pytest.fail.Exception, pytest.skip.Exception, pytest.xfail.Exception)) and _rid_of(value) is None:
        ch.record("__exit__", proxy, kind="a context manager of the code under test tried to swallow a failed assertion or an outcome of pytest's; it went on")
        return False
    return True


def _mutator(base, name):
    def m(self, *args, **kwargs):
        ch = _ch()
        ch.request({"t": "callm", "r": object.__getattribute__(self, "_tf_rid"), "n": name,
                    "a": ch.enc(list(args)), "k": ch.enc(kwargs)})
        return getattr(base, name)(self, *args, **kwargs)
    m.__name__ = name
    return m


_MUTATORS = {
    list: "append extend insert remove pop clear sort reverse __setitem__ __delitem__ __iadd__ __imul__",
    dict: "__setitem__ __delitem__ pop popitem clear update setdefault __ior__",
    set: "add discard remove pop clear update difference_update intersection_update symmetric_difference_update __ior__ __iand__ __isub__ __ixor__",
}
# The local copies of a list, dict or set the tests read as an attribute of
# the tree: comparisons use the copy; changes go to the tree's too.
_MUTABLE = {base: type("Remote" + base.__name__.capitalize(), (base,), dict(
    {name: _mutator(base, name) for name in names.split()},
    __slots__=("_tf_rid",)))
    for base, names in _MUTATORS.items()}
_MUTABLE_TYPES = frozenset(_MUTABLE.values())


# The decoys' randomness is this process's own: the tests' `random`
# (which a test may seed) is neither read nor advanced.
_rng = random.SystemRandom()
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _other_letter(c):
    """A letter that differs from c, also ignoring case."""
    return _rng.choice([x for x in _LETTERS if x != c.lower()])


def _variant(v, depth=0):
    """One value near v that differs from it, drawn at random; None for a
    value it cannot vary. Drawn so that a tree cannot tell it from the
    expected value by its shape (no marker key, no fixed offset)."""
    t = type(v)
    if t is bool:
        return not v
    if t is int:
        return v + _rng.choice((-9, -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9))
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            return None
        return v + _rng.choice((-1.0, 1.0)) * (1.0 + abs(v)) * _rng.uniform(0.5, 2.0)
    if t is str:
        where = [i for i, c in enumerate(v) if not c.isspace()]
        if where and _rng.random() < 0.5:
            i = _rng.choice(where)
            return v[:i] + _other_letter(v[i]) + v[i + 1:]
        i = _rng.randrange(len(v) + 1)
        return v[:i] + _rng.choice(_LETTERS) + v[i:]
    if t is bytes:
        i = _rng.randrange(len(v) + 1)
        return v[:i] + _rng.choice(_LETTERS).encode() + v[i:]
    if depth > 3:
        return None
    if t in (list, tuple) and v:
        i = _rng.randrange(len(v))
        x = _variant(v[i], depth + 1)
        if x is None:
            return None
        return t(list(v[:i]) + [x] + list(v[i + 1:]))
    if t is dict and v:
        k = _rng.choice(list(v))
        x = _variant(v[k], depth + 1)
        if x is None:
            return None
        return {**v, k: x}
    return None


def _decoys(v):
    """Values near v that differ from it, for a tree object's equality to
    refuse; empty for values it cannot vary. Each is drawn at random: one
    part of v changed, and one part added or taken away."""
    t = type(v)
    if t is bool:
        return [not v]
    if t in (int, float, str, bytes):
        out = []
        for _ in range(8):
            x = _variant(v)
            if x is not None and x != v and x not in out:
                out.append(x)
            if len(out) == 2:
                break
        return out
    if t in (list, tuple):
        out = [x for x in [_variant(v)] if x is not None]
        if len(v) > 1:
            i = _rng.randrange(len(v))
            out.append(t(list(v[:i]) + list(v[i + 1:])))
        else:
            out.append(t(list(v) + [object()]))
        return out
    if t is dict:
        out = [x for x in [_variant(v)] if x is not None]
        if v:
            k = _rng.choice(list(v))
            out.append({x: y for x, y in v.items() if x != k})
        else:
            out.append({"\x00testfirst": 1})
        return out
    if t in (set, frozenset):
        if v:
            drop = _rng.choice(list(v))
            return [t(x for x in v if x != drop)]
        return [t({"\x00testfirst"})]
    return []


def _class_attr(cls, name):
    """name as cls or one of its bases holds it (never its metaclass), or
    None."""
    for c in cls.__mro__:
        if name in c.__dict__:
            return c.__dict__[name]
    return None


def _raw_truth(self):
    """The truth of a tree object as Python takes it: its class's __bool__
    (the tree's answer), else its length, else true."""
    cls = type(self)
    fwd = _class_attr(cls, "_tf_fwd_bool")
    if fwd is not None:
        r = fwd(self)
        if type(r) is not bool:
            raise TypeError("__bool__ should return bool, returned %s" % type(r).__name__)
        return r
    ln = _class_attr(cls, "__len__")
    if ln is not None:
        n = ln(self)
        if type(n) is not int:
            raise TypeError("'%s' object cannot be interpreted as an integer" % type(n).__name__)
        if n < 0:
            raise ValueError("__len__() should return >= 0")
        return n != 0
    return True


def _proxy_bool(self):
    """The truth of a tree object. When it is a tree equality's answer (an
    object, not a bool: _equality), the decoys are asked now, when the test
    takes its truth: an answer whose truth says equal while the tree also
    calls a decoy equal is false. The truth taken is kept: the tree cannot
    say False while the decoys are asked and True after."""
    try:
        d = object.__getattribute__(self, "__dict__")
    except AttributeError:
        d = None
    if d is not None:
        kept = d.get("_tf_truth")
        if kept is not None:
            return kept
        eq = d.pop("_tf_eq", None)
        if eq is not None:
            truth = _settle(_raw_truth(self), *eq)
            d["_tf_truth"] = truth
            return truth
    return _raw_truth(self)


def _settle(truth, ch, proxy, rid, name, decoys, fooled):
    """The truth of a tree equality's answer, once the decoys left are
    asked (see _equality)."""
    equal = name == "__eq__"
    if truth is not equal:
        return truth
    for decoy in decoys:
        fooled = _says_equal(ch, rid, name, decoy) or fooled
    if fooled:
        # The tree's equality also holds for values that differ from the
        # one the test expects: it decides nothing.
        ch.record(name, proxy, kind="%s accepts values other than the expected one" % name)
        return not equal
    return truth


def _equality(ch, proxy, name, expected):
    """A tree object's own == or != with a value of the tests: asked of the
    tree, with decoys (values near the expected one, which it must not call
    equal) asked before and after it in a random order, so that a tree
    cannot tell by when it comes which one the test compares with. The
    answer is recorded as the tree's decision; an equality that also holds
    for a decoy decides nothing, and the comparison is false. Whatever the
    answer is, its truth is what is checked: a bool or a value this side
    holds (1, a list) at once; a tree object when the test takes its truth
    (_proxy_bool), so that an answer used as an object (a query
    expression) costs nothing more."""
    rid = _self_rid(proxy)
    decoys = _decoys(expected)
    at = _rng.randrange(len(decoys) + 1)
    fooled = False
    for decoy in decoys[:at]:
        fooled = _says_equal(ch, rid, name, decoy) or fooled
    result = ch.request({"t": "op", "r": rid, "n": name, "a": ch.enc([expected])})
    if result is NotImplemented:
        return result
    ch.record(name, proxy)
    if isinstance(type(result), _RemoteMeta) and type(result)._tf_value is None and _class_attr(type(result), "__bool__") is _proxy_bool:
        try:
            d = object.__getattribute__(result, "__dict__")
        except AttributeError:
            d = None
        if d is not None:
            d.pop("_tf_truth", None)
            d["_tf_eq"] = (ch, proxy, rid, name, decoys[at:], fooled)
            return result
    if type(result) is bool:
        truth = result
    else:
        try:
            truth = bool(result)
        except ProtocolError:
            raise
        except Exception:
            return result
        if type(result) is not bool and _rid_of(result) is not None and not (
                type(result) in _MUTABLE_TYPES or isinstance(type(result), _RemoteMeta) and type(result)._tf_value is not None):
            # A tree object whose truth this side cannot keep (a class,
            # a module): the test gets the truth taken.
            result = truth
    settled = _settle(truth, ch, proxy, rid, name, decoys[at:], fooled)
    return result if settled is truth else settled


def _says_equal(ch, rid, name, decoy):
    """Whether the tree's == (or !=) called the decoy equal."""
    try:
        same = ch.request({"t": "op", "r": rid, "n": name, "a": ch.enc([decoy])})
        if same is NotImplemented:
            return False
        if type(same) is bool:
            truth = same
        elif isinstance(type(same), _RemoteMeta) and _class_attr(type(same), "__bool__") is _proxy_bool:
            # The tree's own truth of it, never one this side kept from an
            # earlier comparison (an answer it returns every time).
            truth = _raw_truth(same)
        else:
            truth = bool(same)
    except ProtocolError:
        raise
    except Exception:
        return False
    return truth is (name == "__eq__")


def _getattr(self, name):
    if name.startswith("_tf_"):
        raise AttributeError(name)
    if _own(self):
        if name.startswith("__"):
            raise AttributeError(name)
        return _inherited(self, name)
    return _ch().request({"t": "getattr", "r": _self_rid(self), "n": name})


def _setattr(self, name, value):
    if name.startswith("_tf_") or _own(self):
        return object.__setattr__(self, name, value)
    _ch().request({"t": "setattr", "r": _self_rid(self), "n": name, "v": _ch().enc(value)})


def _delattr(self, name):
    if _own(self):
        return object.__delattr__(self, name)
    _ch().request({"t": "delattr", "r": _self_rid(self), "n": name})


def _hidden_submodule(package, name, module):
    """Whether module is package's submodule name loaded from the hidden
    files."""
    spec = module.__dict__.get("__spec__")
    parent = object.__getattribute__(package, "__dict__").get("__spec__")
    if type(spec) is not importlib.machinery.ModuleSpec or type(parent) is not importlib.machinery.ModuleSpec:
        return False
    if spec.name != parent.name + "." + name or module.__dict__.get("__name__") != spec.name:
        return False
    return (spec.origin or "").startswith(HIDDEN) or any(
        str(p).startswith(HIDDEN) for p in (spec.submodule_search_locations or ()))


_UNNAMED = "<module of the code under test>"


# The names a module of the tree never answers here: what the import
# system and the runtime read of a module (a `__path__` or `__spec__` of
# the tree's would have this process import from where the tree says).
# Other dunder names are the library's own (pyparsing's `__diag__`,
# `__compat__`, a `__version_info__`): asked of the tree.
_MODULE_OWN = frozenset(dir(types.ModuleType)) | frozenset((
    "__path__", "__cached__", "__builtins__", "__getattr__", "__loader__", "__spec__", "__package__",
    "__wrapped__", "__annotations__"))


class _RemoteModule(types.ModuleType):
    """A module of the tree: its attributes are asked of the tree. The
    import system's own attributes (__spec__, __path__, …) stay here."""

    def __getattr__(self, name):
        if name.startswith("_tf_") or name in _MODULE_OWN:
            raise AttributeError(name)
        return _ch().request({"t": "getattr", "r": object.__getattribute__(self, "_tf_rid"), "n": name})

    def __setattr__(self, name, value):
        if name.startswith("__") or name.startswith("_tf_"):
            return object.__setattr__(self, name, value)
        if isinstance(value, _RemoteModule):
            # The import system binding a submodule to its package: the
            # tree's own import did that already.
            return object.__setattr__(self, name, value)
        if type(value) is types.ModuleType and _hidden_submodule(self, name, value):
            # The import system binding a hidden package that lives inside
            # the tree's package (numerals.tests, see testfirst_syspath) to
            # it: the binding stays here, where the tests look it up; the
            # tree never gets a module of the tests.
            return object.__setattr__(self, name, value)
        _ch().request({"t": "setattr", "r": object.__getattribute__(self, "_tf_rid"), "n": name, "v": _ch().enc(value)})

    def __delattr__(self, name):
        if name.startswith("__"):
            return object.__delattr__(self, name)
        _ch().request({"t": "delattr", "r": object.__getattribute__(self, "_tf_rid"), "n": name})

    def __repr__(self):
        return "<module %r of the code under test>" % (self.__dict__.get("__name__"),)

    def __dir__(self):
        return _ch().request({"t": "op", "r": object.__getattribute__(self, "_tf_rid"), "n": "__dir__", "a": ["l", []]})


# Imports.

def _local(fullname):
    top = fullname.partition(".")[0]
    mod = sys.modules.get(top)
    if isinstance(mod, _RemoteModule):
        return False
    if top in sys.stdlib_module_names or top in _RUNNER:
        return True
    if mod is not None:
        return not isinstance(mod, _RemoteModule)
    spec = importlib.machinery.PathFinder.find_spec(top)
    return spec is not None and (spec.origin or "").startswith(HIDDEN) or spec is not None and any(
        str(p).startswith(HIDDEN) for p in (spec.submodule_search_locations or ()))


class _Loader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        # A module first met as a value (an attribute of its package) was
        # made without its name; the import system keeps a name it finds,
        # and `from package import submodule` imports package.<that name>.
        if self.module.__dict__.get("__name__") == _UNNAMED:
            object.__setattr__(self.module, "__name__", spec.name)
        return self.module

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    """Imports every module that is not the standard library's, the
    runner's or the hidden tests' own in the tree's process."""

    def find_spec(self, fullname, path=None, target=None):
        if _local(fullname):
            return None
        ch = _ch()
        module = ch.request({"t": "import", "n": fullname})
        if not isinstance(module, _RemoteModule):
            raise ImportError("the code under test's import of %s gave no module" % fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(module), is_package=_has_path(module))


def _has_path(module):
    try:
        _ch().request({"t": "getattr", "r": object.__getattribute__(module, "_tf_rid"), "n": "__path__"})
        return True
    except AttributeError:
        return False


# The plugin.

def _start():
    global _channel
    fd = os.environ.get(SOCKET_FD_ENV)
    if not fd:
        raise pytest.UsageError("testfirst_split: %s is not set" % SOCKET_FD_ENV)
    _RUNNER.update(name.partition(".")[0] for name in list(sys.modules))
    os.environ.__class__ = _TrackedEnviron
    sock = socket.socket(fileno=int(fd))
    os.set_inheritable(sock.fileno(), False)
    _channel = _Channel(sock)
    sys.meta_path.insert(0, _Finder())


_start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    ch = _channel
    ch.test = item.nodeid
    ch.tests.setdefault(item.nodeid, {})
    try:
        yield
    finally:
        ch.test = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # A broken channel fails each test that asks the tree anything
    # (ProtocolError), not the tests that never do: the grade says why
    # from the split report.
    pass


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    _channel.test = None
    yield


@pytest.fixture
def tmp_path(tmp_path):
    # The tree's uid reads and writes the test's temporary files too.
    for p in (tmp_path, *tmp_path.parents):
        if str(p) in ("/", "/tmp"):
            break
        try:
            os.chmod(p, 0o777)
        except OSError:
            pass
    return tmp_path


def pytest_unconfigure(config):
    fd = os.environ.get(REPORT_FD_ENV)
    if not fd or _channel is None:
        return
    report = {"requests": _channel.requests, "broken": _channel.broken or "",
              "tests": {k: v for k, v in _channel.tests.items()},
              "refused": {k: v for k, v in _channel.refused.items() if v}}
    try:
        with os.fdopen(int(fd), "w") as f:
            json.dump(report, f)
    except OSError:
        pass
