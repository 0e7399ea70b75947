"""testfirst's runtime evidence plugin: a report the tree cannot complete.

The grader loads this plugin with `-p` while nothing of the tree under test
is importable (see testfirst_syspath). At import it:

- takes its descriptors: the report pipe (fd 3), the evidence pipe (fd 4)
  and the key pipe (fd 5, a one-time key the wrapper wrote), moves the two
  pipes to private close-on-exec numbers and puts the wrapper's tripwire
  pipe (fd 6) on 3, 4 and 5, so /proc/self/fd/3 leads to a pipe whose every
  byte the wrapper counts, and an exec'd program inherits neither real pipe;
- installs a PEP 578 audit hook (hooks cannot be removed) that reports, at
  once and signed, what the code under test does that a bent run needs:
  compiling under a hidden file's name, opening /hidden or /proc/*/fd,
  frame and gc walks, trace functions, __code__ writes, marshal, ctypes,
  exec and fork;
- wraps pytest's rewriting of the hidden test modules: the source is the
  copy read at configure (root-owned, read before the tree is importable),
  every `==`, `!=` and `in` of an assertion is checked for equality that
  holds only one way, and the code objects it makes are the only ones a
  hidden test may run.

At configure it records the identity of the pytest, pluggy and unittest
objects a bend would replace; they are checked again before each test, with
each report and at the end. The plugin writes the JUnit report itself from
its own hooks and closes the run with a signed end record: counts, the
digest of the report, pytest's exit status. Everything the plugin needs is
held in default arguments (reading a function's __defaults__ is an audited
event), never in module globals that the tree could rebind.
"""

import _hashlib
import _thread
import ast
import fcntl
import hashlib
import itertools
import operator
import os
import sys
import types

import pytest
import _pytest.assertion.rewrite
import _pytest.fixtures
import _pytest.main
import _pytest.outcomes
import _pytest.python
import _pytest.python_api
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.terminal
import _pytest.unittest
import pluggy
import pluggy._callers
import pluggy._hooks
import pluggy._manager
import pluggy._result
import unittest
import unittest.case
import unittest.mock

# The wrapper sets neither variable; they exist so the plugin can be tested
# on a host, with other directories.
REPO = os.environ.get("TESTFIRST_REPO_DIR", "/repo").rstrip("/") + "/"
HIDDEN = os.environ.get("TESTFIRST_HIDDEN_DIR", "/hidden").rstrip("/") + "/"
REPORT_FD, EVIDENCE_FD, KEY_FD, TRIPWIRE_FD = 3, 4, 5, 6

# Record size bound: one write of at most PIPE_BUF bytes is atomic, so
# records of concurrent threads or forked children never interleave.
_MAX_RECORD = 4000
# Sightings of one reason sent at once; later ones are counted in the end
# record.
_MAX_SENT_PER_REASON = 20
# Records a forked child sends in all.
_MAX_SENT_PER_CHILD = 5


class _Channel:
    """The plugin's private state: descriptors, key, counters."""

    __slots__ = (
        "key", "evidence", "report", "pid", "seq", "lock", "broken", "sent",
        "more", "report_hash", "report_bytes", "report_open", "cases",
        "tallies", "phases", "items", "session", "config", "tree_names",
        "hidden_sources", "expected_codes", "expected_ids", "plain_codes",
        "snapshot", "hooks", "watched", "ended", "started", "mismatches",
        "pycache_prefix", "fast", "proxy_ok", "origin", "child_sent", "tripwire",
        "hidden_names", "hidden_defs", "hidden_data",
    )


def _take_fd(fd, dupfd=fcntl.fcntl, flag=fcntl.F_DUPFD_CLOEXEC, close=os.close):
    """Move fd to a private close-on-exec number, close fd."""
    try:
        new = dupfd(fd, flag, 100 + int.from_bytes(os.urandom(2), "big") % 800)
    except OSError:
        return -1
    close(fd)
    return new


def _new_channel():
    ch = _Channel()
    ch.key = b""
    try:
        chunks = []
        while True:
            b = os.read(KEY_FD, 64)
            if not b:
                break
            chunks.append(b)
        ch.key = b"".join(chunks)
        os.close(KEY_FD)
    except OSError:
        pass
    ch.report = _take_fd(REPORT_FD)
    ch.evidence = _take_fd(EVIDENCE_FD)
    # The well-known numbers now lead to the wrapper's tripwire: whatever
    # the tree writes to them there is counted.
    ch.tripwire = None
    try:
        for fd in (REPORT_FD, EVIDENCE_FD, KEY_FD):
            os.dup2(TRIPWIRE_FD, fd)
        st = os.fstat(TRIPWIRE_FD)
        ch.tripwire = (st.st_dev, st.st_ino)
        os.close(TRIPWIRE_FD)
    except OSError:
        pass
    ch.pid = os.getpid()
    ch.origin = ch.pid
    ch.child_sent = 0
    ch.seq = 0
    ch.lock = _thread.allocate_lock()
    ch.broken = ch.evidence < 0 or not ch.key
    ch.sent = {}
    ch.more = {}
    ch.report_hash = hashlib.sha256()
    ch.report_bytes = 0
    ch.report_open = False
    ch.cases = 0
    ch.tallies = {}
    ch.phases = {}
    ch.items = {}
    ch.session = None
    ch.config = None
    ch.tree_names = set()
    ch.hidden_sources = {}
    # The hidden set's files that are not Python (templates, data): a
    # template engine of the tree compiles them under their own names.
    ch.hidden_data = frozenset()
    ch.expected_codes = []
    ch.expected_ids = set()
    ch.plain_codes = {}
    ch.snapshot = []
    ch.fast = None
    ch.proxy_ok = ((), ())
    ch.hooks = None
    ch.watched = set()
    ch.ended = False
    ch.started = False
    ch.mismatches = set()
    ch.pycache_prefix = sys.pycache_prefix
    ch.hidden_names = {}
    ch.hidden_defs = {}
    return ch


def _json(v, _str=str, _int=int, _bool=bool, _dict=dict, _ord=ord, _sorted=sorted, _self=[]):
    """v as JSON, ASCII only: str, int, bool, None and dicts of them. The
    plugin's own encoder, so rebinding anything of the json module changes
    no record."""
    t = type(v)
    if t is _str:
        out = ['"']
        for c in v:
            o = _ord(c)
            if c == '"' or c == "\\":
                out.append("\\" + c)
            elif 0x20 <= o < 0x7f:
                out.append(c)
            elif o <= 0xFFFF:
                out.append("\\u%04x" % o)
            else:
                o -= 0x10000
                out.append("\\u%04x\\u%04x" % (0xD800 + (o >> 10), 0xDC00 + (o & 0x3FF)))
        out.append('"')
        return "".join(out)
    if t is _bool:
        return "true" if v else "false"
    if t is _int:
        return _int.__repr__(v)
    if v is None:
        return "null"
    if t is _dict:
        enc = _self[0]
        return "{" + ",".join(enc(_str(k)) + ":" + enc(x) for k, x in _sorted(v.items())) + "}"
    return _self[0](_str(v))


# _json calls itself through its own default, never through the module.
_json.__defaults__[-1].append(_json)


def _emit(ch, kind, fields, dumps=_json, sign=_hashlib.hmac_digest, write=os.write, getpid=os.getpid):
    """Write one signed record on the evidence pipe."""
    if ch.broken and kind != "end":
        return
    with ch.lock:
        pid = getpid()
        if pid != ch.pid:
            # A forked child numbers its records from 0 under its own pid.
            ch.pid, ch.seq = pid, 0
        rec = {"v": 1, "pid": pid, "seq": ch.seq, "kind": kind}
        rec.update(fields)
        payload = dumps(rec)
        if len(payload) > _MAX_RECORD:
            rec["detail"] = str(rec.get("detail", ""))[:200]
            payload = dumps(rec)
        line = (payload + " " + sign(ch.key, payload.encode(), "sha256").hex() + "\n").encode()
        ch.seq += 1
        try:
            write(ch.evidence, line)
        except OSError:
            ch.broken = True


