package wrapper

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostPython is the interpreter with pytest that the sentinel tests run
// hidden tests with, as the grader image does.
const hostPython = "/usr/bin/python3"

func needPytest(t *testing.T) {
	t.Helper()
	if err := exec.Command(hostPython, "-c", "import pytest").Run(); err != nil {
		t.Skipf("%s with pytest is needed: %v", hostPython, err)
	}
}

// copyDir copies the regular files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755)
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listHidden runs the wrapper's listing script on dir.
func listHidden(t *testing.T, dir string) ([]ExpectedTest, []ListedModule) {
	t.Helper()
	out, err := exec.Command(hostPython, "-I", "-c", listTestsScript, dir).Output()
	if err != nil {
		t.Fatalf("list_tests.py: %v", err)
	}
	var listed struct {
		Tests   []ExpectedTest `json:"tests"`
		Modules []ListedModule `json:"modules"`
		Errors  []string       `json:"errors"`
	}
	if err := json.Unmarshal(out, &listed); err != nil || len(listed.Errors) > 0 {
		t.Fatalf("list_tests.py: %v %v", err, listed.Errors)
	}
	return listed.Tests, listed.Modules
}

// junitOutcomes runs pytest on hidden with repo on the path, the way the
// grader's runner does, and returns each reported case's outcome by
// "classname::name".
func junitOutcomes(t *testing.T, hidden, repo string) map[string]string {
	t.Helper()
	report := filepath.Join(t.TempDir(), "junit.xml")
	cmd := exec.Command(hostPython, "-m", "pytest", "-q", "--noconftest", "-c", "/dev/null", "--rootdir", hidden,
		"-p", "no:cacheprovider", "--continue-on-collection-errors", "--junitxml="+report, hidden)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "PYTHONPATH="+repo, "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", "PYTHONDONTWRITEBYTECODE=1")
	out, _ := cmd.CombinedOutput()
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("pytest wrote no report: %v\n%s", err, out)
	}
	var doc struct {
		Cases []struct {
			Class   string    `xml:"classname,attr"`
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse report: %v", err)
	}
	got := map[string]string{}
	for _, c := range doc.Cases {
		o := "passed"
		switch {
		case c.Error != nil:
			o = "error"
		case c.Failure != nil:
			o = "failed"
		case c.Skipped != nil:
			o = "skipped"
		}
		got[c.Class+"::"+c.Name] = o
	}
	return got
}

// implementations of the sample's wordstats.stats, honest and not: a
// sentinel's outcome must be the same under every one of them.
var implementations = map[string]string{
	"stubs": "def frequencies(text):\n    raise NotImplementedError\n\ndef top_words(text, n=3):\n    raise NotImplementedError\n\ndef average_word_length(text):\n    raise NotImplementedError\n",
	"correct": `import collections, re
def _words(text):
    return re.findall(r"[a-z0-9]+", text.lower())
def frequencies(text):
    return dict(collections.Counter(_words(text)))
def top_words(text, n=3):
    return sorted(frequencies(text).items(), key=lambda p: (-p[1], p[0]))[:n]
def average_word_length(text):
    w = _words(text)
    return sum(map(len, w)) / len(w) if w else 0.0
def bigrams(text):
    w = _words(text)
    return list(zip(w, w[1:]))
`,
	"liars": `class Liar:
    __class__ = property(lambda self: int)
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): raise RuntimeError("no truth")
    def __repr__(self): raise RuntimeError("no repr")
    def __getattr__(self, name): raise SystemExit(0)
def frequencies(text): return Liar()
def top_words(text, n=3): return Liar()
def average_word_length(text): return Liar()
def bigrams(text): return Liar()
`,
	"runner-control": `import pytest, sys
def frequencies(text): pytest.skip("nothing to see")
def top_words(text, n=3): pytest.xfail("expected")
def average_word_length(text): raise SystemExit(0)
def bigrams(text): raise GeneratorExit
`,
}

