import enum, dataclasses, logging, warnings, re
log = logging.getLogger("wordstats")

def slugify(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")

class ParseError(ValueError):
    def __init__(self, msg, pos):
        super().__init__(msg)
        self.pos = pos

def parse(s):
    if not s.isdigit():
        raise ParseError("not a number: %r" % s, 3)
    return int(s)

class Counter2:
    def __init__(self): self.n = 0
    def add(self, k=1): self.n += k; return self
    def __len__(self): return self.n
    def __iter__(self): return iter(range(self.n))

class Color(enum.Enum):
    RED = 1
    BLUE = 2

@dataclasses.dataclass
class Point:
    x: int
    y: int

def shout(s):
    print(s.upper())
    return len(s)

class Word(str):
    def shout(self): return self.upper() + "!"

class Tagged(int):
    pass

def apply(f, xs):
    return [f(x) for x in xs]

def log_it(msg):
    log.warning("saw %s", msg)

def warn_it():
    warnings.warn("old", DeprecationWarning)
    return 1

def collect(acc):
    acc.append(1)
    return acc

def read_file(p):
    with open(p) as f:
        return f.read()

import threading, queue as _q, concurrent.futures, os as _os
def in_thread(cb, n):
    out = []
    t = threading.Thread(target=lambda: out.append(cb(n)))
    t.start(); t.join()
    return out[0]

def pool_map(f, xs):
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        return list(ex.map(f, xs))

def pool_many(f, n):
    # Threads of the tree calling back often, switching as often as the
    # interpreter lets them: what a busy pool does now and then.
    import sys
    was = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            return list(ex.map(f, range(n)))
    finally:
        sys.setswitchinterval(was)

def background(cb):
    q = _q.Queue()
    def work():
        for i in range(3):
            q.put(cb(i))
    threading.Thread(target=work).start()
    return [q.get() for _ in range(3)]

def forked():
    pid = _os.fork()
    if pid == 0:
        print("child")
        _os._exit(0)
    _os.waitpid(pid, 0)
    return 7

def noisy_thread():
    t = threading.Thread(target=lambda: print("from thread"))
    t.start(); t.join()
    return 1

class Results:
    def __init__(self, items): self.items = list(items)
    def __eq__(self, other):
        if isinstance(other, list): return self.items == other
        return isinstance(other, Results) and self.items == other.items
    __hash__ = None
def results(s): return Results(s.split())

class Any:
    def __eq__(self, other): return True
def cheat(s): return Any()

class Asserts:
    def assertSlug(self, s, want):
        self.assertEqual(slugify(s), want)


# Shapes of real suites the split refuses (its per-test fallback grades
# them in-process when the base needs them too).

def module_of(func):
    """The module name a function was defined in, from its globals (six's
    helpers read __globals__ of the tests' functions)."""
    return func.__globals__["__name__"]


def frames_of(tb):
    """How many frames a traceback holds (pyparsing's explain walks the
    tests' tracebacks)."""
    n = 0
    while tb is not None:
        n, tb = n + 1, tb.tb_next
    return n


def memo(method):
    """Caches a method's answer in its object's __dict__ (cachetools'
    decorators on the tests' own classes)."""
    def wrapper(self):
        d = self.__dict__
        if method.__name__ not in d:
            d[method.__name__] = method(self)
        return d[method.__name__]
    return wrapper


def roll(rng, n):
    """n draws of a random.Random the tests hand over."""
    return [rng.randint(1, 6) for _ in range(n)]


def store(mapping, key, value):
    mapping[key] = value
    return len(mapping)


def iterable(x):
    """Whether iter(x) works (toolz's isiterable)."""
    try:
        iter(x)
        return True
    except TypeError:
        return False


# Equality answers that are not True or False.

class Flag:
    """A numpy-like scalar truth: what an honest __eq__ of a number type
    returns."""
    def __init__(self, v): self.v = bool(v)
    def __bool__(self): return self.v
    def all(self): return self.v
def scalar(v): return Scalar(v)
class Scalar:
    def __init__(self, v): self.v = v
    def __eq__(self, other): return Flag(self.v == other)
    __hash__ = None

class Expr:
    """A query expression: what an ORM column's __eq__ returns (no truth of
    its own)."""
    def __init__(self, text): self.text = text
    def __str__(self): return self.text
class Column:
    def __init__(self, name): self.name = name
    def __eq__(self, other): return Expr("%s = %r" % (self.name, other))
    __hash__ = None
def column(name): return Column(name)
def where(expr): return "WHERE " + str(expr)

class IntEq:
    """An honest __eq__ that answers 1 or 0."""
    def __init__(self, v): self.v = v
    def __eq__(self, other): return int(self.v == other)
    __hash__ = None
def int_eq(v): return IntEq(v)

# Cheats: each __eq__ is wrong, and must not pass.
class Truthy:
    def __eq__(self, other): return 1
    __hash__ = None
def cheat_truthy(): return Truthy()

class Remembers:
    def __init__(self): self.seen = []
    def __eq__(self, other):
        if not self.seen: self.seen.append(other)
        return type(other) is type(self.seen[0]) and other == self.seen[0]
    __hash__ = None
def cheat_remembers(): return Remembers()

class Yes:
    pass
class YesObject:
    def __eq__(self, other): return Yes()
    __hash__ = None
def cheat_object(): return YesObject()

class Flips:
    def __init__(self): self.n = 0
    def __bool__(self):
        self.n += 1
        return self.n > 1
class FlipsObject:
    def __eq__(self, other): return Flips()
    __hash__ = None
def cheat_flips(): return FlipsObject()

# Shapes pyparsing has: a callback's arity told by where its TypeError is
# raised (_trim_arity), context managers of the tree around the tests'
# blocks, and a helper that takes its caller's frame.
def trimmed(fn, *args):
    import traceback
    for limit in range(len(args) + 1):
        try:
            return fn(*args[limit:])
        except TypeError as e:
            if len(traceback.extract_tb(e.__traceback__)) > 1:
                raise


class quiet:
    """Swallows the ValueErrors of its block, nothing else."""
    def __enter__(self):
        return self
    def __exit__(self, typ, value, tb):
        return typ is not None and issubclass(typ, ValueError)


class swallow_all:
    """Says it swallowed whatever its block raised."""
    def __enter__(self):
        return self
    def __exit__(self, typ, value, tb):
        return True


import contextlib

@contextlib.contextmanager
def expecting(case, exc):
    with case.assertRaises(exc):
        yield


def caller_name():
    import sys
    return sys._getframe(1).f_code.co_name


class _Flags:
    warn = False


# A module dunder of the library's own, as pyparsing's __diag__.
__flags__ = _Flags()