def _event(ch, reason, strength, detail, emit=_emit, getpid=os.getpid):
    """Report one sighting: the first few of a reason at once, then counted.
    A forked child sends a few records in all, so a fork bomb cannot
    multiply them without end."""
    key = reason
    n = ch.sent.get(key, 0)
    if getpid() != ch.origin:
        if ch.child_sent >= _MAX_SENT_PER_CHILD:
            return
        ch.child_sent += 1
    if n >= _MAX_SENT_PER_REASON:
        ch.more[key] = ch.more.get(key, 0) + 1
        return
    ch.sent[key] = n + 1
    emit(ch, "event", {"reason": reason, "strength": strength, "detail": detail[:300]})


def _text(v, _str=str, _bytes=bytes):
    """A path argument as text, without calling code of the tree."""
    t = type(v)
    if t is _str:
        return v
    if t is _bytes:
        return v.decode("utf-8", "replace")
    return ""


def _tree_frame(f, names):
    """The file of the innermost frame of the tree under test from f, or ""."""
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(REPO) or fn in names:
            return fn
        f = f.f_back
    return ""


def _is_tree_file(fn, names):
    return fn.startswith(REPO) or fn in names


# Files whose names code of the tree must never compile under.
_RUNNER_FILES = (HIDDEN, os.path.dirname(pytest.__file__), os.path.dirname(_pytest.__file__ if hasattr(_pytest, "__file__") else pytest.__file__),
                 os.path.dirname(pluggy.__file__), __file__)

_WATCHED_EVENTS = frozenset((
    "compile", "exec", "code.__new__", "open", "os.listdir", "os.scandir",
    "sys._getframe", "sys._current_frames", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "object.__setattr__",
    "object.__getattr__", "marshal.loads", "marshal.load", "os.exec", "os.fork",
    "os.forkpty", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.system",
    "sys.addaudithook", "import",
))


def _make_hook(ch):
    """The audit hook, with everything it needs bound as defaults."""

    def audit(ev, args, ch=ch, watched=_WATCHED_EVENTS, ident=_thread.get_ident, busy=set(),
              getframe=sys._getframe, tree_frame=_tree_frame, event=_event, text=_text,
              runner_files=_RUNNER_FILES, function=types.FunctionType, code_type=types.CodeType,
              is_tree_file=_is_tree_file):
        if ev not in watched:
            if ev[:7] != "ctypes.":
                return
        elif ev == "object.__getattr__":
            # The common case: frame and code reads by anyone. Only reads of
            # the plugin's own defaults and of hidden tests' code matter.
            name = args[1]
            if name != "__defaults__" and name != "__kwdefaults__" and name != "__code__":
                return
            if id(args[0]) not in ch.watched:
                return
        tid = ident()
        if tid in busy:
            return
        busy.add(tid)
        try:
            names = ch.tree_names
            if ev == "open" or ev == "os.listdir" or ev == "os.scandir":
                path = text(args[0]) if args else ""
                if path.startswith(HIDDEN) or path == HIDDEN[:-1]:
                    reason = "hidden_read"
                elif path.startswith("/proc/") and ("/fd" in path or "/mem" in path or "/root" in path or "/environ" in path):
                    reason = "proc_access"
                else:
                    return
                fn = tree_frame(getframe(1), names)
                if fn:
                    event(ch, reason, "weak", ev + " " + path + " from " + fn)
            elif ev == "compile":
                fname = text(args[1]) if len(args) > 1 else ""
                caller = getframe(1)
                direct = caller is not None and is_tree_file(caller.f_code.co_filename, names)
                if fname.startswith(HIDDEN):
                    fn = tree_frame(caller, names)
                    if fn and fname in ch.hidden_data:
                        # A template of the tests, compiled by the tree's
                        # template engine under its path (bottle's
                        # SimpleTemplate): honest, and no hidden test is
                        # named so. Its code counts as the tree's.
                        names.add(fname)
                    elif fn:
                        event(ch, "compile_hidden_name", "strong", fname + " from " + fn)
                    return
                if direct:
                    if fname.startswith(runner_files):
                        event(ch, "compile_hidden_name", "strong", fname + " from " + caller.f_code.co_filename)
                    elif not fname.startswith(REPO):
                        names.add(fname)
            elif ev == "exec":
                co = args[0] if args else None
                if (type(co) is code_type and co.co_filename.startswith(HIDDEN) and id(co) not in ch.expected_ids
                        and co.co_filename not in names):
                    fn = tree_frame(getframe(1), names)
                    if fn:
                        event(ch, "compile_hidden_name", "strong", "exec of " + co.co_filename + " from " + fn)
            elif ev == "code.__new__":
                fname = text(args[1]) if len(args) > 1 else ""
                fn = tree_frame(getframe(1), names)
                if fn:
                    if fname.startswith(runner_files):
                        event(ch, "compile_hidden_name", "strong", "code object named " + fname + " from " + fn)
                    elif not fname.startswith(REPO):
                        names.add(fname)
            elif ev == "object.__setattr__":
                obj, name = args[0], args[1]
                if name == "__code__":
                    fn = tree_frame(getframe(1), names)
                    if fn:
                        target = obj.__qualname__ if type(obj) is function else "?"
                        own = id(obj) in ch.watched or (type(obj) is function and obj.__code__.co_filename.startswith(runner_files))
                        event(ch, "code_replaced", "strong" if own else "weak", target + " from " + fn)
                elif (name == "__defaults__" or name == "__kwdefaults__") and id(obj) in ch.watched:
                    fn = tree_frame(getframe(1), names)
                    if fn:
                        event(ch, "plugin_inspected", "strong", "write of " + name + " from " + fn)
            elif ev == "object.__getattr__":
                fn = tree_frame(getframe(1), names)
                if fn:
                    if args[1] == "__code__":
                        event(ch, "hidden_code_read", "weak", getattr(args[0], "__qualname__", "?") + " from " + fn)
                    else:
                        event(ch, "plugin_inspected", "strong", "read of " + args[1] + " from " + fn)
            elif ev == "sys._getframe" or ev == "marshal.loads" or ev == "marshal.load":
                # Only when the tree calls it itself: the standard library
                # (namedtuple, logging, importlib) does so on its behalf.
                caller = getframe(1)
                if caller is None:
                    return
                fn = caller.f_code.co_filename
                if ev == "sys._getframe" and fn.endswith(("/inspect.py", "/traceback.py")):
                    while caller is not None and caller.f_code.co_filename.endswith(("/inspect.py", "/traceback.py")):
                        caller = caller.f_back
                    fn = caller.f_code.co_filename if caller is not None else ""
                if is_tree_file(fn, names):
                    event(ch, "frame_access" if ev == "sys._getframe" else "marshal", "weak", ev + " from " + fn)
            elif ev == "import":
                name = text(args[0]) if args else ""
                if name.startswith(("_pytest", "pluggy")):
                    fn = tree_frame(getframe(1), names)
                    if fn:
                        event(ch, "runner_import", "weak", name + " from " + fn)
            else:
                fn = tree_frame(getframe(1), names)
                if not fn:
                    return
                if ev.startswith("ctypes."):
                    reason = "ctypes"
                elif ev == "sys._current_frames":
                    reason = "frame_access"
                elif ev.startswith("gc."):
                    reason = "gc_walk"
                elif ev == "sys.settrace" or ev == "sys.setprofile":
                    reason = "trace_function"
                elif ev == "os.exec":
                    reason = "exec"
                elif ev == "os.fork" or ev == "os.forkpty":
                    reason = "fork"
                elif ev == "sys.addaudithook":
                    reason = "audit_hook_added"
                else:
                    reason = "subprocess"
                detail = ev
                if ev in ("os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.system") and args:
                    detail += " " + text(args[0])
                event(ch, reason, "weak", detail + " from " + fn)
        except Exception:
            pass
        finally:
            busy.discard(tid)

    return audit


