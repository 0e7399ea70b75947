# Lists the hidden tests from their syntax trees, without importing them, so
# the wrapper knows which tests the runner must report before any code under
# test exists in the container. Mirrors pytest 7.2's default collection
# (see "Collection" below): files test_*.py and *_test.py outside pytest's
# default norecursedirs; functions test*; classes Test* and their own and
# inherited test* methods and nested Test* classes; unittest.TestCase
# subclasses of any name; __test__; and the ids of literal parametrize
# cases, from pytest's own IdMaker. Every other .py file of the hidden set
# is read too, as a helper module base classes may come from.
#
# For each module it also says whether sentinel tests may be appended to it
# and which calls of the code under test its tests make, for the sentinels
# to make too (see sentinel.go).
import ast
import builtins
import fnmatch
import importlib.util
import json
import os
import sys

NORECURSE = ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"]

# Module-level functions pytest runs around the tests of a module: with one,
# a sentinel appended to the module could error through no fault of its own.
RUN_AROUND = {
    "setup_module", "teardown_module", "setup_function", "teardown_function",
    "setup", "teardown", "setUpModule", "tearDownModule",
}

# Names a sentinel's body relies on: a module that rebinds one cannot host it.
SENTINEL_NAMES = {"isinstance", "object", "BaseException"}

# Roots of calls that are not the code under test.
NOT_UNDER_TEST = {"pytest", "_pytest", "pluggy", "unittest"}

MAX_CALLS = 20


def is_test_file(name):
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def is_test_function(node):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def bound_names(tree):
    """Names bound at module level, and those bound by imports of modules
    outside the standard library and the test tooling."""
    names, imported = set(), set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top = (node.module or "").split(".")[0] if isinstance(node, ast.ImportFrom) else None
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                names.add(name)
                root = top if top is not None else a.name.split(".")[0]
                if isinstance(node, ast.ImportFrom) and node.level > 0:
                    root = ""
                if root not in sys.stdlib_module_names and root not in NOT_UNDER_TEST:
                    imported.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        else:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
    return names, imported


def host_problem(tree, names):
    """Why sentinels may not be appended to this module, or None."""
    if names & SENTINEL_NAMES:
        return "rebinds a builtin the sentinels use"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return "star import"
        if isinstance(node, ast.Attribute) and node.attr in ("fixture", "yield_fixture", "usefixtures"):
            return "fixtures"
        if isinstance(node, ast.Name) and node.id in ("fixture", "yield_fixture", "usefixtures", "pytestmark"):
            return "fixtures or module marks"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (node.name in RUN_AROUND or node.name.startswith("pytest_")):
            return "functions pytest runs around the tests"
    return None


