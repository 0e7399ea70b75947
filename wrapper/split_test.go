package wrapper

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// runSplitLocally runs hidden against repo split on the host's Debian
// python, both sides as this uid (the uids are the wrapper's part; this
// is the protocol's): the tree's process with its socket on fd 3, pytest
// with the JUnit report on fd 3, the split report on fd 4 and the socket
// on fd 5, as runSplit lays them out.
func runSplitLocally(t *testing.T, hidden, repo string) (map[string]string, SplitReport, string) {
	t.Helper()
	needPytest(t)
	py, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	trusted, treeEnd := os.NewFile(uintptr(pair[0]), "trusted"), os.NewFile(uintptr(pair[1]), "tree")
	defer trusted.Close()
	tree := exec.Command(hostPython, "-I", filepath.Join(py, TreeModule+".py"), "3", "", repo)
	tree.Dir = repo
	tree.ExtraFiles = []*os.File{treeEnd}
	var treeOut strings.Builder
	tree.Stdout, tree.Stderr = &treeOut, &treeOut
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	treeEnd.Close()
	defer tree.Process.Kill()

	junitR, junitW, _ := os.Pipe()
	repR, repW, _ := os.Pipe()
	argv := SplitCommand()
	// The host's plugins come from this checkout, not the image.
	argv[4] = strings.Replace(argv[4], "sys.path.append(", "sys.path[:0] = ["+`"`+py+`"`+"]; sys.path.append(", 1)
	argv = append(argv[:len(argv)-1], hidden)
	for i, a := range argv {
		if a == "--rootdir" {
			argv[i+1] = hidden
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = repo
	cmd.Env = append(baseEnv(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "TESTFIRST_SPLIT_FD=5", "TESTFIRST_SPLIT_REPORT_FD=4", "TESTFIRST_SPLIT_HIDDEN="+hidden)
	cmd.ExtraFiles = []*os.File{junitW, repW, trusted}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	junitW.Close()
	repW.Close()
	trusted.Close()
	junitData := make(chan []byte)
	go func() { b, _ := io.ReadAll(junitR); junitData <- b }()
	repData, _ := io.ReadAll(repR)
	cmd.Wait()
	var sr SplitReport
	if err := json.Unmarshal(repData, &sr); err != nil {
		t.Fatalf("split report %q: %v\noutput:\n%s\ntree:\n%s", repData, err, out.String(), treeOut.String())
	}
	var suite struct {
		Cases []struct {
			Class   string    `xml:"classname,attr"`
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(<-junitData, &suite); err != nil {
		t.Fatalf("JUnit report: %v\noutput:\n%s", err, out.String())
	}
	outcomes := map[string]string{}
	for _, c := range suite.Cases {
		o := "passed"
		switch {
		case c.Failure != nil:
			o = "failed"
		case c.Error != nil:
			o = "error"
		case c.Skipped != nil:
			o = "skipped"
		}
		outcomes[c.Class+"::"+c.Name] = o
	}
	return outcomes, sr, out.String()
}

// TestSplitHonestShapes runs honest tests of the shapes real suites use
// split, and checks each gets the outcome it gets in-process: pytest.raises
// of a tree exception with its attributes, isinstance and len of tree
// objects, enum identity and class iteration, dataclass equality (decided
// by the tree, and recorded), capsys of what the tree prints (also from a
// thread), a str subclass, callbacks (also from worker threads and a
// pool), an assertion inside a callback, monkeypatch of a tree module,
// caplog and pytest.warns of the tree's logging and warnings, tmp_path
// files the tree reads, a forking tree, unittest classes with a skipped
// method, an object whose honest __eq__ takes a list, and a unittest
// class of the tests on an assertion mixin of the tree's (recorded as the
// tree's say), a handle of an object whose class sets __iter__ = None
// (not iterable through __getitem__, toolz's isiterable), and the shapes
// the split refuses, each refusal recorded with what was refused. Two wrong answers, an __eq__ that says True to anything and
// a wrong answer through the mixin fail.
func TestSplitHonestShapes(t *testing.T) {
	hidden, _ := filepath.Abs("testdata/split/hidden")
	repoSrc, _ := filepath.Abs("testdata/split/repo")
	// The tree's process writes bytecode next to the tree: a copy.
	repo := t.TempDir()
	copyDir(t, repoSrc, repo)
	outcomes, sr, out := runSplitLocally(t, hidden, repo)
	wantFailed := map[string]bool{
		"test_honest::test_callback_assert_fails": true,
		"test_honest::test_wrong":                 true,
		"test_honest::test_cheat_is_caught":       true,
		// Equality answers that beat the decoys before (the first three
		// passed): an answer of 1 skipped them, an object that keeps the
		// first value it is compared with refused every decoy asked
		// after it, a tree object as the answer (true by default) was
		// never checked; and one whose truth is false while the decoys
		// are asked and true after, which a check that took the truth
		// apart from the test's own would let pass.
		"test_honest::test_cheat_truthy":          true,
		"test_honest::test_cheat_remembers":       true,
		"test_honest::test_cheat_object":          true,
		"test_honest::test_cheat_flips":           true,
		"test_honest.TestMixin::test_mixin_fails": true,
		// What the split refuses (its per-test fallback grades these
		// in-process when the base needs the same).
		"test_honest::test_refused_globals":   true,
		"test_honest::test_refused_traceback": true,
		"test_honest::test_refused_dict":      true,
		"test_honest::test_refused_setitem":   true,
		"test_honest::test_refused_frame":     true,
		// A context manager of the tree that says it swallowed a failed
		// assertion: the assertion goes on.
		"test_honest::test_tree_context_manager_keeps_a_failed_assertion": true,
	}
	if len(outcomes) < 25 {
		t.Fatalf("%d test cases reported, want the 27 of test_honest.py:\n%s", len(outcomes), out)
	}
	for id, o := range outcomes {
		want := "passed"
		switch {
		case wantFailed[id]:
			want = "failed"
		case strings.HasSuffix(id, "::test_skip"):
			want = "skipped"
		}
		if o != want {
			t.Errorf("%s %s, want %s", id, o, want)
		}
	}
	if sr.Broken != "" {
		t.Errorf("the channel broke: %s", sr.Broken)
	}
	if d := sr.Tests["test_honest.py::test_dataclass"]; len(d) != 1 {
		t.Errorf("the dataclass comparison is not recorded as the tree's decision: %v", d)
	}
	if d := sr.Tests["test_honest.py::test_tree_context_manager_keeps_a_failed_assertion"]; len(d) != 1 {
		t.Errorf("a tree context manager's try to swallow a failed assertion is not recorded: %v", d)
	}
	if d := sr.Tests["test_honest.py::test_slug"]; len(d) != 0 {
		t.Errorf("comparing a str the tree returned is recorded as its decision: %v", d)
	}
	if d := sr.Tests["test_honest.py::test_cheat_is_caught"]; d["__eq__ accepts values other than the expected one"] != 1 {
		t.Errorf("an __eq__ that says True to anything is not named: %v", d)
	}
	if d := sr.Tests["test_honest.py::TestMixin::test_mixin"]; d["used assertSlug, inherited from wordstats.stats.Asserts, a class of the code under test"] != 1 {
		t.Errorf("an assertion helper the test inherits from the tree is not recorded as the tree's say: %v", d)
	}
	// Each refusal is recorded against its test, with what was refused;
	// tests the split ran as they needed (a random.Random handed to the
	// tree, a hasattr probe of what a function lacks) have none.
	refused := map[string]string{
		"test_honest.py::test_refused_globals":   "the code under test asked for `__globals__` of a function of the tests",
		"test_honest.py::test_refused_traceback": "the tests handed the code under test a traceback of the tests",
		"test_honest.py::test_refused_dict":      "the code under test asked for `__dict__` of a `test_honest.Counter` object of the tests",
		"test_honest.py::test_refused_setitem":   "the code under test asked for item assignment of a `test_honest.Registry` object of the tests",
		"test_honest.py::test_refused_frame":     "the code under test took its caller's frame (sys._getframe), which would have been the test's",
	}
	for id, why := range refused {
		if !slices.Contains(sr.Refused[id], why) {
			t.Errorf("%s: refusals %q, want %q among them", id, sr.Refused[id], why)
		}
	}
	for id, whys := range sr.Refused {
		if _, ok := refused[id]; !ok {
			t.Errorf("%s: refused %q, which the split gives", id, whys)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// TestSplitDecoderFuzz feeds the trusted side's decoder mutated values, as
// a hostile tree would send them: whatever comes, it returns a value or
// raises ProtocolError (which breaks the channel), never anything else,
// and never takes long.
func TestSplitDecoderFuzz(t *testing.T) {
	needPytest(t)
	py, _ := filepath.Abs("python")
	script := `
import json, os, random, socket, struct, sys, time
a, b = socket.socketpair()
hello = json.dumps({"t": "hello"}).encode()
b.sendall(struct.pack(">I", len(hello)) + hello)
os.environ["TESTFIRST_SPLIT_FD"] = str(a.fileno())
os.set_inheritable(a.fileno(), True)
import testfirst_split as ts
ch = ts._channel
rng = random.Random(int(sys.argv[2]))
TAGS = ["i", "f", "c", "y", "ba", "t", "l", "s", "fs", "d", "bt", "k", "r", "sub", "x", "h", "std", "mut", "zz"]
def junk(depth=0):
    r = rng.random()
    if depth > 6 or r < 0.2:
        return rng.choice([None, True, False, 0, -1, 1.5, "", "x" * rng.randint(0, 50), [], {}, "1" * 30, ["i"], ["i", "zz"], ["i", "-"], ["f", "nan"], ["f", "1e999"], ["y", "!!"], ["bt", "KeyboardInterrupt"], ["bt", "print"], ["h", 10**9], ["r", 1, ["k", 2]], ["std", "fraction", ["1", "0"]], ["std", "range", ["0", "0", "0"]], ["std", "date", "2020-13-45"], ["std", "timedelta", [10**12, 0, 0]], ["std", "path", "\x00"], ["x", ["bt", "ValueError"], ["t", []], 1, ""]])
    tag = rng.choice(TAGS)
    n = rng.randint(0, 4)
    return [tag] + [junk(depth + 1) for _ in range(n)]
def deep(n):
    v = None
    for _ in range(n):
        v = ["l", [v]]
    return v
cases = [deep(250), deep(5000), ["l", [None] * 10], ["d", [[["l", []], None]]], ["s", [["l", []]]]]
cases += [junk() for _ in range(int(sys.argv[3]))]
bad = []
for v in cases:
    t0 = time.perf_counter()
    try:
        ch.dec(v)
    except ts.ProtocolError:
        ch.broken = None
    except BaseException as e:
        bad.append("%r -> %s: %s" % (v, type(e).__name__, str(e)[:200]))
    if time.perf_counter() - t0 > 1:
        bad.append("%r took %.1fs" % (v, time.perf_counter() - t0))
print(json.dumps(bad[:20]))
`
	cmd := exec.Command(hostPython, "-I", "-c", "import sys; sys.path[:0] = ["+`"`+py+`"`+"]; exec(sys.argv[1])", script, "1", "20000")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var bad []string
	if err := json.Unmarshal(out[strings.LastIndexByte(strings.TrimSpace(string(out)), '\n')+1:], &bad); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, b := range bad {
		t.Errorf("decoder: %s", b)
	}
}

// handOverScript drives the tree side's Server.wait on one end of a socket
// pair with two waiting threads, x and w: x holds the read lock, blocked on
// the socket, when w's frame arrives, so x reads it and hands it to w's box
// (one whose put is slow, as a thread switch at that moment makes it). w
// must get its frame while no other frame comes: in a tree whose last
// callback was w's, none would.
const handOverScript = `
import json, queue, socket, struct, sys, threading, time
sys.path.insert(0, sys.argv[1])
import testfirst_tree as tt

class SlowBox:
    def __init__(self): self.q = queue.Queue()
    def get_nowait(self): return self.q.get_nowait()
    def get(self, timeout=None): return self.q.get(timeout=timeout)
    def put(self, m):
        time.sleep(0.5)
        self.q.put(m)

ours, theirs = socket.socketpair()
srv = tt.Server(ours)
bx, bw = SlowBox(), SlowBox()
srv.mail[1], srv.mail[2] = bx, bw
got = {}
def waiter(name, box): got[name] = srv.wait(box)["c"]
def frame(m):
    d = json.dumps(m).encode()
    theirs.sendall(struct.pack(">I", len(d)) + d)
tx = threading.Thread(target=waiter, args=("x", bx), daemon=True); tx.start()
while not srv.read_lock.locked():
    time.sleep(0.01)
tw = threading.Thread(target=waiter, args=("w", bw), daemon=True); tw.start()
time.sleep(0.3)
frame({"t": "cbret", "c": 2, "v": None})
tw.join(3)
w_alone = not tw.is_alive()
frame({"t": "cbret", "c": 1, "v": None})
tx.join(3); tw.join(3)
print(json.dumps({"w_alone": w_alone, "got": got}))
`

// TestTreeHandsFramesOverBeforeLettingGo: a thread of the tree that reads
// another's frame off the socket puts it in that thread's box before it
// lets the read lock go. Handed over after, the other thread could take
// the lock, find its box empty and wait on the socket for a frame already
// read: a pool of the tree calling back into the tests hung so, an honest
// shape graded as a timeout (make test, 2026-12-07).
func TestTreeHandsFramesOverBeforeLettingGo(t *testing.T) {
	py, err := filepath.Abs("python")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(hostPython, "-I", "-c", handOverScript, py).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res struct {
		WAlone bool           `json:"w_alone"`
		Got    map[string]int `json:"got"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !res.WAlone {
		t.Errorf("w's frame, read by x, reached w only when another frame came: %s", out)
	}
	if res.Got["x"] != 1 || res.Got["w"] != 2 {
		t.Errorf("frames went to %v; want x 1, w 2", res.Got)
	}
}
