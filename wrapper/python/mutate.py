# Makes mutants of the lines a reference patch adds, from the syntax tree of
# each file, without importing anything: arithmetic, comparison and boolean
# operators swapped, integer and float constants moved by one, booleans
# flipped, returned strings changed, whole statements replaced by `pass`.
#
# Input (argv[1]): JSON {"root": dir, "added": {path: [line, ...]}, "max": n}.
# Output (stdout): JSON {"candidates": n, "mutants": [{file, line, change,
# before, after, source}, ...]}: at most max mutants, spread evenly over all
# candidates in file and line order. Every mutant compiles; source is the
# whole mutated file.
import ast
import json
import os
import sys

BINOPS = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"), ast.Mod: ("%", "//"), ast.Pow: ("**", "*"),
}
CMPOPS = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is"),
    ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
}
BOOLOPS = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
SKIP_DELETE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
               ast.Pass, ast.Global, ast.Nonlocal)


class File:
    def __init__(self, rel, data):
        self.rel = rel
        self.data = data
        self.lines = data.split(b"\n")
        # Byte offset of the start of each line (1-based lines).
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)

    def offset(self, line, col):
        return self.starts[line - 1] + col

    def line_text(self, line):
        return self.lines[line - 1].decode("utf-8", "replace")


def find_op(f, start, end, op):
    """Byte offsets of op in f.data[start:end], outside comments, or None."""
    gap = f.data[start:end]
    i = 0
    while i < len(gap):
        c = gap[i:i + 1]
        if c == b"#":
            while i < len(gap) and gap[i:i + 1] != b"\n":
                i += 1
            continue
        if gap.startswith(op.encode(), i):
            word = op[0].isalpha()
            before = gap[i - 1:i] if i > 0 else b" "
            after = gap[i + len(op):i + len(op) + 1] or b" "
            if not word or (not before.isalnum() and not after.isalnum() and before != b"_" and after != b"_"):
                # "is" must not match the start of "is not", "in" of "in" in "not in".
                if op in ("is", "in") and gap[i + len(op):].lstrip().startswith(b"not"):
                    i += 1
                    continue
                if op == "in" and gap[:i].rstrip().endswith(b"not"):
                    i += 1
                    continue
                if op in ("*", "/") and (gap[i + 1:i + 2] == op.encode() or gap[i - 1:i] == op.encode()):
                    i += 1
                    continue
                return start + i, start + i + len(op)
        i += 1
    return None


def end_of(f, node):
    return f.offset(node.end_lineno, node.end_col_offset)


def start_of(f, node):
    return f.offset(node.lineno, node.col_offset)


def candidates(f, tree, added):
    out = []

    def add(line, a, b, text, change):
        if line in added:
            out.append((line, a, b, text, change))

    in_fstring = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for sub in ast.walk(node):
                in_fstring.add(id(sub))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0]))

    for node in ast.walk(tree):
        if id(node) in in_fstring or not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
            old, new = BINOPS[type(node.op)]
            span = find_op(f, end_of(f, node.left), start_of(f, node.right), old)
            if span:
                add(node.left.end_lineno, span[0], span[1], new, "%s -> %s" % (old, new))
        elif isinstance(node, ast.AugAssign) and type(node.op) in BINOPS:
            old, new = BINOPS[type(node.op)]
            span = find_op(f, end_of(f, node.target), start_of(f, node.value), old + "=")
            if span:
                add(node.lineno, span[0], span[1], new + "=", "%s= -> %s=" % (old, new))
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                if type(op) in CMPOPS:
                    old, new = CMPOPS[type(op)]
                    span = find_op(f, end_of(f, left), start_of(f, right), old)
                    if span:
                        add(left.end_lineno, span[0], span[1], new, "%s -> %s" % (old, new))
                left = right
        elif isinstance(node, ast.BoolOp):
            old, new = BOOLOPS[type(node.op)]
            for left, right in zip(node.values, node.values[1:]):
                span = find_op(f, end_of(f, left), start_of(f, right), old)
                if span:
                    add(left.end_lineno, span[0], span[1], new, "%s -> %s" % (old, new))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            text = f.data[start_of(f, node.operand):end_of(f, node.operand)].decode("utf-8", "replace")
            sym = "not" if isinstance(node.op, ast.Not) else "-"
            add(node.lineno, start_of(f, node), end_of(f, node), text, "%s removed" % sym)
        elif isinstance(node, ast.Constant) and node.lineno == node.end_lineno:
            v = node.value
            a, b = start_of(f, node), end_of(f, node)
            if isinstance(v, bool):
                add(node.lineno, a, b, repr(not v), "%r -> %r" % (v, not v))
            elif isinstance(v, (int, float)):
                for d in (1, -1):
                    add(node.lineno, a, b, repr(v + d), "%r -> %r" % (v, v + d))
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) \
                and id(node.value) not in in_fstring:
            v = node.value.value
            new = "" if v else "mutant"
            add(node.lineno, start_of(f, node.value), end_of(f, node.value), repr(new), "return %r -> return %r" % (v, new))
        if isinstance(node, ast.stmt) and not isinstance(node, SKIP_DELETE) and id(node) not in docstrings:
            # A statement alone on its lines, every one of them added.
            lines = range(node.lineno, node.end_lineno + 1)
            first = f.lines[node.lineno - 1]
            indent = len(first) - len(first.lstrip())
            if node.col_offset != indent or any(l not in added for l in lines):
                continue
            tail = f.lines[node.end_lineno - 1][node.end_col_offset:].strip()
            if tail and not tail.startswith(b"#"):
                continue
            if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                continue  # compound: its parts are mutated one by one
            a = f.offset(node.lineno, node.col_offset)
            b = end_of(f, node)
            add(node.lineno, a, b, "pass", "statement deleted")
    return out


def main(arg):
    job = json.loads(arg)
    root, maximum = job["root"], job["max"]
    all_found = []
    for rel in sorted(job["added"]):
        added = set(job["added"][rel])
        path = os.path.join(root, rel)
        if not rel.endswith(".py") or os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        try:
            data.decode("utf-8")
            tree = ast.parse(data, rel)
        except (SyntaxError, ValueError):
            continue  # not UTF-8 or not Python: nothing to mutate
        f = File(rel, data)
        for line, a, b, text, change in sorted(candidates(f, tree, added), key=lambda c: (c[0], c[1], c[4])):
            all_found.append((f, line, a, b, text, change))
    valid = []
    for f, line, a, b, text, change in all_found:
        source = f.data[:a] + text.encode() + f.data[b:]
        try:
            compile(source, f.rel, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        after = source.split(b"\n")[line - 1].decode("utf-8", "replace")
        valid.append({"file": f.rel, "line": line, "change": change, "before": f.line_text(line),
                      "after": after, "source": source.decode("utf-8")})
    n = len(valid)
    chosen = valid if n <= maximum else [valid[i * n // maximum] for i in range(maximum)]
    json.dump({"candidates": n, "mutants": chosen}, sys.stdout)


main(sys.argv[1])
