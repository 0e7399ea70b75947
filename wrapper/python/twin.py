# Makes the twins of the hidden tests: for every test, one expectation
# changed so that a correct, deterministic implementation must fail it, and
# every other byte of the file left as it was. The wrapper runs this as root
# with `python3 -I -S` after the hidden files are written and before anything
# of the tree under test runs, in every pytest sandbox: with "apply" it
# rewrites the files with their twins, without it it rewrites them with their
# own bytes, so that both kinds of run leave the same traces. The map of what
# was changed goes to stdout, which only the wrapper reads.
#
# Input (stdin, JSON): {"root": dir, "apply": bool, "seed": str, "exclude": [test ids]}
# Output (stdout, JSON): {"twins": [{id, file, line, kind, change}],
#                         "untwinnable": [{id, why}], "errors": [str]}
#
# Only an assertion certain to run when the test passes is changed: a
# top-level statement of the test body with no return before it, or the
# test's top-level `with pytest.raises(...)`. In order of preference:
#   literal     a literal operand of an `==` assertion (or of assertEqual, or
#               inside pytest.approx): an int moved by a small amount, a float
#               scaled, a bool flipped, one character of a string changed to
#               another of its class, one element of a container changed;
#               `is True` / `is False` flipped;
#   parametrize the expected value of every case, when a parameter is used
#               only as an operand of such assertions;
#   raises      pytest.raises(X) made to expect a built-in exception that is
#               neither a base nor a subclass of X;
#   negation    `assert e` made `assert not e` (`==` made `!=`, `is` made
#               `is not`, ...), only where nothing better exists.
# Choices are drawn from a generator seeded with the grade's seed, so two
# sandboxes of one grade (the tree under test and the reference) get the
# same twins.
import ast
import builtins
import fnmatch
import json
import os
import random
import sys

NORECURSE = ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"]

# Exceptions a raises twin may expect instead of the original. Never
# AssertionError (a failing assert in the block would satisfy it) nor the
# roots of the hierarchy.
RAISES_POOL = [
    "ValueError", "TypeError", "KeyError", "IndexError", "AttributeError", "ZeroDivisionError",
    "RuntimeError", "LookupError", "ArithmeticError", "OSError", "FileNotFoundError",
    "PermissionError", "OverflowError", "UnicodeError", "RecursionError", "NameError",
    "ImportError", "EOFError", "MemoryError", "BufferError", "TimeoutError", "StopIteration",
]

# Ranks of the kinds of twin, best first.
KIND_RANK = {"literal": 0, "parametrize": 0, "raises": 1, "negation": 2}


def is_test_file(name):
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def is_test_function(node):
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


class Source:
    """A file's bytes with ast positions (line, utf-8 column) as offsets."""

    def __init__(self, data):
        self.data = data
        self.starts = [0]
        for line in data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line, col):
        return self.starts[line - 1] + col

    def span(self, node):
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def text(self, node):
        a, b = self.span(node)
        return self.data[a:b].decode("utf-8")


class Edit:
    """One replacement of a byte span, with what it says it changes."""

    def __init__(self, start, end, new, line, change, check=None):
        self.start, self.end, self.new = start, end, new.encode("utf-8")
        self.line, self.change, self.check = line, change, check


def literal_value(text):
    return ast.literal_eval("(" + text + "\n)")


def mutate_int(rng, v, text, approx):
    digits = text.isdigit()
    hexa = text[:2] in ("0x", "0X") and all(c in "0123456789abcdefABCDEF" for c in text[2:]) and len(text) > 2
    if not (digits or hexa):
        return None
    if approx:
        d = max(1, int(abs(v) * rng.choice([0.25, 0.5, 0.75])) + 1)
    else:
        d = rng.randint(1, 3)
    new = v + d if v - d < 0 or rng.random() < 0.5 else v - d
    if hexa:
        body = format(new, "x")
        if any(c.isupper() for c in text[2:]):
            body = body.upper()
        return text[:2] + body, new
    return str(new), new


def mutate_float(rng, v, text):
    if v != v or v in (float("inf"), float("-inf")) or "j" in text.lower():
        return None
    if v == 0.0:
        new = rng.choice([0.5, 1.0, 1.5, 2.0, 0.25])
    else:
        new = v * rng.choice([1.5, 2.0, 0.5, 1.25, 3.0])
    if new == v or new != new or new in (float("inf"), float("-inf")):
        return None
    return repr(new), new


