"""A tiny template engine: {{expr}} is replaced by the expression's value."""

import re


def compile_template(path):
    with open(path) as f:
        source = f.read()
    parts = re.split(r"\{\{(.*?)\}\}", source)
    lines = ["def render(**env):", "    out = []"]
    for i, part in enumerate(parts):
        if i % 2:
            lines.append("    out.append(str(eval(%r, {}, env)))" % part.strip())
        elif part:
            lines.append("    out.append(%r)" % part)
    lines.append("    return ''.join(out)")
    namespace = {}
    exec(compile("\n".join(lines) + "\n", path, "exec"), namespace)
    return namespace["render"]


def render(path, **env):
    return compile_template(path)(**env)
