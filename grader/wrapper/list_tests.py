# Lists the hidden tests from their syntax trees, without importing them, so
# the wrapper knows which tests the runner must report before any code under
# test exists in the container. Mirrors pytest's default collection rules:
# files test_*.py and *_test.py, functions test*, classes Test* and their
# test* methods, and pytest's default norecursedirs.
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


def main(root):
    found = []
    modules = []
    errors = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in NORECURSE))
        for name in sorted(filenames):
            if not is_test_file(name):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            try:
                with open(path, "rb") as f:
                    data = f.read()
                tree = ast.parse(data, rel)
            except (SyntaxError, ValueError) as e:
                errors.append("%s: %s" % (rel, e))
                continue
            try:
                text = importlib.util.decode_source(data)
            except (SyntaxError, ValueError, LookupError):
                text = None
            for node in tree.body:
                if is_test_function(node):
                    found.append({"file": rel, "name": node.name})
                elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                    for item in node.body:
                        if is_test_function(item):
                            found.append({"file": rel, "class": node.name, "name": item.name})
            names, imported = bound_names(tree)
            problem = host_problem(tree, names)
            modules.append({
                "file": rel,
                "host": problem is None,
                "calls": calls(tree, text, names, imported) if problem is None else [],
            })
    json.dump({"tests": found, "modules": modules, "errors": errors}, sys.stdout)


main(sys.argv[1])
