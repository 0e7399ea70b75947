"""testfirst's pytest plugin: puts the tree under test on sys.path and loads
the hidden suite's own conftest files.

The grader starts pytest with `python3 -I`, so nothing of the tree under test
is importable while pytest loads its plugins: a sitecustomize.py, a .pth file,
a fake dist-info or a module named like a plugin in the tree cannot hook the
run. Once every plugin is loaded, this plugin adds the tree to sys.path: after
the standard library, so the tree cannot shadow it, and before site-packages,
so the tree's own packages win over copies installed in the grader image.

A src layout's directory (TESTFIRST_SOURCE_DIR, which the grader decides
from the base tree) goes just before the tree itself.

pytest runs with --noconftest, so it loads no conftest.py itself. The hidden
set's own conftest files (root-owned, under /hidden) are loaded here, at
configure time, after the runner's evidence plugin is armed and the tree is
on sys.path (a hidden conftest may import the code under test), parents
first, as pytest would: their fixtures are visible below their directory,
their hooks are the suite's. Any other conftest is refused.
"""

import fnmatch
import os
import pathlib
import sys

import _pytest.config
import pytest

REPO = "/repo"
HIDDEN = "/hidden/"
SOURCE = os.environ.get("TESTFIRST_SOURCE_DIR", "")

# pytest's default norecursedirs: conftest files there are never collected.
_NORECURSE = ["*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}", "__pycache__"]

_import_conftest = _pytest.config.PytestPluginManager._importconftest


def _hidden_conftest_only(self, conftestpath, *args, **kwargs):
    if not str(conftestpath).startswith(HIDDEN):
        raise _pytest.config.UsageError(
            "testfirst: refusing %s: only the hidden tests' own conftest files are loaded" % conftestpath)
    return _import_conftest(self, conftestpath, *args, **kwargs)


_pytest.config.PytestPluginManager._importconftest = _hidden_conftest_only


def _walk_hidden(root=HIDDEN.rstrip("/")):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not any(fnmatch.fnmatch(d, p) for p in _NORECURSE))
        yield dirpath, filenames


def _hidden_helper_modules():
    """The names the hidden set's non-test modules import under (pytest's
    prepend import mode: from the first directory up that is not a
    package)."""
    root = HIDDEN.rstrip("/")
    names = set()
    for dirpath, filenames in _walk_hidden():
        for name in filenames:
            if not name.endswith(".py") or name == "conftest.py" or fnmatch.fnmatch(name, "test_*.py") or fnmatch.fnmatch(name, "*_test.py"):
                continue
            parts = [] if name == "__init__.py" else [name[:-3]]
            d = dirpath
            while d != root and os.path.isfile(os.path.join(d, "__init__.py")):
                parts.insert(0, os.path.basename(d))
                d = os.path.dirname(d)
            if parts and all(p.isidentifier() for p in parts):
                names.add(".".join(parts))
    return sorted(names)


def _hidden_conftests():
    """The hidden conftest files, parents before children."""
    found = []
    for dirpath, filenames in _walk_hidden():
        if "conftest.py" in filenames:
            found.append(pathlib.Path(dirpath, "conftest.py"))
    return sorted(found, key=lambda p: (len(p.parts), str(p)))


# The hidden set's helper modules are rewritten like its tests, so test
# methods they hold (a mixin's, a base class's) are code compiled from the
# hidden files under pytest's rewriting, as the runner's evidence plugin
# checks every hidden test's code to be.
_HELPERS = _hidden_helper_modules()
if _HELPERS:
    pytest.register_assert_rewrite(*_HELPERS)


def _insert_position(path):
    for i, entry in enumerate(path):
        if "site-packages" in entry or "dist-packages" in entry:
            return i
    return len(path)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    # Under split grading (testfirst_split) the tree is never on this
    # interpreter's sys.path: its modules are imported in its own process.
    split = bool(os.environ.get("TESTFIRST_SPLIT_FD"))
    for entry in () if split else (REPO, SOURCE):
        if entry.startswith(REPO + "/") or entry == REPO:
            if entry not in sys.path:
                sys.path.insert(_insert_position(sys.path), entry)
    pm = config.pluginmanager
    for path in _hidden_conftests():
        try:
            pm._importconftest(path, config.getoption("importmode"), config.rootpath)
        except _pytest.config.ConftestImportFailure as e:
            exc = e.excinfo[1]
            raise _pytest.config.UsageError(
                "hidden conftest %s failed to import: %s: %s" % (path, type(exc).__name__, exc)) from None