def _after_fork(ch):
    """In a forked child: a fresh lock (another thread may have held it at
    the fork); _emit numbers the child's records from 0 under its pid."""
    ch.lock = _thread.allocate_lock()
    ch.child_sent = 0


def _install():
    ch = _new_channel()
    hook = _make_hook(ch)
    sys.addaudithook(hook)
    os.register_at_fork(after_in_child=lambda ch=ch, after=_after_fork: after(ch))
    _emit(ch, "start", {"python": sys.version.split()[0], "pytest": pytest.__version__})
    return ch


# The channel, bound into every function below as a default argument.
_CH_HOLDER = [_install()]


# ---------------------------------------------------------------------------
# Identity snapshots

# (module, names): each name is an attribute of the module, or Class.member
# looked up where the class (or the first base in its MRO) defines it.
_IDENTITY_TARGETS = (
    ("builtins", ("compile", "exec", "eval", "__import__", "open", "type", "isinstance", "issubclass", "len", "all", "any", "sorted", "list", "tuple",
                  "dict", "set", "frozenset", "str", "int", "float", "bool", "bytes", "repr", "abs",
                  "round", "sum", "min", "max", "zip", "map", "filter", "range", "enumerate",
                  "reversed", "iter", "next", "hash", "id", "getattr", "hasattr", "callable",
                  "AssertionError", "Exception", "BaseException")),
    ("pytest", ("raises", "approx", "fail", "skip", "xfail", "exit", "importorskip", "warns",
                "deprecated_call", "Function", "Item", "Class", "Module", "Session", "TestReport",
                "CollectReport", "CallInfo", "hookimpl", "fixture", "mark", "param")),
    ("_pytest.python", ("Function", "Function.runtest", "Function.setup", "Function._getobj",
                        "Function.obj", "Function.function", "Function.repr_failure",
                        "pytest_pyfunc_call", "Module", "Module._importtestmodule", "Module.collect",
                        "Module._getobj", "Class.collect", "PyCollector.collect",
                        "PyCollector._genfunctions", "pytest_pycollect_makeitem",
                        "pytest_collect_file", "pytest_pycollect_makemodule")),
    ("_pytest.runner", ("runtestprotocol", "call_and_report", "call_runtest_hook",
                        "check_interactive_exception", "CallInfo", "CallInfo.from_call",
                        "CallInfo.result", "CallInfo.__init__", "pytest_runtest_protocol",
                        "pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown",
                        "pytest_runtest_makereport", "pytest_make_collect_report",
                        "pytest_report_teststatus", "SetupState", "SetupState.setup",
                        "SetupState.teardown_exact", "collect_one_node")),
    ("_pytest.reports", ("TestReport", "TestReport.__init__", "TestReport.from_item_and_call",
                         "BaseReport", "BaseReport.passed", "BaseReport.failed", "BaseReport.skipped",
                         "BaseReport.__getattr__", "CollectReport", "CollectReport.__init__")),
    ("_pytest.main", ("Session", "Session.perform_collect", "Session.genitems", "Session.collect",
                      "Session.pytest_runtest_logreport", "Session.pytest_collectreport",
                      "pytest_runtestloop", "wrap_session", "_main", "pytest_collection")),
    ("_pytest.outcomes", ("fail", "skip", "xfail", "exit", "importorskip", "OutcomeException",
                          "Failed", "Skipped", "Exit", "XFailed")),
    ("_pytest.python_api", ("raises", "approx", "RaisesContext", "RaisesContext.__enter__",
                            "RaisesContext.__exit__", "ApproxBase", "ApproxBase.__eq__",
                            "ApproxBase.__ne__", "ApproxScalar.__eq__", "ApproxMapping.__eq__",
                            "ApproxSequenceLike.__eq__", "ApproxDecimal")),
    ("_pytest.skipping", ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_makereport",
                          "pytest_report_teststatus", "evaluate_xfail_marks", "evaluate_skip_marks")),
    ("_pytest.terminal", ("TerminalReporter", "TerminalReporter.pytest_runtest_logreport",
                          "TerminalReporter.pytest_sessionfinish", "TerminalReporter.summary_stats",
                          "TerminalReporter.build_summary_stats_line", "TerminalReporter._set_main_color",
                          "build_summary_stats_line", "pytest_report_teststatus")),
    ("_pytest.fixtures", ("FixtureDef.execute", "call_fixture_func", "pytest_fixture_setup",
                          "FixtureRequest.getfixturevalue")),
    ("_pytest.unittest", ("TestCaseFunction", "TestCaseFunction.runtest", "TestCaseFunction.setup",
                          "pytest_runtest_makereport", "pytest_pycollect_makeitem")),
    ("_pytest.junitxml", ("LogXML", "LogXML.pytest_runtest_logreport", "LogXML.pytest_sessionfinish",
                          "_NodeReporter", "_NodeReporter.append_failure", "_NodeReporter.append_pass",
                          "_NodeReporter.append_error", "_NodeReporter.append_skipped", "_NodeReporter.to_xml")),
    ("_pytest.assertion.rewrite", ("AssertionRewritingHook", "AssertionRewritingHook.exec_module",
                                   "AssertionRewritingHook.find_spec", "_rewrite_test", "_read_pyc",
                                   "rewrite_asserts", "AssertionRewriter", "AssertionRewriter.run",
                                   "AssertionRewriter.visit_Assert", "AssertionRewriter.visit_Compare")),
    ("pluggy._callers", ("_multicall",)),
    ("pluggy._hooks", ("_HookCaller", "_HookCaller.__call__", "_HookCaller.call_extra",
                       "_HookCaller._add_hookimpl", "HookImpl")),
    ("pluggy._manager", ("PluginManager", "PluginManager._hookexec", "PluginManager.register",
                         "PluginManager.subset_hook_caller")),
    ("pluggy._result", ("_Result", "_Result.get_result", "_Result.force_result", "_Result.from_call")),
    ("unittest.case", ("TestCase", "TestCase.run", "TestCase.__call__", "TestCase.debug",
                       "TestCase.assertEqual", "TestCase.assertNotEqual", "TestCase.assertTrue",
                       "TestCase.assertFalse", "TestCase.assertIs", "TestCase.assertIsNone",
                       "TestCase.assertIn", "TestCase.assertRaises", "TestCase.assertAlmostEqual",
                       "TestCase.assertCountEqual", "TestCase.assertDictEqual",
                       "TestCase.assertListEqual", "TestCase.assertSequenceEqual",
                       "TestCase.assertTupleEqual", "TestCase.assertSetEqual",
                       "TestCase.assertMultiLineEqual", "TestCase.assertIsInstance",
                       "TestCase.fail", "TestCase._getAssertEqualityFunc", "TestCase._baseAssertEqual",
                       "TestCase.failureException", "_Outcome", "_AssertRaisesContext.__exit__")),
)