def other_of_class(rng, c):
    for alphabet in ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"):
        if c in alphabet:
            return rng.choice([x for x in alphabet if x != c])
    return None


def mutate_string(rng, v, text):
    positions = [i for i, c in enumerate(text) if c.isascii() and c.isalnum()]
    rng.shuffle(positions)
    for i in positions:
        new_text = text[:i] + other_of_class(rng, text[i]) + text[i + 1:]
        try:
            new = literal_value(new_text)
        except (SyntaxError, ValueError):
            continue
        if type(new) is not type(v) or len(new) != len(v) or sum(a != b for a, b in zip(new, v)) != 1:
            continue
        return new_text, new
    return None


def mutate_constant(rng, node, src, approx):
    """A new text for a Constant node, or None."""
    text = src.text(node)
    v = node.value
    if isinstance(v, bool):
        return ("False" if v else "True", not v) if text in ("True", "False") else None
    if isinstance(v, int):
        return mutate_int(rng, v, text, approx)
    if isinstance(v, float):
        return mutate_float(rng, v, text)
    if isinstance(v, (str, bytes)) and not approx:
        return mutate_string(rng, v, text)
    return None


def constant_of(node):
    """The Constant of a literal leaf (a Constant, or -/+ of a number)."""
    if isinstance(node, ast.Constant):
        return node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and \
            isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return node.operand
    return None


def is_display(node):
    """Whether node is a literal value: a constant or a container of them
    (elements that are not literal are allowed and left alone)."""
    if constant_of(node) is not None:
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not any(isinstance(e, ast.Starred) for e in node.elts)
    if isinstance(node, ast.Dict):
        return None not in node.keys
    return False


def leaves(node, unique):
    """The mutable literal leaves of a display, each with whether it must stay
    distinct from its siblings (set elements, dict keys)."""
    c = constant_of(node)
    if c is not None:
        return [(c, unique)] if not (c.value is None or c.value is Ellipsis) else []
    out = []
    if isinstance(node, (ast.List, ast.Tuple)):
        for e in node.elts:
            if is_display(e):
                out += leaves(e, None)
    elif isinstance(node, ast.Set):
        for e in node.elts:
            if constant_of(e) is not None:
                out += leaves(e, node.elts)
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if constant_of(k) is not None:
                out += leaves(k, node.keys)
            if is_display(v):
                out += leaves(v, None)
    return out


def sibling_values(siblings, leaf):
    values = []
    for s in siblings:
        c = constant_of(s)
        if c is None:
            return None
        if c is not leaf:
            values.append(literal_value(ast.unparse(s)) if s is not c else c.value)
    return values


def literal_edit(rng, display, src, what, approx=False):
    """An Edit changing one leaf of display, or None."""
    cands = leaves(display, None)
    rng.shuffle(cands)
    for leaf, siblings in cands:
        others = sibling_values(siblings, leaf) if siblings is not None else []
        if others is None or leaf.value in others:
            continue
        # A set element or dict key must stay distinct from its siblings:
        # a few draws find a value none of them has.
        for _ in range(8):
            got = mutate_constant(rng, leaf, src, approx)
            if got is None or got[1] not in others:
                break
        if got is None or got[1] in others:
            continue
        new_text, new = got
        a, b = src.span(leaf)
        old = src.text(leaf)
        return Edit(a, b, new_text, leaf.lineno, "%s: %s -> %s" % (what, old, new_text), (a, new))
    return None


def approx_arg(node, approx_names):
    """The display inside pytest.approx(display), or None."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and is_display(node.args[0]):
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "approx" and isinstance(f.value, ast.Name) and f.value.id == "pytest") or \
                (isinstance(f, ast.Name) and f.id in approx_names):
            return node.args[0]
    return None


def eq_operands(stmt):
    """For `assert a == b` (one operator), the two operands."""
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 and \
            isinstance(stmt.test.ops[0], ast.Eq):
        return stmt.test.left, stmt.test.comparators[0]
    return None


def self_call(stmt, names):
    """For a top-level `self.<name>(...)` statement, the call."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        if isinstance(f, ast.Attribute) and f.attr in names and isinstance(f.value, ast.Name) and f.value.id == "self":
            return stmt.value
    return None


