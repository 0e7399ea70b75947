"""testfirst's pytest plugin: puts the tree under test on sys.path.

The grader starts pytest with `python3 -I`, so nothing of the tree under test
is importable while pytest loads its plugins: a sitecustomize.py, a .pth file,
a fake dist-info or a module named like a plugin in the tree cannot hook the
run. Once every plugin is loaded, this plugin adds the tree to sys.path: after
the standard library, so the tree cannot shadow it, and before site-packages,
so the tree's own packages win over copies installed in the grader image.
"""

import sys

REPO = "/repo"


def _insert_position(path):
    for i, entry in enumerate(path):
        if "site-packages" in entry or "dist-packages" in entry:
            return i
    return len(path)


def pytest_configure(config):
    if REPO not in sys.path:
        sys.path.insert(_insert_position(sys.path), REPO)