# Modules whose sys.modules entry must stay the one loaded at configure.
_IDENTITY_MODULES = ("pytest", "_pytest", "_pytest.python", "_pytest.runner", "_pytest.reports",
                     "_pytest.main", "_pytest.outcomes", "_pytest.python_api", "_pytest.assertion.rewrite",
                     "pluggy", "unittest", "unittest.case", "builtins", "testfirst_evidence")


def _snapshot_targets(own):
    """[(label, live dict, key, object, code or None)] for every target and
    for own, the names of this plugin's functions and classes."""
    out = []
    mods = sys.modules
    for modname, names in _IDENTITY_TARGETS + ((__name__, tuple(own)),):
        mod = mods.get(modname)
        if mod is None:
            continue
        for name in names:
            container, obj = vars(mod), None
            parts = name.split(".")
            if parts[0] not in container:
                continue
            obj = container[parts[0]]
            if len(parts) == 2:
                if not isinstance(obj, type):
                    continue
                for k in obj.__mro__:
                    if parts[1] in vars(k):
                        container = vars(k)
                        obj = container[parts[1]]
                        break
                else:
                    continue
            code = getattr(obj, "__code__", None) if type(obj) is types.FunctionType else None
            out.append((modname + "." + name, container, parts[-1], obj, code))
    for modname in _IDENTITY_MODULES:
        if modname in mods:
            out.append(("sys.modules[" + modname + "]", mods, modname, mods[modname], None))
    return out


# A hook caller's implementations, live, in the order get_hookimpls gives
# them: pluggy 1.0 (bookworm) keeps nonwrappers and wrappers in two lists,
# later pluggy (trixie's 1.5) in one. Chosen here, before any code of the
# tree is importable.
if hasattr(pluggy._hooks._HookCaller, "_hookimpls"):
    _live_impls = operator.attrgetter("_hookimpls")
else:
    def _live_impls(caller):
        return caller._nonwrappers + caller._wrappers


def _hook_snapshot(config):
    """{hook name: (caller, [hookimpls])} of every hook, and the executor."""
    snap = {}
    for name, caller in list(vars(config.pluginmanager.hook).items()):
        if isinstance(caller, pluggy._hooks._HookCaller):
            snap[name] = (caller, caller.get_hookimpls(), caller._hookexec)
    return snap, config.pluginmanager._inner_hookexec, config.pluginmanager.hook, config.hook


def _fast_snapshot(ch):
    """The snapshots as flat tuples, for _unchanged."""
    objects = (tuple(c.get for _, c, _, _, _ in ch.snapshot), tuple(k for _, _, k, _, _ in ch.snapshot),
               tuple(o for _, _, _, o, _ in ch.snapshot))
    hooks = None
    if ch.hooks is not None:
        snap, inner, relay, proxy = ch.hooks
        names = tuple(snap)
        callers = tuple(snap[n][0] for n in names)
        hooks = (names, callers, tuple(itertools.chain.from_iterable(snap[n][1] for n in names)),
                 tuple(snap[n][2] for n in names), vars(relay).get)
    return objects, hooks


def _unchanged(ch, call=operator.call, is_not=operator.is_not, chain=itertools.chain.from_iterable,
               live_impls=_live_impls, hookexec=operator.attrgetter("_hookexec")):
    """Whether every snapshot still holds, by identity, in C-level loops."""
    if ch.fast is None:
        return False
    (getters, keys, objs), hooks = ch.fast
    if any(map(is_not, map(call, getters, keys), objs)):
        return False
    if hooks is None:
        return True
    names, callers, impls, execs, live = hooks
    if any(map(is_not, map(live, names), callers)):
        return False
    # pytest's path-aware proxy caches what it hands out in its own dict.
    proxy = vars(ch.hooks[3])
    keys, values = ch.proxy_ok
    if len(proxy) != len(keys) or any(map(is_not, map(proxy.get, keys), values)):
        return False
    # The snapshot's order is per hook, as get_hookimpls gives it.
    now = tuple(chain(map(live_impls, callers)))
    if len(now) != len(impls):
        return False
    return not any(map(is_not, now, impls)) and not any(map(is_not, map(hookexec, callers), execs))


def _check(ch, full, where, event=_event, unchanged=_unchanged):
    """Compare the identity snapshots with what is live now; report each
    object that changed, once."""
    if sys.pycache_prefix != ch.pycache_prefix and "pycache_prefix" not in ch.mismatches:
        ch.mismatches.add("pycache_prefix")
        event(ch, "pycache_prefix_changed", "weak", str(sys.pycache_prefix)[:200] + " at " + where)
    if not full and unchanged(ch):
        pm = ch.config.pluginmanager if ch.config is not None else None
        if ch.hooks is None or (pm._inner_hookexec is ch.hooks[1] and pm.hook is ch.hooks[2] and ch.config.hook is ch.hooks[3]):
            return True
    bad = []
    for label, container, key, obj, code in ch.snapshot:
        now = container.get(key)
        if now is not obj:
            bad.append(label)
        elif full and code is not None and obj.__code__ is not code:
            bad.append(label + ".__code__")
    if ch.hooks is not None and ch.config is not None:
        snap, inner, relay, proxy = ch.hooks
        pm = ch.config.pluginmanager
        if pm._inner_hookexec is not inner:
            bad.append("pluginmanager._inner_hookexec")
        if pm.hook is not relay:
            bad.append("pluginmanager.hook")
        if ch.config.hook is not proxy:
            bad.append("config.hook")
        elif proxy is not relay:
            # pytest's path-aware proxy caches the callers it hands out (or
            # wrappers of them) in its own dict.
            cache = dict(vars(proxy))
            wrong = [name for name, cached in cache.items()
                     if (name in snap and getattr(cached, "__wrapped__", cached) is not snap[name][0])
                     or (name == "_PathAwareHookProxy__hook_caller" and cached is not relay)]
            bad.extend("config.hook." + name for name in wrong)
            if not wrong:
                ch.proxy_ok = (tuple(cache), tuple(cache.values()))
        live = vars(relay)
        for name, (caller, impls, hookexec) in snap.items():
            now = live.get(name)
            if now is not caller:
                bad.append("hook " + name)
            elif len(_live_impls(caller)) != len(impls) or any(
                    a is not b for a, b in zip(_live_impls(caller), impls)):
                added = [i.plugin_name for i in caller.get_hookimpls() if not any(i is j for j in impls)]
                bad.append("hook " + name + " implementations" + (" (" + ", ".join(added) + ")" if added else ""))
            elif caller._hookexec is not hookexec:
                bad.append("hook " + name + " executor")
    for label in bad:
        if label not in ch.mismatches:
            ch.mismatches.add(label)
            event(ch, "identity_mismatch", "strong", label + " at " + where)
    return not bad


def _plain_code_matches(ch, path, code):
    codes = ch.plain_codes.get(path)
    if codes is None:
        codes = []
        src = ch.hidden_sources.get(path)
        if src is not None:
            try:
                todo = [compile(src, path, "exec", dont_inherit=True)]
            except SyntaxError:
                todo = []
            while todo:
                c = todo.pop()
                codes.append(c)
                todo.extend(k for k in c.co_consts if type(k) is types.CodeType)
        ch.plain_codes[path] = codes
    return any(c == code and c.co_qualname == code.co_qualname for c in codes)


# The code of the function unittest.skip puts in place of a test method
# (skipIf and skipUnless with a true condition too): it only raises SkipTest,
# and functools.wraps leaves the method it replaced in its __wrapped__.
_SKIP_WRAPPER_CODE = unittest.case.skip("")(lambda: None).__code__


async def _async_probe():
    pass