def returns_in(stmt):
    for n in ast.walk(stmt):
        if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
            return True
    return False


def certain_statements(fn):
    """The top-level statements of fn's body certain to run when it passes:
    those before the first one that holds a return."""
    out = []
    for stmt in fn.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(stmt)
        if returns_in(stmt):
            break
    return out


def negation_edit(stmt, src):
    """`assert e` made to assert the opposite."""
    if isinstance(stmt, ast.Assert):
        e = stmt.test
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            flips = {ast.Eq: "!=", ast.NotEq: "==", ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in"}
            op = type(e.ops[0])
            if op in flips:
                # The operator's text lies between the two operands.
                a = src.offset(e.left.end_lineno, e.left.end_col_offset)
                b = src.offset(e.comparators[0].lineno, e.comparators[0].col_offset)
                gap = src.data[a:b].decode("utf-8")
                old = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: None, ast.In: "in", ast.NotIn: None}[op]
                if old is not None and gap.count(old) == 1 and "#" not in gap and "\\" not in gap:
                    i = gap.index(old)
                    new_gap = gap[:i] + flips[op] + gap[i + len(old):]
                    return Edit(a, b, new_gap, stmt.lineno, "negated: %s -> %s" % (old, flips[op]))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            a, _ = src.span(e)
            b = src.offset(e.operand.lineno, e.operand.col_offset)
            if src.data[a:b].decode("utf-8").strip() == "not" and not isinstance(e.operand, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda)):
                return Edit(a, b, "", stmt.lineno, "negated: not removed")
        a, b = src.span(e)
        text = src.text(e)
        if isinstance(e, (ast.BoolOp, ast.IfExp, ast.NamedExpr, ast.Lambda)) or "\n" in text:
            return Edit(a, b, "not (" + text + ")", stmt.lineno, "negated: not (...)")
        return Edit(a, a, "not ", stmt.lineno, "negated: not added")
    call = self_call(stmt, ("assertTrue", "assertFalse"))
    if call is not None:
        f = call.func
        new = "assertFalse" if f.attr == "assertTrue" else "assertTrue"
        b = src.offset(f.end_lineno, f.end_col_offset)
        return Edit(b - len(f.attr), b, new, stmt.lineno, "negated: %s -> %s" % (f.attr, new))
    return None


def raises_edit(rng, stmt, src, mod):
    """pytest.raises(X) / self.assertRaises(X) made to expect another exception."""
    calls = []
    if isinstance(stmt, ast.With) and len(stmt.items) == 1:
        calls.append(stmt.items[0].context_expr)
    elif isinstance(stmt, ast.Expr):
        calls.append(stmt.value)
    for call in calls:
        if not isinstance(call, ast.Call) or not call.args:
            continue
        f = call.func
        ok = (isinstance(f, ast.Attribute) and f.attr == "raises" and isinstance(f.value, ast.Name) and f.value.id == "pytest" and "pytest" in mod.imports) or \
             (isinstance(f, ast.Name) and f.id in mod.raises_names) or \
             (isinstance(f, ast.Attribute) and f.attr == "assertRaises" and isinstance(f.value, ast.Name) and f.value.id == "self")
        x = call.args[0]
        if not ok or not isinstance(x, ast.Name) or x.id in mod.bound:
            continue
        orig = getattr(builtins, x.id, None)
        if not (isinstance(orig, type) and issubclass(orig, Exception)):
            continue
        pool = [n for n in RAISES_POOL if n not in mod.bound and not issubclass(orig, getattr(builtins, n)) and not issubclass(getattr(builtins, n), orig)]
        if not pool:
            continue
        new = rng.choice(pool)
        a, b = src.span(x)
        return Edit(a, b, new, x.lineno, "expects %s instead of %s" % (new, x.id))
    return None