def calls(tree, text, names, imported):
    """The calls of the code under test that the module's plain test
    functions and methods make as statements, each with the test and the
    variable it was assigned to. A call uses only names bound at module
    level or builtins (never a method's self), so it means the same in a
    module-level sentinel."""
    known = names | set(dir(builtins))
    found = []
    tests = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            tests.append((node, 0))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            tests.extend((item, 1) for item in node.body if isinstance(item, ast.FunctionDef) and item.name.startswith("test"))
    for node, self_args in tests:
        a = node.args
        if a.posonlyargs or len(a.args) != self_args or a.vararg or a.kwonlyargs or a.kwarg:
            continue
        for stmt in node.body:
            target = ""
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value, target = stmt.value, stmt.targets[0].id
            elif isinstance(stmt, ast.Expr):
                value = stmt.value
            else:
                continue
            if not isinstance(value, ast.Call):
                continue
            root = value.func
            while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if not isinstance(root, ast.Name) or root.id not in imported:
                continue
            used = set()
            ok = True
            for sub in ast.walk(value):
                if isinstance(sub, (ast.Lambda, ast.comprehension, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
                    ok = False
                elif isinstance(sub, ast.Name):
                    used.add(sub.id)
            if not ok or not used <= known:
                continue
            if target in used:
                target = ""
            src = ast.get_source_segment(text, value) if text is not None else None
            if not src or "\n" in src or "\r" in src:
                src = ast.unparse(value)
            if not src.isascii():
                # The sentinels are appended as ASCII, whatever the
                # module's declared encoding.
                continue
            found.append({"test": node.name, "call": src, "target": target})
            if len(found) >= MAX_CALLS:
                return found
    return found


# --- Collection -----------------------------------------------------------
#
# pytest collects, from each test module's namespace: functions test*, not
# fixtures; classes Test* without __init__ and their test* methods, own and
# inherited, and their nested Test* classes; and any subclass of
# unittest.TestCase, whatever its name, with the test* methods its loader
# finds (own and inherited, mixins included). A class or module whose
# __test__ is False is left out. Names a module imports count too: pytest
# collects a test class imported from a helper module in every module that
# imports it. Base classes are resolved by name through the imports between
# hidden modules; a base from outside the hidden set is known only if it is
# unittest's.

UNITTEST_BASES = {
    "unittest.TestCase", "unittest.case.TestCase",
    "unittest.IsolatedAsyncioTestCase", "unittest.async_case.IsolatedAsyncioTestCase",
}


class Klass:
    def __init__(self, mod, node):
        self.mod = mod
        self.node = node
        self.name = node.name


class Mod:
    """One hidden Python file: its module name and top-level bindings."""

    def __init__(self, rel, name, tree, text):
        self.rel = rel
        self.name = name
        self.tree = tree
        self.text = text
        # name -> ("class", ClassDef) | ("func", FunctionDef) |
        #         ("from", module, level, name) | ("module", dotted, level) |
        #         ("star", module, level) | ("value", node)
        self.bindings = {}
        self.stars = []
        self.deleted = set()
        self.test_flag = None
        bind_block(self, tree.body)


def cond_value(test):
    """The value of an if condition the interpreter that runs the tests
    decides alike for every tree: sys.version_info and sys.platform
    comparisons, membership in sys.builtin_module_names. None when it
    cannot be known from the syntax."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        v = cond_value(test.operand)
        return None if v is None else not v
    if isinstance(test, ast.BoolOp):
        vals = [cond_value(v) for v in test.values]
        if isinstance(test.op, ast.And):
            if False in vals:
                return False
            return None if None in vals else True
        if True in vals:
            return True
        return None if None in vals else False
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    src = ast.unparse(left)
    if isinstance(test.ops[0], (ast.In, ast.NotIn)) and ast.unparse(right) == "sys.builtin_module_names":
        try:
            found = ast.literal_eval(left) in sys.builtin_module_names
        except Exception:
            return None
        return found if isinstance(test.ops[0], ast.In) else not found
    if src == "sys.version_info" or src.startswith("sys.version_info["):
        try:
            lv = eval(src, {"sys": sys})
            rv = ast.literal_eval(right)
        except Exception:
            return None
    elif src == "sys.platform":
        lv = sys.platform
        try:
            rv = ast.literal_eval(right)
        except Exception:
            return None
    else:
        return None
    op = test.ops[0]
    try:
        return {ast.Lt: lv < rv, ast.LtE: lv <= rv, ast.Gt: lv > rv, ast.GtE: lv >= rv,
                ast.Eq: lv == rv, ast.NotEq: lv != rv}.get(type(op))
    except TypeError:
        return None


def block_bindings(mod, body):
    """The names a block binds for certain, by binding them into a scratch
    module and returning its bindings."""
    scratch = Mod.__new__(Mod)
    scratch.bindings, scratch.stars, scratch.test_flag, scratch.deleted = {}, [], None, set()
    scratch.rel, scratch.name = mod.rel, mod.name
    bind_block(scratch, body)
    return scratch


def bind_block(mod, body):
    for node in body:
        if isinstance(node, ast.ClassDef):
            mod.bindings[node.name] = ("class", node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mod.bindings[node.name] = ("func", node)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    mod.bindings[a.asname] = ("module", a.name, 0)
                else:
                    top = a.name.split(".")[0]
                    mod.bindings[top] = ("module", top, 0)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name == "*":
                    mod.stars.append((node.module or "", node.level))
                else:
                    mod.bindings[a.asname or a.name] = ("from", node.module or "", node.level, a.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    mod.bindings[t.id] = ("value", node.value)
                    if t.id == "__test__":
                        mod.test_flag = literal_bool(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            mod.bindings[node.target.id] = ("value", node.value)
        elif isinstance(node, ast.If):
            v = cond_value(node.test)
            if v is True:
                bind_block(mod, node.body)
            elif v is False:
                bind_block(mod, node.orelse)
            else:
                # A name bound in every branch is bound whichever runs.
                a, b = block_bindings(mod, node.body), block_bindings(mod, node.orelse)
                for name in a.bindings.keys() & b.bindings.keys():
                    mod.bindings[name] = a.bindings[name]
        elif isinstance(node, ast.Try):
            branches = [block_bindings(mod, node.body + node.orelse)]
            branches += [block_bindings(mod, h.body) for h in node.handlers]
            common = set(branches[0].bindings)
            for br in branches[1:]:
                common &= set(br.bindings)
            for name in common:
                mod.bindings[name] = branches[0].bindings[name]
            bind_block(mod, node.finalbody)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            bind_block(mod, node.body)
        elif isinstance(node, ast.Delete):
            # `del BaseTests` hides a base class from pytest; the classes
            # defined before still have it as a base.
            for t in node.targets:
                if isinstance(t, ast.Name):
                    mod.deleted.add(t.id)


def literal_bool(node):
    try:
        v = ast.literal_eval(node)
    except Exception:
        return None
    return bool(v)


class Index:
    def __init__(self, mods):
        self.mods = mods
        self.by_name = {}
        for m in mods:
            self.by_name.setdefault(m.name, m)
            # A test module's directory is on sys.path (pytest's prepend
            # import mode), so its neighbours import by their file names.
            self.by_name.setdefault(m.name.rsplit(".", 1)[-1], m)

    def module(self, frm, dotted, level):
        if level:
            parts = frm.name.split(".")
            if not frm.rel.endswith("__init__.py"):
                parts = parts[:-1]
            if level > 1:
                parts = parts[:len(parts) - (level - 1)]
            dotted = ".".join(parts + ([dotted] if dotted else []))
        return self.by_name.get(dotted), dotted

    def lookup(self, mod, name, depth=0):
        """What name means in mod: ("class", Klass) | ("func", node) |
        ("module", Mod) | ("ext", dotted) | None."""
        if depth > 20:
            return None
        b = mod.bindings.get(name)
        if b is None:
            for dotted, level in mod.stars:
                m, full = self.module(mod, dotted, level)
                if m is not None and not name.startswith("_"):
                    r = self.lookup(m, name, depth + 1)
                    if r is not None:
                        return r
            return None
        kind = b[0]
        if kind == "class":
            return ("class", Klass(mod, b[1]))
        if kind == "func":
            return ("func", b[1])
        if kind == "module":
            m, full = self.module(mod, b[1], b[2])
            return ("module", m) if m is not None else ("ext", full)
        if kind == "from":
            m, full = self.module(mod, b[1], b[2])
            if m is not None:
                r = self.lookup(m, b[3], depth + 1)
                if r is not None:
                    return r
                sub, _ = self.module(m, b[3], 1) if m.rel.endswith("__init__.py") else (None, None)
                return ("module", sub) if sub is not None else None
            sub = self.by_name.get(full + "." + b[3]) if full else None
            if sub is not None:
                return ("module", sub)
            return ("ext", full + "." + b[3])
        if kind == "value":
            v = b[1]
            if isinstance(v, (ast.Name, ast.Attribute)):
                return self.resolve(mod, v, depth + 1)
        return None

    def resolve(self, mod, expr, depth=0):
        if isinstance(expr, ast.Name):
            return self.lookup(mod, expr.id, depth)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(mod, expr.value, depth + 1)
            if base is None:
                return None
            if base[0] == "module":
                return self.lookup(base[1], expr.attr, depth + 1)
            if base[0] == "ext":
                full = base[1] + "." + expr.attr
                sub = self.by_name.get(full)
                return ("module", sub) if sub is not None else ("ext", full)
        return None

    def mro(self, k, depth=0):
        """k and its hidden bases, depth first, and whether a base is
        unittest's TestCase."""
        out, is_ut, seen = [], False, set()
        todo = [(k, 0)]
        while todo:
            c, d = todo.pop(0)
            key = (c.mod.rel, c.node.lineno, c.name)
            if key in seen or d > 30:
                continue
            seen.add(key)
            out.append(c)
            bases = []
            for b in c.node.bases:
                r = self.resolve(c.mod, b)
                if r is None:
                    continue
                if r[0] == "ext" and r[1] in UNITTEST_BASES:
                    is_ut = True
                elif r[0] == "class":
                    bases.append((r[1], d + 1))
            todo = bases + todo
        return out, is_ut


def class_attrs(k):
    """The class body's own names: methods, nested classes, assignments."""
    attrs = {}
    for item in k.node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            attrs[item.name] = ("func", item)
        elif isinstance(item, ast.ClassDef):
            attrs[item.name] = ("class", item)
        elif isinstance(item, ast.Assign):
            for t in item.targets:
                if isinstance(t, ast.Name):
                    attrs[t.id] = ("value", item.value)
    return attrs


def decorator_names(fn):
    names = set()
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def is_fixture(fn):
    return bool(decorator_names(fn) & {"fixture", "yield_fixture"})


# --- Parametrized ids -------------------------------------------------------

class Unknown(Exception):
    """The ids of a parametrization cannot be known from the syntax."""


def parametrize_marks(decorators):
    """The parametrize calls among decorators (or mark expressions),
    closest to the function first, as pytest applies them."""
    out = []
    for d in reversed(decorators):
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize":
            out.append(d)
    return out


def mark_list(node):
    """The marks of a pytestmark assignment's value."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return list(node.elts)
    return [node]


def module_literal(mod, node, depth=0):
    """node, or the display a module-level name is bound to when node is
    that name (CASES = [(1, 2), …] then parametrize("a,b", CASES))."""
    if mod is not None and isinstance(node, ast.Name) and depth < 5:
        b = mod.bindings.get(node.id)
        if b and b[0] == "value":
            return module_literal(mod, b[1], depth + 1)
    return node


def param_ids(call, mod=None):
    """The ids pytest gives one parametrize call's cases, via pytest's own
    IdMaker, from literal arguments (or module-level names bound to
    literal displays) only."""
    from _pytest.mark.structures import ParameterSet
    from _pytest.python import IdMaker

    args = list(call.args)
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    if len(args) < 2:
        if "argnames" in kw and "argvalues" in kw and not args:
            args = [kw["argnames"], kw["argvalues"]]
        elif len(args) == 1 and "argvalues" in kw:
            args.append(kw["argvalues"])
        else:
            raise Unknown
    args = [module_literal(mod, a) for a in args]
    try:
        names = ast.literal_eval(args[0])
    except Exception:
        raise Unknown
    if isinstance(names, str):
        argnames = [n.strip() for n in names.split(",") if n.strip()]
        force_tuple = len(argnames) == 1
    elif isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        argnames, force_tuple = list(names), False
    else:
        raise Unknown
    if not isinstance(args[1], (ast.List, ast.Tuple)) or not args[1].elts:
        raise Unknown
    ids = None
    if "ids" in kw:
        kw["ids"] = module_literal(mod, kw["ids"])
        if not isinstance(kw["ids"], (ast.List, ast.Tuple)):
            raise Unknown
        try:
            ids = [ast.literal_eval(e) for e in kw["ids"].elts]
        except Exception:
            raise Unknown
        if not all(i is None or isinstance(i, (str, int, float, bool)) for i in ids):
            raise Unknown
    sets = []
    for i, elt in enumerate(args[1].elts):
        explicit = ids is not None and i < len(ids) and ids[i] is not None
        pid = None
        if isinstance(elt, ast.Call) and ast.unparse(elt.func).endswith("param"):
            values = []
            for k in elt.keywords:
                if k.arg == "id":
                    try:
                        pid = ast.literal_eval(k.value)
                    except Exception:
                        raise Unknown
            # A value whose id is given need not be known.
            for a in elt.args:
                values.append(literal_or_unknown(a, explicit or pid is not None))
            sets.append(ParameterSet(values=tuple(values), marks=(), id=pid))
            continue
        value = literal_or_unknown(elt, explicit)
        if force_tuple:
            sets.append(ParameterSet(values=(value,), marks=(), id=None))
        else:
            if not isinstance(value, (tuple, list)):
                if value is OPAQUE:
                    sets.append(ParameterSet(values=(OPAQUE,) * len(argnames), marks=(), id=None))
                    continue
                raise Unknown
            sets.append(ParameterSet(values=tuple(value), marks=(), id=None))
    for s in sets:
        if len(s.values) != len(argnames):
            raise Unknown
    return IdMaker(argnames, sets, None, ids, None, None, None).make_unique_parameterset_ids()


OPAQUE = object()


def literal_or_unknown(node, explicit):
    try:
        return ast.literal_eval(node)
    except Exception:
        if explicit:
            return OPAQUE
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(literal_or_unknown(e, False) for e in node.elts)
        raise Unknown


# Names of the hidden fixtures with params: a test that uses one is
# parametrized by it.
PARAM_FIXTURES = set()


def param_fixtures(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and any(k.arg == "params" for k in d.keywords):
                    name = node.name
                    for k in d.keywords:
                        if k.arg == "name" and isinstance(k.value, ast.Constant):
                            name = k.value.value
                    PARAM_FIXTURES.add(name)


def case_ids(mod, fn, klass_marks, module_marks):
    """The parametrized ids of fn ("1-2", …), [] when it is not
    parametrized, None when they cannot be known from the syntax."""
    a = fn.args
    if any(arg.arg in PARAM_FIXTURES for arg in a.posonlyargs + a.args + a.kwonlyargs):
        return None
    calls = parametrize_marks(fn.decorator_list) + klass_marks + module_marks
    if not calls:
        return []
    # pytest joins the ids of stacked parametrizations with "-" whatever
    # they are, an empty one too ("" then "fg" is "-fg"): CallSpec2.id.
    combined = None
    try:
        for c in calls:
            ids = param_ids(c, mod)
            combined = ids if combined is None else [a + "-" + b for a in combined for b in ids]
    except Unknown:
        return None
    except Exception:
        return None
    return combined


def marks_of_class(k):
    marks = parametrize_marks(k.node.decorator_list)
    for item in k.node.body:
        if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in item.targets):
            marks += parametrize_marks(mark_list(item.value))
    return marks


def marks_of_module(mod):
    b = mod.bindings.get("pytestmark")
    if b and b[0] == "value":
        return parametrize_marks(mark_list(b[1]))
    return []


# --- Listing ------------------------------------------------------------------

def list_class(index, mod, k, prefix, found, nested_ok):
    """The tests of class k collected in mod under the class path prefix."""
    chain, is_ut = index.mro(k)
    flag = None
    attrs = {}
    for c in chain:
        for name, v in class_attrs(c).items():
            attrs.setdefault(name, (c, v))
    if "__test__" in attrs and attrs["__test__"][1][0] == "value":
        flag = literal_bool(attrs["__test__"][1][1])
    if flag is False:
        return
    cls_marks = []
    for c in chain:
        cls_marks += marks_of_class(c)
    mod_marks = marks_of_module(mod)
    if is_ut:
        names = sorted(n for n, (c, v) in attrs.items() if n.startswith("test") and v[0] == "func")
        if not names and "runTest" in attrs and attrs["runTest"][1][0] == "func":
            names = ["runTest"]
        for n in names:
            found.append(entry(mod, prefix, n, []))
        return
    if not k.name.startswith("Test") or "__init__" in attrs or "__new__" in attrs:
        return
    for n, (c, v) in attrs.items():
        if v[0] == "func" and n.startswith("test") and not is_fixture(v[1]):
            found.append(entry(mod, prefix, n, case_ids(c.mod, v[1], cls_marks, mod_marks)))
        elif v[0] == "class" and n.startswith("Test") and nested_ok:
            list_class(index, c.mod, Klass(c.mod, v[1]), prefix + "." + n, found, True)


def entry(mod, cls, name, cases):
    e = {"file": mod.rel, "name": name}
    if cls:
        e["class"] = cls
    if cases is None:
        e["cases_unknown"] = True
    elif cases:
        e["cases"] = cases
    return e


def list_module(index, mod):
    found = []
    if mod.test_flag is False:
        return found
    mod_marks = marks_of_module(mod)
    names = list(mod.bindings)
    for dotted, level in mod.stars:
        m, _ = index.module(mod, dotted, level)
        if m is not None:
            names += [n for n in m.bindings if not n.startswith("_") and n not in names]
    for name in names:
        if name in mod.deleted:
            continue
        r = index.lookup(mod, name)
        if r is None:
            continue
        if r[0] == "func" and name.startswith("test") and not is_fixture(r[1]):
            found.append(entry(mod, "", name, case_ids(mod, r[1], [], mod_marks)))
        elif r[0] == "class":
            list_class(index, mod, r[1], name, found, True)
    return found


def module_name(root, rel):
    """The name pytest imports a hidden file under (prepend import mode):
    its path from the first directory up that is not a package."""
    parts = rel[:-3].split(os.sep)
    dirs = parts[:-1]
    keep = [] if parts[-1] == "__init__" else [parts[-1]]
    while dirs and os.path.isfile(os.path.join(root, *dirs, "__init__.py")):
        keep.insert(0, dirs[-1])
        dirs = dirs[:-1]
    return ".".join(keep)


def conftest_problem(tree):
    """Why tests under a hidden conftest may not host sentinels: it hooks
    the run or has fixtures every test uses."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("pytest_"):
                return "a hidden conftest.py hooks the run"
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and any(k.arg == "autouse" for k in d.keywords):
                    return "a hidden conftest.py has autouse fixtures"
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("pytest_plugins", "pytestmark") for t in node.targets):
            return "a hidden conftest.py loads plugins or marks"
        elif isinstance(node, (ast.ImportFrom,)) and any(a.name == "*" for a in node.names):
            return "a hidden conftest.py star-imports"
    return None


def main(root):
    found = []
    modules = []
    errors = []
    parsed = []
    conftests = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in NORECURSE))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            test = is_test_file(name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
                tree = ast.parse(data, rel)
            except (SyntaxError, ValueError) as e:
                if test or name == "conftest.py":
                    errors.append("%s: %s" % (rel, e))
                continue
            try:
                text = importlib.util.decode_source(data)
            except (SyntaxError, ValueError, LookupError):
                text = None
            if name == "conftest.py":
                conftests[os.path.dirname(rel)] = conftest_problem(tree)
            parsed.append((rel, test, Mod(rel, module_name(root, rel), tree, text)))
    for _, _, m in parsed:
        param_fixtures(m.tree)
    index = Index([m for _, _, m in parsed])
    for rel, test, mod in parsed:
        if not test:
            continue
        found += list_module(index, mod)
        names, imported = bound_names(mod.tree)
        problem = host_problem(mod.tree, names)
        hooked = None
        d = os.path.dirname(rel)
        while hooked is None:
            if conftests.get(d):
                hooked = conftests[d]
            if not d:
                break
            d = os.path.dirname(d)
        problem = problem or hooked
        modules.append({
            "file": rel,
            "host": problem is None,
            "hooked": hooked is not None,
            "calls": calls(mod.tree, mod.text, names, imported) if problem is None else [],
        })
    json.dump({"tests": found, "modules": modules, "errors": errors}, sys.stdout)


main(sys.argv[1])