# The code of the functions unittest.mock.patch (patch.object, .multiple)
# and patch.dict put in place of a test: they enter their patches, call the
# function they close over (func, f) and leave the patches. Taken from the
# standard library as the plugin loads, before any code of the tree runs.
_MOCK_PATCH_CODES = (
    unittest.mock.patch("os.sep", "/")(lambda: None).__code__,
    unittest.mock.patch("os.sep", "/")(_async_probe).__code__,
)
_MOCK_DICT_CODES = (
    unittest.mock.patch.dict("os.environ", {})(lambda: None).__code__,
    unittest.mock.patch.dict("os.environ", {})(_async_probe).__code__,
)


def _cell(fn, name, cell_type=types.CellType, type=type):
    """The content of fn's closure cell name, or fn itself when it has none
    (never equal to a function it wraps)."""
    code = fn.__code__
    closure = fn.__closure__
    if closure is None or name not in code.co_freevars:
        return fn
    cell = closure[code.co_freevars.index(name)]
    if type(cell) is not cell_type:
        return fn
    try:
        return cell.cell_contents
    except ValueError:
        return fn


def _mock_wrapped(fn, patch_codes=_MOCK_PATCH_CODES, dict_codes=_MOCK_DICT_CODES, cell=_cell,
                  patch_type=unittest.mock._patch, dict_type=unittest.mock._patch_dict,
                  vars=vars, type=type, list=list, any=any, all=all):
    """The function mock's decorator wrapper fn calls, when fn is exactly
    such a wrapper of the standard library with patches of its own types;
    None otherwise."""
    code = fn.__code__
    if any(code is c for c in patch_codes):
        patchings = vars(fn).get("patchings")
        if (type(patchings) is not list or not patchings or not all(type(p) is patch_type for p in patchings)
                or cell(fn, "patched") is not fn or type(cell(fn, "self")) is not patch_type):
            return None
        inner = cell(fn, "func")
    elif any(code is c for c in dict_codes):
        if type(cell(fn, "self")) is not dict_type:
            return None
        inner = cell(fn, "f")
    else:
        return None
    # functools.wraps's __wrapped__ must name the function really called.
    if vars(fn).get("__wrapped__") is not inner:
        return None
    return inner


def _unwrap_skip(fn, skip_code=_SKIP_WRAPPER_CODE, mock_wrapped=_mock_wrapped,
                 function=types.FunctionType, vars=vars, type=type):
    """A hidden test under @unittest.skip is unittest's skip wrapper, and one
    under @mock.patch or @mock.patch.dict is mock's: the code to check is
    the function it wraps. Only those exact wrappers of the standard library
    are looked through: the skip wrapper can do nothing but skip, which
    never counts as a pass the base does not share, and mock's only enter
    patches of the standard library's own types around the call of the
    function they close over."""
    while type(fn) is function:
        if fn.__code__ is skip_code:
            inner = vars(fn).get("__wrapped__")
        else:
            inner = mock_wrapped(fn)
        if type(inner) is not function:
            break
        fn = inner
    return fn


def _check_item(ch, item, where, event=_event, plain=_plain_code_matches, unwrap_skip=_unwrap_skip):
    """The code a hidden test runs must be the code the plugin compiled from
    the root-owned file."""
    path = str(getattr(item, "path", ""))
    if not path.startswith(HIDDEN):
        return True
    fn = getattr(item, "function", None)
    if fn is None:
        return True
    fn = unwrap_skip(getattr(fn, "__func__", fn))
    code = getattr(fn, "__code__", None)
    ok = code is not None and id(code) in ch.expected_ids
    if not ok and code is not None and code.co_filename == path:
        # A module pytest did not rewrite (PYTEST_DONT_REWRITE): compare
        # with a plain compile of the same source.
        ok = plain(ch, path, code)
    if not ok and item.nodeid not in ch.mismatches:
        ch.mismatches.add(item.nodeid)
        event(ch, "identity_mismatch", "strong", "code of hidden test " + item.nodeid + " at " + where)
    return ok


# ---------------------------------------------------------------------------
# One-way equality

_BUILTIN_SCALARS = frozenset((int, float, complex, str, bytes, bool, type(None)))
_BUILTIN = _BUILTIN_SCALARS | frozenset((list, tuple, dict, set, frozenset))
_BUILTIN_BASES = (str, bytes, int, float, list, tuple, dict, set, frozenset)
_OPS = {ast.Eq: 0, ast.NotEq: 1, ast.In: 2}


def _override_from_tree(t, method, names):
    """Whether the class of t's MRO that defines method is not a built-in:
    a class of the tree, or one that does not resolve where it claims to
    live."""
    for k in t.__mro__:
        d = vars(k)
        if method in d:
            if k in _BUILTIN or k is object:
                return False
            m = d[method]
            if type(m) is types.FunctionType:
                if _is_tree_file(m.__code__.co_filename, names):
                    return True
            mod = sys.modules.get(k.__module__)
            target = mod
            for part in k.__qualname__.split("."):
                target = getattr(target, part, None) if target is not None else None
            if target is not k:
                return True
            f = getattr(mod, "__file__", None) or ""
            return _is_tree_file(f, names)
    return False


def _raw(v):
    """The built-in value inside an instance of a subclass of a built-in."""
    for base in _BUILTIN_BASES:
        if isinstance(v, base):
            if base in (list, tuple):
                return base(base.__iter__(v))
            if base is dict:
                return dict(dict.items(v))
            if base in (set, frozenset):
                return base(base.__iter__(v))
            if base is str:
                return str.__str__(v)
            if base is bytes:
                return bytes(memoryview(v))
            if base is bool or base is int:
                return int.__int__(v)
            if base is float:
                return float.__float__(v)
    return None


_UNKNOWN = object()
# How many values one assertion's check may look at; past it, unknown.
_BUDGET = 20000


def _plain(k, names):
    """A dict key or set element as the built-in value built-in comparisons
    would see (the value of a str or int subclass), or _UNKNOWN."""
    t = type(k)
    if t in _BUILTIN_SCALARS:
        return k
    if t is tuple or t is frozenset:
        parts = [_plain(x, names) for x in k]
        if any(p is _UNKNOWN for p in parts):
            return _UNKNOWN
        return t(parts)
    if isinstance(k, (str, bytes, int, float)):
        raw = _raw(k)
        if type(raw) in _BUILTIN_SCALARS:
            return raw
    return _UNKNOWN


def _plain_keys(d, names):
    out = {}
    for k, v in d.items():
        pk = _plain(k, names)
        if pk is _UNKNOWN:
            return None
        out[pk] = v
    return out if len(out) == len(d) else None


def _holds(a, b, names, budget, depth=0, probes=None):
    """Whether a == b holds by built-in comparisons alone: True, False, or
    None when it cannot be told without running code of the tree."""
    budget[0] -= 1
    if depth > 20 or budget[0] < 0:
        return None
    ta, tb = type(a), type(b)
    if ta in _BUILTIN and tb in _BUILTIN:
        if ta in _BUILTIN_SCALARS and tb in _BUILTIN_SCALARS:
            return a == b
        if ta in (list, tuple) and tb in (list, tuple):
            if ta is not tb or len(a) != len(b):
                return False
            for x, y in zip(a, b):
                r = _holds(x, y, names, budget, depth + 1, probes)
                if r is not True:
                    return r
            return True
        if ta is dict and tb is dict:
            if len(a) != len(b):
                return False
            pa, pb = _plain_keys(a, names), _plain_keys(b, names)
            if pa is None or pb is None:
                return None
            if pa.keys() != pb.keys():
                return False
            for k in pa:
                r = _holds(pa[k], pb[k], names, budget, depth + 1, probes)
                if r is not True:
                    return r
            return True
        if ta in (set, frozenset) and tb in (set, frozenset):
            sa = [_plain(x, names) for x in a]
            sb = [_plain(x, names) for x in b]
            if any(x is _UNKNOWN for x in sa) or any(x is _UNKNOWN for x in sb):
                return None
            return set(sa) == set(sb)
        return False
    if (ta in _BUILTIN) == (tb in _BUILTIN):
        return None
    builtin, other = (a, b) if ta in _BUILTIN else (b, a)
    if not (_override_from_tree(type(other), "__eq__", names) or _override_from_tree(type(other), "__ne__", names)):
        return None
    raw = _raw(other)
    # Not a built-in at all: the comparison held only by its override.
    held = False if raw is None else _holds(builtin, raw, names, budget, depth + 1, probes)
    if held is False and probes is not None:
        probes.append(_equals_another(other, builtin))
    return held