def literal_edits(rng, stmt, src, mod):
    """The literal twins of one statement (each a choice)."""
    out = []
    ops = eq_operands(stmt)
    if ops is not None:
        for side, other in (ops, ops[::-1]):
            if is_display(other) or approx_arg(other, mod.approx_names) is not None:
                continue
            inner = approx_arg(side, mod.approx_names)
            if inner is not None:
                out.append(lambda inner=inner: literal_edit(rng, inner, src, "approx literal", approx=True))
            elif is_display(side):
                out.append(lambda side=side: literal_edit(rng, side, src, "literal"))
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 and \
            isinstance(stmt.test.ops[0], (ast.Is, ast.IsNot)):
        c = stmt.test.comparators[0]
        if isinstance(c, ast.Constant) and isinstance(c.value, bool):
            out.append(lambda c=c: literal_edit(rng, c, src, "literal"))
    call = self_call(stmt, ("assertEqual", "assertEquals"))
    if call is not None and len(call.args) >= 2:
        a, b = call.args[0], call.args[1]
        for side, other in ((a, b), (b, a)):
            if is_display(side) and not is_display(other):
                out.append(lambda side=side: literal_edit(rng, side, src, "literal"))
    return out


def names_in(node):
    return [n for n in ast.walk(node) if isinstance(n, ast.Name)]


def parametrize_edits(rng, fn, src, mod, certain):
    """One choice per mutable parametrize decorator: the expected value of every
    case changed. A parameter is expected when every use of it in the body is
    an operand of a certain `==` assertion whose other side does not use it."""
    out = []
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize"):
            continue
        if any(k.arg == "indirect" for k in dec.keywords) or len(dec.args) < 2:
            continue
        names_node, values = dec.args[0], dec.args[1]
        if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
            names = [n.strip() for n in names_node.value.split(",") if n.strip()]
        elif isinstance(names_node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names_node.elts):
            names = [e.value for e in names_node.elts]
        else:
            continue
        if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
            continue
        uses = {}
        for n in names_in(fn):
            uses.setdefault(n.id, []).append(n)
        for i, name in enumerate(names):
            operand_uses = []
            for stmt in certain:
                ops = eq_operands(stmt)
                if ops is None:
                    continue
                for side, other in (ops, ops[::-1]):
                    if isinstance(side, ast.Name) and side.id == name and not any(m.id == name for m in names_in(other)):
                        operand_uses.append(side)
            if not operand_uses or len(operand_uses) != len(uses.get(name, [])):
                continue
            cases = []
            for case in values.elts:
                if isinstance(case, ast.Call) and isinstance(case.func, ast.Attribute) and case.func.attr == "param":
                    vals = case.args
                elif len(names) == 1:
                    vals = [case]
                elif isinstance(case, (ast.Tuple, ast.List)):
                    vals = case.elts
                else:
                    vals = None
                if vals is None or len(vals) != len(names) or not is_display(vals[i]):
                    cases = None
                    break
                cases.append(vals[i])
            if cases:
                out.append(lambda cases=cases, name=name: parametrize_case_edits(rng, cases, src, name))
    return out


def parametrize_case_edits(rng, cases, src, name):
    """One edit per case; in an expected dict, one per value: a result
    whose equality with a dict reads only some of its keys (a version
    number ignoring its build part) must still differ from the twin."""
    edits = []
    for v in cases:
        if isinstance(v, ast.Dict):
            per_value = [literal_edit(rng, val, src, "expected %s" % name) for val in v.values if is_display(val)]
            per_value = [e for e in per_value if e is not None]
            if per_value:
                edits += per_value
                continue
        e = literal_edit(rng, v, src, "expected %s" % name)
        if e is None:
            return None
        edits.append(e)
    return edits