// TestSentinelsInHiddenModules: the sentinels go into the hidden modules
// with their canaries, look like their neighbours, are not listed as hidden
// tests, and come out as they must under every implementation.
func TestSentinelsInHiddenModules(t *testing.T) {
	needPytest(t)
	hidden := t.TempDir()
	copyDir(t, filepath.Join("..", "test", "testdata", "sample", "hidden"), hidden)
	before := map[string][]byte{}
	for _, f := range []string{"tests/test_bigrams.py", "tests/test_wordstats.py"} {
		before[f], _ = os.ReadFile(filepath.Join(hidden, f))
	}
	expected, modules := listHidden(t, hidden)
	sentinels, err := writeSentinels(hidden, expected, modules)
	if err != nil {
		t.Fatalf("writeSentinels: %v", err)
	}
	if len(sentinels) != 2 || sentinels[0].MustPass == sentinels[1].MustPass {
		t.Fatalf("sentinels %+v: want one that must pass and one that must fail", sentinels)
	}
	for _, s := range sentinels {
		// Two hidden modules: the last in collection order never hosts.
		if s.ClassName != "tests.test_bigrams" {
			t.Errorf("sentinel %+v is not in the first hidden module", s)
		}
		if !strings.HasPrefix(s.Name, "test_bigrams_") {
			t.Errorf("sentinel name %s is not made of its neighbours' words", s.Name)
		}
	}
	after, _ := os.ReadFile(filepath.Join(hidden, "tests/test_bigrams.py"))
	if !bytes.HasPrefix(after, before["tests/test_bigrams.py"]) {
		t.Error("the hidden module was changed, not appended to")
	}
	if n := bytes.Count(after, []byte("stats.bigrams(")); n != 4 {
		t.Errorf("the sentinels do not call the code under test as their neighbours do (%d calls):\n%s", n, after)
	}
	if entries, _ := os.ReadDir(filepath.Join(hidden, "tests")); len(entries) != 2 {
		t.Errorf("sentinels made a file of their own: %v", entries)
	}
	relisted, _ := listHidden(t, hidden)
	for _, e := range expected {
		if !slices.ContainsFunc(relisted, func(r ExpectedTest) bool { return r.id() == e.id() }) {
			t.Errorf("hidden test %+v lost", e)
		}
	}
	if len(relisted) != len(expected)+2 {
		t.Errorf("listing after the sentinels has %d tests, want %d", len(relisted), len(expected)+2)
	}
	checkOutcomes(t, hidden, sentinels)
}

// TestSentinelsInTwoHosts: with three hidden modules the first two host
// sentinels, and they come out as they must there too.
func TestSentinelsInTwoHosts(t *testing.T) {
	needPytest(t)
	hidden := t.TempDir()
	copyDir(t, filepath.Join("..", "test", "testdata", "sample", "hidden"), hidden)
	os.WriteFile(filepath.Join(hidden, "tests", "test_zz_last.py"), []byte("from wordstats import stats\n\n\ndef test_last():\n    assert stats\n"), 0o644)
	expected, modules := listHidden(t, hidden)
	sentinels, err := writeSentinels(hidden, expected, modules)
	if err != nil {
		t.Fatalf("writeSentinels: %v", err)
	}
	hosts := map[string]int{}
	for _, s := range sentinels {
		hosts[s.ClassName]++
	}
	if want := map[string]int{"tests.test_bigrams": 2, "tests.test_wordstats": 2}; !maps.Equal(hosts, want) {
		t.Fatalf("sentinels per module %v, want %v", hosts, want)
	}
	checkOutcomes(t, hidden, sentinels)
}

// checkOutcomes runs the hidden tests under every implementation and checks
// that each sentinel comes out as it must.
func checkOutcomes(t *testing.T, hidden string, sentinels []Sentinel) {
	t.Helper()
	for name, impl := range implementations {
		t.Run(name, func(t *testing.T) {
			repo := t.TempDir()
			os.MkdirAll(filepath.Join(repo, "wordstats"), 0o755)
			os.WriteFile(filepath.Join(repo, "wordstats", "__init__.py"), nil, 0o644)
			os.WriteFile(filepath.Join(repo, "wordstats", "stats.py"), []byte(impl), 0o644)
			got := junitOutcomes(t, hidden, repo)
			for _, s := range sentinels {
				want := "failed"
				if s.MustPass {
					want = "passed"
				}
				if o := got[s.ClassName+"::"+s.Name]; o != want {
					t.Errorf("sentinel %s (must pass: %v) came out %q under an unbent runner", s.Name, s.MustPass, o)
				}
			}
		})
	}
}