def _perturbed(v, urandom=os.urandom):
    """A value of v's built-in type far from v, drawn at random so that code
    of the tree cannot tell it from an expected value; _UNKNOWN when there
    is none to make. Far, so that a type comparing loosely (equal within a
    tolerance) is not taken for one equal to anything: values close to the
    expected one are the twins' to try."""
    r = urandom(8)
    n = 1 + r[0] % 9
    t = type(v)
    if t is bool:
        return not v
    if t is int:
        return v + (10**6 + int.from_bytes(r[1:4], "big")) * (1 if r[4] & 1 else -1)
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            return 0.5
        return v + (1e6 + int.from_bytes(r[1:4], "big")) * (abs(v) + 1) * (1 if r[4] & 1 else -1)
    if t in (str, bytes):
        letters = "abcdefghijklmnopqrstuvwxyz"
        w = "".join(letters[b % 26] for b in urandom(len(v) + 3 + n))
        return w if t is str else w.encode()
    if t in (list, tuple):
        return t(list(v) + [n])
    if t is dict:
        d = dict(v)
        d["k%d" % (len(d) + n)] = n
        return d
    if t in (set, frozenset):
        return t(set(v) | {"k%d" % (len(v) + n)})
    return _UNKNOWN


def _equals_another(other, builtin, perturbed=_perturbed):
    """Whether a value of the tree that compared equal to builtin by its own
    override also compares equal to a different value of the same type: a
    value equal to anything, not a rich type (a version, a path) that
    compares with built-in values by what it means."""
    probe = perturbed(builtin)
    if probe is _UNKNOWN:
        return False
    try:
        return bool(other == probe)
    except Exception:
        return False


def _one_way(op, left, right, res, names):
    """How the comparison made the assertion hold only by an override of
    the tree ("==", "!=" or "in"; "" when it did not), and whether that is
    strong. It is strong when the tree's value also equals a different value
    of the built-in's type (it is equal to anything), or decided an
    inequality or a truth by itself. A rich type of the tree that compares
    with built-in values by what it means (a version equal to "1.2.3"), or
    a container of the tree that decides what it contains, is weak."""
    t = type(res)
    if t is not bool and t not in _BUILTIN_SCALARS:
        # The comparison answered with an object whose truth is the tree's
        # to say.
        if _override_from_tree(t, "__bool__", names) or _override_from_tree(t, "__len__", names):
            return (op == 0 and "==" or op == 1 and "!=" or "in"), True
        return "", False
    if not res:
        return "", False
    budget = [_BUDGET]
    probes = []
    if op == 0:
        if _holds(left, right, names, budget, 0, probes) is False:
            return "==", any(probes)
    elif op == 1:
        if _holds(left, right, names, budget) is True:
            return "!=", True
    else:
        tl, tr = type(left), type(right)
        if tr in (list, tuple, set, frozenset, dict):
            if tl in _BUILTIN_SCALARS and all(type(x) in _BUILTIN_SCALARS for x in right):
                return "", False
            results = [_holds(left, x, names, budget, 0, probes) for x in right]
            if results and all(r is False for r in results):
                return "in", any(probes)
        elif tr in (str, bytes) and tl not in _BUILTIN and isinstance(left, tr):
            if not tr.__contains__(right, _raw(left)):
                return "in", True
        elif tr not in _BUILTIN and tl in _BUILTIN and _override_from_tree(tr, "__contains__", names):
            raw = _raw(right)
            if raw is not None and type(raw) in (list, tuple, set, frozenset, dict, str, bytes):
                try:
                    if type(raw) in (str, bytes):
                        inside = left in raw
                    else:
                        inside = any(_holds(left, x, names, budget) is not False for x in raw)
                except TypeError:
                    inside = True
                if not inside:
                    return "in", False
    return "", False


def _compare(op, left, right, ch=_CH_HOLDER[0], one_way=_one_way, event=_event, getframe=sys._getframe):
    """A comparison of a hidden test's assertion, as pytest's rewriting would
    evaluate it, checked for equality that holds only one way."""
    if op == 0:
        res = left == right
    elif op == 1:
        res = left != right
    else:
        res = left in right
    if ch is not None and res is not False and not (type(left) in _BUILTIN_SCALARS and type(right) in _BUILTIN_SCALARS):
        try:
            how, strong = one_way(op, left, right, res, ch.tree_names)
            if how:
                f = getframe(1)
                where = f.f_code.co_filename + ":" + str(f.f_lineno) if f is not None else "?"
                detail = f"{type(left).__name__} {how} {type(right).__name__} at {where}"
                if strong:
                    event(ch, "one_way_equality", "strong", detail)
                else:
                    event(ch, "tree_type_equality", "weak", detail)
        except Exception:
            pass
    return res


class _OneWay(ast.NodeTransformer):
    """Routes every ==, != and in of pytest's rewritten assertions through
    _compare, keeping pytest's temporaries so its messages stay."""

    def visit_Assign(self, node):
        v = node.value
        if (len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.startswith("@py_assert") and isinstance(v, ast.Compare)
                and len(v.ops) == 1 and type(v.ops[0]) in _OPS):
            call = ast.Call(
                func=ast.Attribute(value=ast.Name(id="@testfirst_ev", ctx=ast.Load()), attr="_compare", ctx=ast.Load()),
                args=[ast.Constant(_OPS[type(v.ops[0])]), v.left, v.comparators[0]], keywords=[])
            node.value = ast.copy_location(call, v)
            ast.fix_missing_locations(node)
        return node


def _decide_on_the_stack(tree):
    """pytest rewrites `assert e` into `@py_assertN = e` and then
    `if not @py_assertN: raise ...`. A trace function may write a frame's
    locals between the two (f_locals changes are written back), so every
    such pair becomes `if not (@py_assertN := e): raise ...`: the decision
    reads the value on the stack, and the local is only for the message."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            i = 0
            while i + 1 < len(stmts):
                a, b = stmts[i], stmts[i + 1]
                if (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
                        and a.targets[0].id.startswith("@py_assert") and isinstance(b, ast.If)
                        and isinstance(b.test, ast.UnaryOp) and isinstance(b.test.op, ast.Not)
                        and isinstance(b.test.operand, ast.Name) and b.test.operand.id == a.targets[0].id):
                    walrus = ast.NamedExpr(target=ast.Name(id=a.targets[0].id, ctx=ast.Store()), value=a.value)
                    b.test.operand = ast.copy_location(walrus, a.value)
                    ast.fix_missing_locations(b)
                    del stmts[i]
                    continue
                i += 1


def _add_one_way(tree):
    """Insert the import of this plugin next to pytest's and rewrite the
    comparisons; False when pytest did not rewrite the module."""
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.Import) and any(a.asname == "@pytest_ar" for a in stmt.names):
            imp = ast.Import(names=[ast.alias(name="testfirst_evidence", asname="@testfirst_ev")])
            for node in (imp, imp.names[0]):
                ast.copy_location(node, stmt)
            tree.body.insert(i + 1, imp)
            _OneWay().visit(tree)
            _decide_on_the_stack(tree)
            return True
    return False


def _make_rewrite(ch, rewrite_asserts, compile_=compile, stat=os.stat, add=_add_one_way):
    """pytest's _rewrite_test, from the source read at configure."""

    def _rewrite_test(fn, config, ch=ch, rewrite_asserts=rewrite_asserts, compile_=compile_, stat=stat,
                      add=add, event=_event, only_ast=ast.PyCF_ONLY_AST):
        strfn = str(fn)
        st = stat(fn)
        source = ch.hidden_sources.get(strfn)
        if source is None:
            source = fn.read_bytes()
        elif fn.read_bytes() != source:
            event(ch, "identity_mismatch", "strong", "hidden file " + strfn + " changed during the run")
        tree = compile_(source, strfn, "exec", only_ast, dont_inherit=True)
        rewrite_asserts(tree, source, strfn, config)
        if strfn.startswith(HIDDEN):
            add(tree)
        co = compile_(tree, strfn, "exec", dont_inherit=True)
        if strfn.startswith(HIDDEN):
            todo = [co]
            while todo:
                c = todo.pop()
                ch.expected_codes.append(c)
                ch.expected_ids.add(id(c))
                todo.extend(k for k in c.co_consts if type(k) is types.CodeType)
        return st, co

    return _rewrite_test