class Module:
    """What a module binds, so no name it defines is mistaken for a built-in."""

    def __init__(self, tree):
        self.bound, self.imports, self.raises_names, self.approx_names = set(), set(), set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports.add(a.asname or a.name)
                    self.bound.add((a.asname or a.name).split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    name = a.asname or a.name
                    self.bound.add(name)
                    if node.module == "pytest" and a.name == "raises":
                        self.raises_names.add(name)
                    if node.module == "pytest" and a.name == "approx":
                        self.approx_names.add(name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bound.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)


def skipped_by_decorator(fn):
    """Why fn's decorators keep it from being twinned, or None."""
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        chain = []
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        if isinstance(target, ast.Name):
            chain.append(target.id)
        chain.reverse()
        if len(chain) >= 3 and chain[0] == "pytest" and chain[1] == "mark" and chain[2] != "xfail":
            continue
        return "decorated with %s" % ".".join(chain or ["an expression"])
    return None


def twin_of(rng, fn, src, mod):
    """(kind, edits) for fn, or (None, why)."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return None, "an async test"
    why = skipped_by_decorator(fn)
    if why:
        return None, why
    for n in ast.walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return None, "a generator"
    certain = certain_statements(fn)
    by_kind = {"literal": [], "raises": [], "negation": []}
    for stmt in certain:
        for make in literal_edits(rng, stmt, src, mod):
            by_kind["literal"].append(make)
        by_kind["literal"] += parametrize_edits(rng, fn, src, mod, certain) if stmt is certain[0] else []
        e = raises_edit(rng, stmt, src, mod)
        if e is not None:
            by_kind["raises"].append(lambda e=e: e)
        e = negation_edit(stmt, src)
        if e is not None:
            by_kind["negation"].append(lambda e=e: e)
    for kind in ("literal", "raises", "negation"):
        makers = by_kind[kind]
        rng.shuffle(makers)
        for make in makers:
            got = make()
            if got is None:
                continue
            edits = got if isinstance(got, list) else [got]
            return ("parametrize" if isinstance(got, list) else kind), edits
    return None, "no assertion certain to run that can be changed"


def apply_edits(data, edits):
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        data = data[:e.start] + e.new + data[e.end:]
    return data


def tests_of(tree):
    for node in tree.body:
        if is_test_function(node):
            yield None, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if is_test_function(item):
                    yield node.name, item


def twin_file(rng, rel, data, exclude, out):
    """The twin bytes of one hidden file, recording each test in out."""
    try:
        tree = ast.parse(data, rel)
    except (SyntaxError, ValueError) as e:
        out["errors"].append("%s: %s" % (rel, e))
        return data
    src = Source(data)
    mod = Module(tree)
    chosen = []
    for cls, fn in tests_of(tree):
        tid = "::".join(p for p in (rel, cls, fn.name) if p)
        if tid in exclude:
            out["untwinnable"].append({"id": tid, "why": "excluded"})
            continue
        kind, got = twin_of(rng, fn, src, mod)
        if kind is None:
            out["untwinnable"].append({"id": tid, "why": got})
            continue
        chosen.append((tid, kind, got))
    # Apply from the end of the file so earlier offsets hold; a twin whose
    # file would not parse any more is dropped.
    result = data
    accepted = []
    for tid, kind, edits in sorted(chosen, key=lambda c: min(e.start for e in c[2]), reverse=True):
        trial = apply_edits(result, edits)
        if not valid_twin(trial, edits, data, result):
            out["untwinnable"].append({"id": tid, "why": "the changed file does not parse as intended"})
            continue
        result = trial
        accepted.append({"id": tid, "file": rel, "line": edits[0].line, "kind": kind,
                         "change": "; ".join(e.change for e in sorted(edits, key=lambda e: e.start))})
    out["twins"] += sorted(accepted, key=lambda t: t["id"])
    return result


def valid_twin(trial, edits, original, before):
    try:
        tree = ast.parse(trial)
    except (SyntaxError, ValueError):
        return False
    # Every changed literal must read back as the value intended.
    shift = 0
    found = {}
    src = Source(trial)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            found[src.span(node)[0]] = node.value
    for e in sorted(edits, key=lambda e: e.start):
        if e.check is not None:
            at, want = e.check
            got = found.get(at + shift, object())
            if type(got) is not type(want) or got != want:
                return False
        shift += len(e.new) - (e.end - e.start)
    return True


def main():
    cfg = json.load(sys.stdin)
    root = cfg["root"]
    rng = random.Random(cfg.get("seed") or os.urandom(32))
    exclude = set(cfg.get("exclude") or [])
    out = {"twins": [], "untwinnable": [], "errors": []}
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in NORECURSE))
        for name in sorted(filenames):
            if is_test_file(name):
                files.append(os.path.join(dirpath, name))
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        with open(path, "rb") as f:
            data = f.read()
        twin = twin_file(rng, rel, data, exclude, out)
        # Both kinds of run rewrite every file the same way: only the bytes
        # differ, and only in a twin run.
        tmp = path + ".tmp-" + os.urandom(6).hex()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(twin if cfg.get("apply") else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    json.dump(out, sys.stdout)


main()
