package wrapper

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostSyspath stands in for testfirst_syspath on a host, where the tree is
// not in /repo.
const hostSyspath = `import os, sys
def pytest_configure(config):
    sys.path.insert(0, os.environ["TESTFIRST_REPO_DIR"])
`

const hostSentinels = `# testfirst-canary: tfc-0123456789abcdef


def test_empty_single():
    assert 3 + 4 == 7


def test_many_order():
    assert 3 * 4 == 13
`

// runPlugin runs the host's pytest with the evidence plugin on hidden
// against repo, with the wrapper's pipes, and returns what the wrapper
// would report.
func runPlugin(t *testing.T, repo, hidden map[string]string) (*RuntimeEvidence, []byte, int, string) {
	t.Helper()
	if err := exec.Command(hostPython, "-c", "import pytest").Run(); err != nil {
		t.Skipf("no pytest for %s: %v", hostPython, err)
	}
	dir := t.TempDir()
	write := func(root string, files map[string]string) string {
		for p, data := range files {
			full := filepath.Join(dir, root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return filepath.Join(dir, root)
	}
	plugins := write("plugins", map[string]string{"testfirst_syspath_host.py": hostSyspath})
	src, err := os.ReadFile("python/testfirst_evidence.py")
	if err != nil {
		t.Fatal(err)
	}
	write("plugins", map[string]string{EvidenceModule + ".py": string(src)})
	repoDir := write("repo", repo)
	hidden["test_sentinels.py"] = hostSentinels
	hiddenDir := write("hidden", hidden)

	ch := newEvidenceChannel()
	reportR, reportW, _ := os.Pipe()
	evR, evW, _ := os.Pipe()
	key, err := ch.keyPipe()
	if err != nil {
		t.Fatal(err)
	}
	tripR, tripW, _ := os.Pipe()
	cmd := exec.Command(hostPython, "-P", "-m", "pytest", "--noconftest", "-c", "/dev/null", "--rootdir", hiddenDir,
		"-p", "no:cacheprovider", "-p", EvidenceModule, "-p", "testfirst_syspath_host",
		"--continue-on-collection-errors", "-s", "-ra", hiddenDir)
	cmd.Dir = repoDir
	cmd.Env = append(baseEnv(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONPATH="+plugins,
		"TESTFIRST_REPO_DIR="+repoDir, "TESTFIRST_HIDDEN_DIR="+hiddenDir)
	cmd.ExtraFiles = []*os.File{reportW, evW, key, tripW}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reportW.Close()
	evW.Close()
	key.Close()
	tripW.Close()
	var junit bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(ch.reportWriter(&junit), reportR); done <- struct{}{} }()
	go func() { io.Copy(ch, evR); done <- struct{}{} }()
	go func() { io.Copy(ch.tripwireWriter(), tripR); done <- struct{}{} }()
	err = cmd.Wait()
	<-done
	<-done
	<-done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ch.verify(cmd.Process.Pid), junit.Bytes(), code, out.String()
}

func reasons(ev *RuntimeEvidence, strength string) []string {
	var out []string
	for _, e := range ev.Events {
		if e.Strength == strength {
			out = append(out, e.Reason)
		}
	}
	return out
}

const wordsImpl = `def words(text):
    return text.lower().split()
`

const wordsTests = `# testfirst-canary: tfc-00000000words000
import pytest

from words import words


def test_words_need_text():
    with pytest.raises(AttributeError):
        words(None)


def test_words_are_lowercase():
    assert words("Hello World") == ["hello", "world"]


def test_first_word():
    assert "hello" in words("Hello World")


class TestEmpty:
    def test_empty(self):
        assert words("") == []
`

// TestPluginHonestRun: an honest run reports its start, no event, and an
// end record that matches the report, the exit status and the summary.
func TestPluginHonestRun(t *testing.T) {
	ev, junit, code, out := runPlugin(t, map[string]string{"words.py": wordsImpl}, map[string]string{"test_words.py": wordsTests})
	if !ev.Started || ev.End == nil || len(ev.Garbled) > 0 || len(ev.Events) > 0 {
		t.Fatalf("evidence %+v, want a start, an end and nothing else\n%s", ev, out)
	}
	if code != 1 || ev.End.ExitStatus != 1 {
		t.Errorf("exit %d, end record %d, want 1 (the must-fail sentinel)", code, ev.End.ExitStatus)
	}
	if ev.End.ReportSHA256 != ev.ReportSHA256 || ev.End.ReportBytes != int64(len(junit)) {
		t.Errorf("end record report %s/%d, pipe carried %s/%d", ev.End.ReportSHA256, ev.End.ReportBytes, ev.ReportSHA256, len(junit))
	}
	if ev.End.Cases != 6 || ev.End.Tallies["passed"] != 5 || ev.End.Tallies["failed"] != 1 {
		t.Errorf("end record %+v, want 6 cases: 5 passed, 1 failed", ev.End)
	}
	for _, want := range []string{`classname="test_words" name="test_words_are_lowercase"/>`, `classname="test_words.TestEmpty" name="test_empty"/>`, `name="test_many_order"><failure/>`} {
		if !bytes.Contains(junit, []byte(want)) {
			t.Errorf("report lacks %s:\n%s", want, junit)
		}
	}
	if !strings.Contains(out, "1 failed, 5 passed") {
		t.Errorf("output lacks pytest's summary:\n%s", out)
	}
}

// TestPluginKeepsItsOwnFunctions: rebinding what json.dumps and
// hmac.digest look up when called (a plugin would naturally sign its records
// with them) neither shows the tree the key nor changes a record.
func TestPluginKeepsItsOwnFunctions(t *testing.T) {
	repo := `import hmac, json
class _Spy:
    # hmac.digest looks its OpenSSL module up at call time.
    def __init__(self, real):
        self._real = real
    def hmac_digest(self, key, msg, digest):
        print("STOLEN", key)
        return self._real.hmac_digest(key, msg, digest)
    def __getattr__(self, name):
        return getattr(self._real, name)
hmac._hashopenssl = _Spy(hmac._hashopenssl)
class _Encoder(json.JSONEncoder):
    # json.dumps with options looks JSONEncoder up at call time.
    def encode(self, o):
        print("STOLEN json")
        return super().encode(o)
json.JSONEncoder = _Encoder
` + wordsImpl
	ev, _, _, out := runPlugin(t, map[string]string{"words.py": repo}, map[string]string{"test_words.py": wordsTests})
	if strings.Contains(out, "STOLEN") {
		t.Errorf("the plugin called a function the tree rebound:\n%s", out)
	}
	if !ev.Started || ev.End == nil || len(ev.Garbled) > 0 {
		t.Errorf("evidence %+v, want an intact channel", ev)
	}

	// The plugin's own helpers, rebound in its module, are never called
	// with its state: its functions hold them as defaults.
	repo = `import sys
_plugin = sys.modules["` + EvidenceModule + `"]
def _steal(ch, *args, **kwargs):
    print("STOLEN", ch.key)
for _name in ("_tally", "_case", "_check", "_check_item", "_finish", "_event", "_emit", "_write_report"):
    setattr(_plugin, _name, _steal)
` + wordsImpl
	ev, _, _, out = runPlugin(t, map[string]string{"words.py": repo}, map[string]string{"test_words.py": wordsTests})
	if strings.Contains(out, "STOLEN") {
		t.Errorf("the plugin called a helper the tree rebound:\n%s", out)
	}
	if !slices.Contains(reasons(ev, StrengthStrong), "identity_mismatch") || ev.End != nil {
		t.Errorf("evidence %+v, want identity_mismatch and no end record", ev)
	}
}

// TestPluginAssertionsIgnoreTracedLocals: a trace function that flips the
// @py_assert temporaries of pytest's rewritten asserts to True after every
// opcode changes no outcome: the plugin's rewriting decides on the value on
// the stack. The trace function itself is a weak signal.
func TestPluginAssertionsIgnoreTracedLocals(t *testing.T) {
	repo := `import sys
def _local(frame, event, arg):
    if event == "opcode":
        for name, value in list(frame.f_locals.items()):
            if name.startswith("@py_assert") and value is False:
                frame.f_locals[name] = True
    return _local
def _global(frame, event, arg):
    if event == "call" and frame.f_code.co_name.startswith("test") and "words" in frame.f_globals:
        frame.f_trace_opcodes = True
        return _local
sys.settrace(_global)
def words(text):
    return ["wrong"]
`
	ev, junit, _, out := runPlugin(t, map[string]string{"words.py": repo}, map[string]string{"test_words.py": wordsTests})
	for _, name := range []string{"test_words_are_lowercase", "test_first_word"} {
		if !bytes.Contains(junit, []byte(`name="`+name+`"><failure/>`)) {
			t.Errorf("%s did not fail under the trace function:\n%s\n%s", name, junit, out)
		}
	}
	if !slices.Contains(reasons(ev, StrengthWeak), "trace_function") {
		t.Errorf("weak evidence %v, want trace_function", reasons(ev, StrengthWeak))
	}
}

// TestPluginEvidence runs attacks on the host's pytest: each must leave
// the strong evidence it names, or no end record.
func TestPluginEvidence(t *testing.T) {
	tests := []struct {
		name   string
		repo   string
		strong string // a strong reason that must be reported
		noEnd  bool   // the end record must be missing
	}{
		{"patched runtest", `import pytest
_real = pytest.Function.runtest
def _runtest(self):
    if "sentinels" in self.nodeid:
        return _real(self)
pytest.Function.runtest = _runtest
def words(text):
    return []
`, "identity_mismatch", true},
		{"patched report class", `import pytest
_make = pytest.TestReport.from_item_and_call.__func__
def _green(cls, item, call):
    r = _make(cls, item, call)
    if "sentinels" not in item.nodeid:
        r.outcome = "passed"
    return r
pytest.TestReport.from_item_and_call = classmethod(_green)
def words(text):
    return []
`, "identity_mismatch", true},
		{"always-equal list", `class _L(list):
    def __eq__(self, other):
        return True
    __hash__ = None
def words(text):
    return _L()
`, "one_way_equality", false},
		{"always-equal leaves in real containers", `class _S(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
def words(text):
    return [_S("?") for _ in text.split()]
`, "one_way_equality", false},
		{"a comparison answered with a truthy object", `class _Yes:
    def __bool__(self):
        return True
class _W(list):
    def __eq__(self, other):
        return _Yes()
def words(text):
    return _W()
`, "one_way_equality", false},
		{"report flipped by a profile function", `import sys
def _profile(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "from_item_and_call" and arg is not None:
        item = frame.f_locals.get("item")
        if item is not None and "sentinels" not in item.nodeid and arg.outcome == "failed":
            arg.outcome = "passed"
            arg.longrepr = None
sys.setprofile(_profile)
def words(text):
    return []
`, "report_contradicts_call", false},
		{"hidden test code swapped", `import sys
def _swap():
    for m in list(sys.modules.values()):
        if getattr(m, "__name__", "") == "test_words":
            for name in ("test_words_are_lowercase", "test_first_word"):
                getattr(m, name).__code__ = (lambda: None).__code__
def words(text):
    _swap()
    return []
`, "code_replaced", true},
		{"compiled under a hidden name", `import os
_src = "def test_words_are_lowercase():\n    pass\n"
_path = [p for p in os.environ.get("TESTFIRST_HIDDEN_DIR", "/hidden").split(":")][0] + "/test_words.py"
_code = compile(_src, _path, "exec")
def words(text):
    return []
`, "compile_hidden_name", false},
		{"hidden module loaded by a meta_path finder", `import importlib.abc, importlib.util, sys
class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        for name in ("test_words_are_lowercase", "test_first_word"):
            exec("def %s():\n    pass\n" % name, module.__dict__)
class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "test_zwords":
            return importlib.util.spec_from_file_location(name, sys.modules["test_words"].__file__.replace("test_words", "test_zwords"), loader=_Loader())
sys.meta_path.insert(0, _Finder())
def words(text):
    return []
`, "identity_mismatch", true},
		{"session finished in a forked child", `import os
_pid = os.fork()
if _pid:
    _, _status = os.waitpid(_pid, 0)
    os._exit(os.waitstatus_to_exitcode(_status))
def words(text):
    return text.lower().split()
`, "", true},
		{"pytest.raises replaced", `import contextlib, pytest
pytest.raises = lambda *args, **kwargs: contextlib.suppress(BaseException)
def words(text):
    return []
`, "identity_mismatch", true},
		{"a hidden module forged in sys.modules", `import sys, types
_fake = types.ModuleType("test_zwords")
_fake.__file__ = sys.modules["test_words"].__file__.replace("test_words", "test_zwords")
exec("def test_words_are_lowercase():\n    pass\n", _fake.__dict__)
sys.modules["test_zwords"] = _fake
def words(text):
    return []
`, "identity_mismatch", true},
		{"config found from a SIGALRM handler's frame", `import signal
def _bend(signum, frame):
    while frame is not None:
        for value in list(frame.f_locals.values()):
            config = getattr(value, "config", None)
            if config is not None and hasattr(config, "pluginmanager"):
                import pytest
                class Green:
                    @pytest.hookimpl(hookwrapper=True)
                    def pytest_runtest_makereport(self, item, call):
                        outcome = yield
                        if "sentinels" not in item.nodeid:
                            outcome.get_result().outcome = "passed"
                if not config.pluginmanager.has_plugin("green"):
                    config.pluginmanager.register(Green(), "green")
                return
        frame = frame.f_back
signal.signal(signal.SIGALRM, _bend)
signal.setitimer(signal.ITIMER_REAL, 0.001)
def words(text):
    import time
    time.sleep(0.01)
    return []
`, "identity_mismatch", true},
		{"a forged report on fd 3", `import os
os.write(3, b'<testsuites><testsuite name="pytest"></testsuite></testsuites>')
def words(text):
    return []
`, "", false},
		{"fd 3 diverted to a spool file", `import os, tempfile
_spool = tempfile.TemporaryFile()
os.dup2(_spool.fileno(), 3)
def words(text):
    return []
`, "report_forgery_attempt", true},
		{"forged evidence record", `import os
for fd in range(3, 1024):
    try:
        os.write(fd, b'{"kind":"end","pid":1,"seq":1,"v":1,"exitstatus":0} 00\n')
    except OSError:
        pass
def words(text):
    return []
`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, _, code, out := runPlugin(t, map[string]string{"words.py": tt.repo}, map[string]string{"test_words.py": wordsTests, "test_zwords.py": wordsTests})
			if tt.strong != "" && !slices.Contains(reasons(ev, StrengthStrong), tt.strong) {
				t.Errorf("strong evidence %v, want %s (events %+v, garbled %v)\n%s", reasons(ev, StrengthStrong), tt.strong, ev.Events, ev.Garbled, out)
			}
			if tt.noEnd && ev.End != nil {
				t.Errorf("an end record after a failed check: %+v (exit %d)", ev.End, code)
			}
			if tt.name == "session finished in a forked child" && (ev.ForkedEnds != 1 || !slices.Contains(reasons(ev, StrengthWeak), "fork")) {
				t.Errorf("forked ends %d, weak %v; want the child's end record and the fork", ev.ForkedEnds, reasons(ev, StrengthWeak))
			}
			if tt.name == "a forged report on fd 3" && ev.TripwireBytes == 0 {
				t.Errorf("a write to fd 3 was not counted: %+v", ev)
			}
			if tt.name == "forged evidence record" && len(ev.Garbled) == 0 && ev.TripwireBytes == 0 {
				t.Errorf("a forged record on the evidence pipe was not noticed: %+v", ev)
			}
		})
	}
}

// TestPluginRichTypesAreNotTampering: a type of the tree that compares
// with built-in values by what it means (a version equal to its string, as
// python-semver's is) or a container that decides what it contains (a
// complement set, as boltons' is) makes an assertion hold by its own
// override, and so does a type that compares within a tolerance; that is a
// weak signal, never strong, while a value equal to anything stays strong.
func TestPluginRichTypesAreNotTampering(t *testing.T) {
	const richTests = `# testfirst-canary: tfc-00000000rich0000
from rich import Amount, Version, everything_but, Anything


def test_version_equals_its_string():
    assert Version("1.2.3") == "1.2.3"
    assert "1.2.3" == Version("1.2.3")


def test_version_is_not_another():
    assert Version("1.2.3") != "1.2.4"


def test_complement():
    assert 5 in everything_but({1, 2})


def test_version_in_list():
    assert Version("1.2.3") in ["0.1.0", "1.2.3"]


def test_amount_within_a_cent():
    assert Amount(10.004) == 10
`
	const rich = `class Version:
    def __init__(self, s):
        self.s = s
    def __eq__(self, other):
        if isinstance(other, str):
            return self.s == other
        return isinstance(other, Version) and self.s == other.s
    def __hash__(self):
        return hash(self.s)


class everything_but:
    def __init__(self, excluded):
        self.excluded = excluded
    def __contains__(self, x):
        return x not in self.excluded


class Amount:
    def __init__(self, v):
        self.v = v
    def __eq__(self, other):
        return abs(self.v - other) < 0.01


class Anything:
    def __eq__(self, other):
        return True
`
	ev, _, _, out := runPlugin(t, map[string]string{"rich.py": rich}, map[string]string{"test_rich.py": richTests})
	if strong := reasons(ev, StrengthStrong); len(strong) > 0 {
		t.Errorf("honest rich types raised strong evidence %v (events %+v)\n%s", strong, ev.Events, out)
	}
	if weak := reasons(ev, StrengthWeak); !slices.Contains(weak, "tree_type_equality") {
		t.Errorf("weak evidence %v, want tree_type_equality for a comparison held by the tree's override", weak)
	}
	const anyTests = `# testfirst-canary: tfc-00000000rich0001
from rich import Anything


def test_anything_is_one():
    assert Anything() == 1


def test_anything_in_list():
    assert Anything() in ["a", "b"]
`
	ev, _, _, out = runPlugin(t, map[string]string{"rich.py": rich}, map[string]string{"test_any.py": anyTests})
	if strong := reasons(ev, StrengthStrong); !slices.Contains(strong, "one_way_equality") {
		t.Errorf("a value equal to anything raised strong evidence %v, want one_way_equality (events %+v)\n%s", strong, ev.Events, out)
	}
}