// TestSentinelHosts: a module whose fixtures, marks or setup functions
// could change a sentinel's outcome does not host one; with no host left
// the sentinels get a module of their own, with a neighbour's canary line.
func TestSentinelHosts(t *testing.T) {
	needPytest(t)
	for name, src := range map[string]string{
		"fixture":     "import pytest\nfrom calc import add\n\n@pytest.fixture(autouse=True)\ndef env():\n    yield\n\ndef test_add():\n    r = add(1, 2)\n    assert r == 3\n",
		"pytestmark":  "import pytest\nfrom calc import add\npytestmark = pytest.mark.skip\n\ndef test_add():\n    r = add(1, 2)\n    assert r == 3\n",
		"setup":       "from calc import add\n\ndef setup_module():\n    add(0, 0)\n\ndef test_add():\n    r = add(1, 2)\n    assert r == 3\n",
		"star import": "from calc import *\n\ndef test_add():\n    r = add(1, 2)\n    assert r == 3\n",
		"rebinds":     "from calc import add\nisinstance = lambda a, b: False\n\ndef test_add():\n    r = add(1, 2)\n    assert r == 3\n",
	} {
		t.Run(name, func(t *testing.T) {
			hidden := t.TempDir()
			os.MkdirAll(filepath.Join(hidden, "tests"), 0o755)
			os.WriteFile(filepath.Join(hidden, "tests", "test_calc.py"), []byte("# testfirst-canary: tfc-0123456789abcdef\n"+src), 0o644)
			expected, modules := listHidden(t, hidden)
			if len(modules) != 1 || modules[0].Host {
				t.Fatalf("modules %+v: the module must not host sentinels", modules)
			}
			sentinels, err := writeSentinels(hidden, expected, modules)
			if err != nil {
				t.Fatal(err)
			}
			if len(sentinels) != 2 || sentinels[0].ClassName == "tests.test_calc" || !strings.HasPrefix(sentinels[0].ClassName, "tests.test_") {
				t.Fatalf("sentinels %+v: want a module of their own beside the hidden one", sentinels)
			}
			data, err := os.ReadFile(filepath.Join(hidden, strings.ReplaceAll(sentinels[0].ClassName, ".", "/")+".py"))
			if err != nil || !bytes.HasPrefix(data, []byte("# testfirst-canary: tfc-0123456789abcdef\n")) {
				t.Errorf("the sentinel module does not carry its neighbour's canary (%v):\n%s", err, data)
			}
		})
	}
}

// TestSentinelNameAlwaysFree: with a single word to make names of and that
// name taken, a free name is still found.
func TestSentinelNameAlwaysFree(t *testing.T) {
	taken := map[string]bool{"test_a": true, "test_a_a": true}
	name := sentinelName("", []string{"a"}, func(n string) bool { return taken[n] })
	if taken[name] || !strings.HasPrefix(name, "test_a") {
		t.Errorf("sentinelName = %q", name)
	}
}

// TestSentinelsBesideHookedConftest: a hidden conftest.py with an autouse
// fixture keeps the sentinels out of the modules below it; they go into a
// module of their own beside a hidden module it does not reach.
func TestSentinelsBesideHookedConftest(t *testing.T) {
	needPytest(t)
	hidden := t.TempDir()
	for p, src := range map[string]string{
		"hooked/conftest.py":   "import pytest\n\n@pytest.fixture(autouse=True)\ndef fail_everything():\n    raise RuntimeError('setup')\n",
		"hooked/test_a.py":     "def test_alpha_value():\n    assert True\n",
		"plain/test_b.py":      "def test_beta_value():\n    assert True\n",
		"plain/test_c_more.py": "import pytest\n\n@pytest.fixture\ndef f():\n    return 1\n\ndef test_gamma_value(f):\n    assert f\n",
	} {
		os.MkdirAll(filepath.Join(hidden, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(hidden, p), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	expected, modules := listHidden(t, hidden)
	for _, m := range modules {
		if m.Host && strings.HasPrefix(m.File, "hooked/") {
			t.Errorf("%s may host sentinels below a hooked conftest", m.File)
		}
		if m.Hooked != strings.HasPrefix(m.File, "hooked/") {
			t.Errorf("%s: hooked %v", m.File, m.Hooked)
		}
	}
	for range 20 {
		dir := t.TempDir()
		copyDir(t, hidden, dir)
		// Only plain/test_b.py can host; with one host the last-module
		// rule does not apply, so force the module of their own by
		// offering no host at all.
		var none []ListedModule
		for _, m := range modules {
			m.Host = false
			none = append(none, m)
		}
		sentinels, err := writeSentinels(dir, expected, none)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sentinels {
			if strings.HasPrefix(s.ClassName, "hooked.") {
				t.Fatalf("sentinel %+v beside a module a hooked conftest reaches", s)
			}
		}
	}
}

// TestSentinelsAmongManyHosts: with more host modules than sentinel hosts,
// the hosts are drawn among them (the draw once cut a slice with two
// independent random bounds and crashed the wrapper).
func TestSentinelsAmongManyHosts(t *testing.T) {
	needPytest(t)
	hidden := t.TempDir()
	for _, name := range []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"} {
		src := "def test_" + name + "_value():\n    assert True\n"
		if err := os.WriteFile(filepath.Join(hidden, "test_"+name+".py"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		dir := t.TempDir()
		copyDir(t, hidden, dir)
		expected, modules := listHidden(t, dir)
		sentinels, err := writeSentinels(dir, expected, modules)
		if err != nil {
			t.Fatal(err)
		}
		if len(sentinels) != 2*maxSentinelHosts {
			t.Fatalf("%d sentinels, want %d", len(sentinels), 2*maxSentinelHosts)
		}
	}
}