def _make_read_pyc(read_pyc):
    def _read_pyc(source, pyc, trace=lambda x: None, read_pyc=read_pyc):
        # A hidden module is always rewritten from its source: a cached pyc
        # (e.g. under a sys.pycache_prefix the tree chose) is never read.
        if str(source).startswith(HIDDEN):
            return None
        return read_pyc(source, pyc, trace)

    return _read_pyc


# ---------------------------------------------------------------------------
# The report

def _xml_attr(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;"))


def _write_report(ch, data, write=os.write):
    b = data.encode("utf-8", "replace")
    ch.report_hash.update(b)
    ch.report_bytes += len(b)
    try:
        while b:
            n = write(ch.report, b)
            b = b[n:]
    except OSError:
        ch.broken = True


def _names(nodeid):
    """pytest's JUnit classname and name of a node id. A parametrized
    case's id may hold "::" itself ("test_cast[a::integer]"): only the part
    before its "[" is split."""
    base, params = nodeid, ""
    i = nodeid.find("[", max(nodeid.find("::"), 0))
    if i >= 0 and nodeid.endswith("]"):
        base, params = nodeid[:i], nodeid[i:]
    parts = base.split("::")
    parts[0] = parts[0].replace("/", ".")
    if parts[0].endswith(".py"):
        parts[0] = parts[0][:-3]
    return ".".join(parts[:-1]), parts[-1] + params


def _case(ch, nodeid, outcome, write_report=_write_report, names=_names, attr=_xml_attr):
    cls, name = names(nodeid)
    child = {"passed": "", "failed": "<failure/>", "error": "<error/>", "skipped": "<skipped/>"}[outcome]
    if not ch.report_open:
        write_report(ch, '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">')
        ch.report_open = True
    if child:
        write_report(ch, f'<testcase classname="{attr(cls)}" name="{attr(name)}">{child}</testcase>\n')
    else:
        write_report(ch, f'<testcase classname="{attr(cls)}" name="{attr(name)}"/>\n')
    ch.cases += 1


def _tally(ch, category):
    if category:
        ch.tallies[category] = ch.tallies.get(category, 0) + 1


def _category(report):
    """The terminal summary's category of a report, as pytest counts it."""
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return "xfailed"
        if report.passed:
            return "xpassed"
    if report.when in ("setup", "teardown"):
        if report.failed:
            return "error"
        if report.skipped:
            return "skipped"
        return ""
    return report.outcome


# ---------------------------------------------------------------------------
# What hidden modules import from hidden modules


def _hidden_module_names(root, py_files, in_package):
    """The dotted names the hidden files are imported under, each with its
    file: pytest's (from the first directory up that is not a package) and,
    for a hidden package inside the library's package, the library's
    (in_package: dotted name to directory, testfirst_syspath's finder).
    py_files are the hidden .py files as (directory, name), in the order
    pytest_configure's walk of root met them."""
    found = []
    for dirpath, name in py_files:
        parts = [] if name == "__init__.py" else [name[:-3]]
        d = dirpath
        while d != root and os.path.isfile(os.path.join(d, "__init__.py")):
            parts.insert(0, os.path.basename(d))
            d = os.path.dirname(d)
        found.append((name, d, parts, os.path.join(dirpath, name)))
    # pytest puts on sys.path the first directory up that is not a package
    # of each test module and conftest it imports: only files below those
    # are imported by pytest's names (a data directory's json.py is not
    # the standard library's json).
    bases = {d for name, d, _, _ in found
             if name == "conftest.py" or (name.startswith("test_") or name.endswith("_test.py"))}
    names = {}
    for _, d, parts, path in found:
        if d in bases and parts and all(p.isidentifier() for p in parts):
            names.setdefault(".".join(parts), path)
    for dotted, directory in in_package.items():
        for dirpath, name in py_files:
            if dirpath != directory and not dirpath.startswith(directory + os.sep):
                continue
            rel = os.path.relpath(dirpath, directory)
            full = [dotted] + ([] if rel == "." else rel.split(os.sep)) + ([] if name == "__init__.py" else [name[:-3]])
            if all(p.isidentifier() for p in full[1:]):
                names[".".join(full)] = os.path.join(dirpath, name)
    return names


def _top_level_defs(source):
    """The functions a module's source defines at its top level with a
    plain def (no decorator) and binds no other way there."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset(), None
    defs, other = set(), set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.decorator_list:
            (other if stmt.name in defs else defs).add(stmt.name)
        else:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    other.add(node.id)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in tree.body:
                    other.add(node.name)
                elif isinstance(node, ast.alias):
                    other.add((node.asname or node.name).partition(".")[0])
    return frozenset(defs - other), tree


def _defs_of(ch, path, defs=_top_level_defs):
    got = ch.hidden_defs.get(path)
    if got is None:
        src = ch.hidden_sources.get(path)
        got = defs(src) if src is not None else (frozenset(), None)
        ch.hidden_defs[path] = got
    return got


def _is_hidden_code(ch, fn, plain=_plain_code_matches, function=types.FunctionType, type=type):
    if type(fn) is not function:
        return False
    code = fn.__code__
    return id(code) in ch.expected_ids or (code.co_filename.startswith(HIDDEN) and plain(ch, code.co_filename, code))


def _check_imports(ch, module, event=_event, defs_of=_defs_of, hidden_code=_is_hidden_code,
                   module_type=types.ModuleType, type=type, isinstance=isinstance):
    """A hidden module has just been executed: each name it imported at its
    top level from a hidden module, which that module's source defines with
    a plain def, must be a function compiled from the hidden files, and a
    hidden module it imported whole must hold such functions under those
    names. Otherwise the tree changed what the hidden test calls between
    the two imports (a trace function that rebinds the helper, a module of
    its own in sys.modules)."""
    vs = vars(module)
    spec = vs.get("__spec__")
    path = getattr(spec, "origin", None)
    if type(path) is not str or not path.startswith(HIDDEN):
        return
    own_defs, tree = defs_of(ch, path)
    if tree is None:
        return
    package = vs.get("__package__") or ""
    names = ch.hidden_names
    bound_here = set()
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound_here.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound_here.add(node.name)
    bad = []

    def check_module(value, name, label):
        target = names.get(name)
        if target is None:
            return
        if type(value) is not module_type:
            bad.append(label + " is not the hidden module " + name)
            return
        for d in defs_of(ch, target)[0]:
            if not hidden_code(ch, vars(value).get(d)):
                bad.append(label + "." + d + " is not the hidden " + name + "." + d)

    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                parts = package.split(".") if package else []
                if stmt.level - 1 > len(parts):
                    continue
                parts = parts[:len(parts) - (stmt.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            source = names.get(base)
            for alias in stmt.names:
                bound = alias.asname or alias.name
                if alias.name == "*" or bound in bound_here:
                    continue
                value = vs.get(bound)
                if source is not None and alias.name in defs_of(ch, source)[0]:
                    if not hidden_code(ch, value):
                        bad.append(bound + " from " + base + " is not the hidden " + base + "." + alias.name)
                elif base + "." + alias.name in names:
                    check_module(value, base + "." + alias.name, bound)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname and alias.asname not in bound_here:
                    check_module(vs.get(alias.asname), alias.name, alias.asname)
    name = vs.get("__name__")
    for detail in bad:
        key = "import " + str(name) + ": " + detail
        if key not in ch.mismatches:
            ch.mismatches.add(key)
            event(ch, "identity_mismatch", "strong", "in hidden module " + str(name) + ", " + detail)


def _make_exec_module(ch, exec_module, check=_check_imports):
    """pytest's AssertionRewritingHook.exec_module, with the imports of
    each hidden module it executes checked as it ends."""

    def exec_module(self, module, ch=ch, exec_module=exec_module, check=check):
        exec_module(self, module)
        check(ch, module)

    return exec_module


# ---------------------------------------------------------------------------
# Hooks


def _finish(ch, check=_check, check_item=_check_item, write_report=_write_report, event=_event, emit=_emit,
            fstat=os.fstat):
    """The end record, written once and only when every check holds."""
    if ch.ended:
        return
    ch.ended = True
    ok = check(ch, True, "end")
    for nodeid, item in list(ch.items.items()):
        ok = check_item(ch, item, "end") and ok
    if not ch.report_open:
        write_report(ch, '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">')
        ch.report_open = True
    write_report(ch, "</testsuite></testsuites>\n")
    if ch.phases:
        ok = False
        event(ch, "report_incomplete", "strong", f"{len(ch.phases)} test(s) without a teardown report")
    if ch.tripwire is not None:
        # Nothing but a close or a dup2 takes a descriptor away from the
        # tripwire: honest code has no reason to touch fds it never opened.
        for fd in (REPORT_FD, EVIDENCE_FD, KEY_FD):
            try:
                st = fstat(fd)
                now = (st.st_dev, st.st_ino)
            except OSError:
                now = None
            if now != ch.tripwire:
                ok = False
                event(ch, "report_forgery_attempt", "strong", f"fd {fd} no longer leads to the tripwire")
    if not ok or ch.broken or ch.session is None:
        return
    status = ch.session.exitstatus
    emit(ch, "end", {
        "exitstatus": int(status),
        "cases": ch.cases,
        "tallies": dict(ch.tallies),
        "report_sha256": ch.report_hash.hexdigest(),
        "report_bytes": ch.report_bytes,
        "more": dict(ch.more),
    })


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config, ch=_CH_HOLDER[0]):
    """Before the tree is importable: read the hidden sources, wrap pytest's
    rewriting and take the identity snapshot."""
    ch.config = config
    data = set()
    py_files = []
    for root, dirs, files in os.walk(HIDDEN[:-1]):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".py", ".pyc", ".pyw", ".pyi", ".so")):
                data.add(os.path.join(root, name))
            if name.endswith(".py"):
                py_files.append((root, name))
                path = os.path.join(root, name)
                try:
                    with open(path, "rb") as f:
                        ch.hidden_sources[path] = f.read()
                except OSError:
                    pass
    ch.hidden_data = frozenset(data)
    rw = _pytest.assertion.rewrite
    rw._rewrite_test = _make_rewrite(ch, rw.rewrite_asserts)
    rw._read_pyc = _make_read_pyc(rw._read_pyc)
    # testfirst_syspath, loaded with this plugin before any code of the
    # tree is importable, knows the hidden packages inside the library's.
    syspath = sys.modules.get("testfirst_syspath")
    in_package = getattr(syspath, "IN_PACKAGE_ROOTS", {}) if syspath is not None else {}
    ch.hidden_names = _hidden_module_names(HIDDEN[:-1], py_files, in_package)
    rw.AssertionRewritingHook.exec_module = _make_exec_module(ch, rw.AssertionRewritingHook.exec_module)
    mod = sys.modules[__name__]
    own = []
    for name, obj in vars(mod).items():
        if type(obj) is types.FunctionType or (isinstance(obj, type) and obj.__module__ == __name__):
            ch.watched.add(id(obj))
            own.append(name)
    ch.snapshot = _snapshot_targets(own)
    ch.fast = _fast_snapshot(ch)


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session, ch=_CH_HOLDER[0]):
    """Once every plugin is registered and before anything is collected:
    the snapshot of every hook's implementations."""
    ch.session = session
    ch.hooks = _hook_snapshot(session.config)
    ch.fast = _fast_snapshot(ch)
    ch.started = True


def pytest_collectreport(report, ch=_CH_HOLDER[0], check=_check, tally=_tally, case=_case):
    check(ch, False, "collection")
    if report.failed or report.skipped:
        outcome = "error" if report.failed else "skipped"
        tally(ch, outcome)
        if report.nodeid:
            case(ch, report.nodeid, outcome)


def pytest_itemcollected(item, ch=_CH_HOLDER[0]):
    fn = getattr(item, "function", None)
    if fn is not None and str(getattr(item, "path", "")).startswith(HIDDEN):
        ch.watched.add(id(getattr(fn, "__func__", fn)))
        ch.items[item.nodeid] = item


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item, ch=_CH_HOLDER[0], check=_check, check_item=_check_item):
    check(ch, False, item.nodeid)
    check_item(ch, item, item.nodeid)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call, ch=_CH_HOLDER[0], event=_event):
    """The outermost wrapper of report making: a report that says passed
    while its call raised was changed after pytest made it."""
    outcome = yield
    try:
        report = outcome.get_result()
    except BaseException:
        return
    if call.excinfo is not None and report.outcome == "passed" and item.nodeid not in ch.mismatches:
        ch.mismatches.add(item.nodeid)
        event(ch, "report_contradicts_call", "strong",
               f"{item.nodeid} {call.when}: passed although it raised {call.excinfo.typename}")


def pytest_runtest_logreport(report, ch=_CH_HOLDER[0], check=_check, tally=_tally, category=_category, case=_case):
    if report.when == "call" or not report.passed:
        # A passing setup or teardown changes no outcome; the call's check
        # and the one before it cover the test.
        check(ch, False, report.nodeid)
    tally(ch, category(report))
    phases = ch.phases.setdefault(report.nodeid, [])
    phases.append((report.when, report.outcome))
    if report.when == "teardown":
        del ch.phases[report.nodeid]
        outcome = "passed"
        if any(o == "failed" and w != "call" for w, o in phases):
            outcome = "error"
        elif any(o == "failed" for w, o in phases):
            outcome = "failed"
        elif any(o == "skipped" for w, o in phases):
            outcome = "skipped"
        case(ch, report.nodeid, outcome)


def pytest_sessionfinish(session, exitstatus, ch=_CH_HOLDER[0], check=_check):
    check(ch, True, "session finish")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config, ch=_CH_HOLDER[0], finish=_finish):
    finish(ch)


# Nothing of the channel stays reachable by name.
del _CH_HOLDER
