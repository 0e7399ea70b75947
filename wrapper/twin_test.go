package wrapper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// generate runs the twin generator on root as the wrapper would and
// returns its map.
func generate(t *testing.T, root string, apply bool, seed string, exclude []string) *TwinMap {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("no %s: %v", hostPython, err)
	}
	in, _ := json.Marshal(map[string]any{"root": root, "apply": apply, "seed": seed, "exclude": exclude})
	cmd := exec.Command(hostPython, "-I", "-S", "-c", twinScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("twin generator: %v: %s", err, stderr.String())
	}
	m := &TwinMap{}
	if err := json.Unmarshal(out, m); err != nil {
		t.Fatalf("twin map %q: %v", out, err)
	}
	return m
}

// twinCase is one small hidden test, the implementation that makes it
// pass, and the kind of twin it must get ("" when it must stay untwinnable,
// with why).
type twinCase struct {
	name string
	impl string
	test string
	kind string
	why  string
}

var twinCases = []twinCase{
	{name: "int", impl: "def f(): return 3", test: "def test_it():\n    assert f() == 3\n", kind: "literal"},
	{name: "int_left", impl: "def f(): return 3", test: "def test_it():\n    r = f()\n    assert 3 == r, 'three'\n", kind: "literal"},
	{name: "negative", impl: "def f(): return -4", test: "def test_it():\n    assert f() == -4\n", kind: "literal"},
	{name: "hex", impl: "def f(): return 255", test: "def test_it():\n    assert f() == 0xFF\n", kind: "literal"},
	{name: "zero", impl: "def f(): return 0", test: "def test_it():\n    assert f() == 0\n", kind: "literal"},
	{name: "float", impl: "def f(): return 2.5", test: "def test_it():\n    assert f() == 2.5\n", kind: "literal"},
	{name: "float_zero", impl: "def f(): return 0.0", test: "def test_it():\n    assert f() == 0.0\n", kind: "literal"},
	{name: "string", impl: "def f(): return 'a\\nb!'", test: "def test_it():\n    assert f() == \"a\\nb!\"\n", kind: "literal"},
	{name: "bytes", impl: "def f(): return b'xyz'", test: "def test_it():\n    assert f() == b'xyz'\n", kind: "literal"},
	{name: "implicit_concat", impl: "def f(): return 'abcdef'", test: "def test_it():\n    assert f() == ('abc'  # first\n                   'def')\n", kind: "literal"},
	{name: "bool", impl: "def f(): return True", test: "def test_it():\n    assert f() is True\n", kind: "literal"},
	{name: "list", impl: "def f(): return [1, 'two', (3.0, None)]", test: "def test_it():\n    assert f() == [1, 'two', (3.0, None)]\n", kind: "literal"},
	{name: "dict", impl: "def f(): return {'a': 1, 'b': 2}", test: "def test_it():\n    assert f() == {'a': 1, 'b': 2}\n", kind: "literal"},
	{name: "set", impl: "def f(): return {1, 2, 3}", test: "def test_it():\n    assert f() == {1, 2, 3}\n", kind: "literal"},
	{name: "approx", impl: "def f(): return 0.1 + 0.2", test: "import pytest\n\n\ndef test_it():\n    assert f() == pytest.approx(0.3)\n", kind: "literal"},
	{name: "approx_big_int", impl: "def f(): return 1000000", test: "from pytest import approx\n\n\ndef test_it():\n    assert f() == approx(1000000)\n", kind: "literal"},
	{name: "unittest_equal", impl: "def f(): return 5", test: "import unittest\n\n\nclass TestIt(unittest.TestCase):\n    def test_it(self):\n        self.assertEqual(f(), 5)\n", kind: "literal"},
	{name: "parametrize", impl: "def f(a): return a * 2", test: "import pytest\n\n\n@pytest.mark.parametrize('a, expected', [(1, 2), (3, 6), pytest.param(5, 10, id='five')])\ndef test_it(a, expected):\n    assert f(a) == expected\n", kind: "parametrize"},
	{name: "raises", impl: "def f(): raise KeyError('k')", test: "import pytest\n\n\ndef test_it():\n    with pytest.raises(KeyError):\n        f()\n        assert f() == 1\n", kind: "raises"},
	{name: "raises_match", impl: "def f(): raise ValueError('bad value')", test: "import pytest\n\n\ndef test_it():\n    with pytest.raises(ValueError, match='bad'):\n        f()\n", kind: "raises"},
	{name: "unittest_raises", impl: "def f(): raise ZeroDivisionError()", test: "import unittest\n\n\nclass TestIt(unittest.TestCase):\n    def test_it(self):\n        with self.assertRaises(ArithmeticError):\n            f()\n", kind: "raises"},
	{name: "truthy", impl: "def f(): return [1]", test: "def test_it():\n    assert f()\n", kind: "negation"},
	{name: "not", impl: "def f(): return []", test: "def test_it():\n    assert not f()\n", kind: "negation"},
	{name: "boolop", impl: "def f(): return 1", test: "def test_it():\n    assert f() and f() > 0\n", kind: "negation"},
	{name: "empty_list", impl: "def f(): return []", test: "def test_it():\n    assert f() == []\n", kind: "negation"},
	{name: "is_instance", impl: "def f(): return {}", test: "def test_it():\n    assert type(f()) is dict\n", kind: "negation"},
	{name: "in", impl: "def f(): return 'hello'", test: "def test_it():\n    assert 'ell' in f()\n", kind: "negation"},
	{name: "fstring", impl: "def f(): return 'x1'", test: "def test_it():\n    n = 1\n    assert f() == f'x{n}'\n", kind: "negation"},
	{name: "unittest_true", impl: "def f(): return True", test: "import unittest\n\n\nclass TestIt(unittest.TestCase):\n    def test_it(self):\n        self.assertTrue(f())\n", kind: "negation"},
	{name: "param_used_twice", impl: "def f(a): return a", test: "import pytest\n\n\n@pytest.mark.parametrize('a,expected', [(1, 1)])\ndef test_it(a, expected):\n    print(expected)\n    assert f(a) == expected\n", kind: "negation"},
	{name: "after_return", impl: "def f(): return 3", test: "def test_it():\n    if f() > 0:\n        return\n    assert f() == 3\n", why: "no assertion certain to run that can be changed"},
	{name: "in_loop", impl: "def f(i): return i", test: "def test_it():\n    for i in range(3):\n        assert f(i) == i\n", why: "no assertion certain to run that can be changed"},
	{name: "only_raises_user_error", impl: "class MyError(Exception): pass\ndef f(): raise MyError()", test: "import pytest\nfrom impl import MyError\n\n\ndef test_it():\n    with pytest.raises(MyError):\n        f()\n", why: "no assertion certain to run that can be changed"},
	{name: "shadowed_builtin", impl: "def f(): raise KeyError()", test: "import pytest\nValueError = KeyError\n\n\ndef test_it():\n    with pytest.raises(ValueError):\n        f()\n", why: "no assertion certain to run that can be changed"},
	{name: "decorated", impl: "import functools\ndef retry(fn):\n    @functools.wraps(fn)\n    def w(*a):\n        return fn(*a)\n    return w\ndef f(): return 1", test: "from impl import retry\n\n\n@retry\ndef test_it():\n    assert f() == 1\n", why: "decorated with retry"},
	{name: "xfail", impl: "def f(): return 1", test: "import pytest\n\n\n@pytest.mark.xfail\ndef test_it():\n    assert f() == 1\n", why: "decorated with pytest.mark.xfail"},
	{name: "no_assert", impl: "def f(): return 1", test: "def test_it():\n    f()\n", why: "no assertion certain to run that can be changed"},
}

// writeCases writes each case as hidden/test_<name>.py (importing f from
// impl) and impl/impl.py holding every implementation in its own module.
func writeCases(t *testing.T, dir string, cases []twinCase) (hidden, impls string) {
	t.Helper()
	hidden, impls = filepath.Join(dir, "hidden"), filepath.Join(dir, "impl")
	for _, c := range cases {
		pkg := filepath.Join(impls, c.name)
		mustWrite(t, filepath.Join(pkg, "impl.py"), c.impl+"\n")
		mustWrite(t, filepath.Join(hidden, "test_"+c.name+".py"), "# testfirst-canary: tfc-0123456789abcdef\nimport sys\nsys.path.insert(0, "+pyQuote(pkg)+")\nsys.modules.pop('impl', None)\nfrom impl import *\n\n\n"+c.test)
	}
	return hidden, impls
}

func pyQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func mustWrite(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// outcomes runs pytest on dir and returns each test's outcome by file.
func outcomes(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(hostPython, "-I", "-B", "-m", "pytest", "-q", "-rA", "--tb=no", "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", dir, dir)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(PASSED|FAILED|ERROR) (\S+?)::(\S+)`).FindAllStringSubmatch(string(out), -1) {
		got[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m[2]), "test_"), ".py")+"::"+m[3]] = m[1]
	}
	if len(got) == 0 {
		t.Fatalf("pytest reported nothing:\n%s", out)
	}
	return got
}

// TestTwinGenerator checks the twin of each case: its kind, that only the
// changed span differs from the original, and that the implementation that
// passes the original fails every twin, over several seeds.
func TestTwinGenerator(t *testing.T) {
	if _, err := exec.Command(hostPython, "-c", "import pytest").CombinedOutput(); err != nil {
		t.Skipf("no pytest for %s: %v", hostPython, err)
	}
	for _, seed := range []string{"seed-1", "seed-2", "seed-3", "seed-4"} {
		t.Run(seed, func(t *testing.T) {
			dir := t.TempDir()
			hidden, _ := writeCases(t, dir, twinCases)
			orig := outcomes(t, hidden)
			originals := map[string][]byte{}
			for _, c := range twinCases {
				originals[c.name], _ = os.ReadFile(filepath.Join(hidden, "test_"+c.name+".py"))
			}
			m := generate(t, hidden, true, seed, nil)
			if len(m.Errors) > 0 || m.Error != "" {
				t.Fatalf("generator errors: %v %s", m.Errors, m.Error)
			}
			twins := outcomes(t, hidden)
			byFile := map[string]Twin{}
			for _, tw := range m.Twins {
				byFile[strings.TrimSuffix(strings.TrimPrefix(tw.File, "test_"), ".py")] = tw
			}
			whyOf := map[string]string{}
			for _, u := range m.Untwinnable {
				file, _, _ := strings.Cut(u.ID, "::")
				whyOf[strings.TrimSuffix(strings.TrimPrefix(file, "test_"), ".py")] = u.Why
			}
			for _, c := range twinCases {
				data, _ := os.ReadFile(filepath.Join(hidden, "test_"+c.name+".py"))
				tw, twinned := byFile[c.name]
				for id, o := range orig {
					if strings.HasPrefix(id, c.name+"::") && o != "PASSED" {
						t.Errorf("%s: the original %s did not pass with its implementation: %s", c.name, id, o)
					}
				}
				if c.kind == "" {
					if twinned {
						t.Errorf("%s: twinned (%+v), want untwinnable: %s", c.name, tw, c.why)
					} else if whyOf[c.name] != c.why {
						t.Errorf("%s: untwinnable because %q, want %q", c.name, whyOf[c.name], c.why)
					}
					if !bytes.Equal(data, originals[c.name]) {
						t.Errorf("%s: untwinnable file changed:\n%s", c.name, data)
					}
					continue
				}
				if !twinned {
					t.Errorf("%s: untwinnable (%s), want a %s twin", c.name, whyOf[c.name], c.kind)
					continue
				}
				if tw.Kind != c.kind {
					t.Errorf("%s: twin kind %s (%s), want %s", c.name, tw.Kind, tw.Change, c.kind)
				}
				if tw.ID != tw.File+"::test_it" && tw.ID != tw.File+"::TestIt::test_it" {
					t.Errorf("%s: twin id %s", c.name, tw.ID)
				}
				if bytes.Equal(data, originals[c.name]) {
					t.Errorf("%s: the twin file is the original", c.name)
				}
				checkOneSpan(t, c.name, originals[c.name], data)
				for id, o := range twins {
					if strings.HasPrefix(id, c.name+"::") && o == "PASSED" {
						t.Errorf("%s: the implementation passes the twin %s (%s):\n%s", c.name, id, tw.Change, data)
					}
				}
			}
		})
	}
}

// checkOneSpan checks that twin differs from orig in one contiguous span
// (or, for a parametrized test, only on the decorator's line).
func checkOneSpan(t *testing.T, name string, orig, twin []byte) {
	t.Helper()
	ol, tl := strings.Split(string(orig), "\n"), strings.Split(string(twin), "\n")
	if len(ol) != len(tl) {
		t.Errorf("%s: the twin has %d lines, the original %d", name, len(tl), len(ol))
		return
	}
	var changed []int
	for i := range ol {
		if ol[i] != tl[i] {
			changed = append(changed, i)
		}
	}
	if len(changed) != 1 {
		t.Errorf("%s: lines %v changed, want one:\n%s", name, changed, twin)
	}
}

// TestTwinGeneratorWithoutApply checks that a run without twins keeps
// every byte and still reports the map the same way.
func TestTwinGeneratorWithoutApply(t *testing.T) {
	dir := t.TempDir()
	hidden, _ := writeCases(t, dir, twinCases)
	before := readAll(t, hidden)
	m := generate(t, hidden, false, "seed-1", nil)
	if after := readAll(t, hidden); !mapsEqual(before, after) {
		t.Errorf("the files changed without apply")
	}
	if len(m.Twins) == 0 {
		t.Errorf("no twins reported")
	}
	// The same seed makes the same twins.
	again := generate(t, hidden, false, "seed-1", nil)
	if !slices.Equal(m.Twins, again.Twins) {
		t.Errorf("the same seed made other twins:\n%+v\n%+v", m.Twins, again.Twins)
	}
	ex := generate(t, hidden, false, "seed-1", []string{"test_int.py::test_it"})
	if !slices.Contains(ex.Untwinnable, Untwinnable{ID: "test_int.py::test_it", Why: "excluded"}) {
		t.Errorf("excluded test not reported excluded: %+v", ex.Untwinnable)
	}
	for _, tw := range ex.Twins {
		if tw.ID == "test_int.py::test_it" {
			t.Errorf("excluded test twinned: %+v", tw)
		}
	}
}

func readAll(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			out[p] = string(data)
		}
		return nil
	})
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTwinsOfTheSample makes the twins of the sample project's hidden tests
// and runs them on the reference implementation: every one must fail,
// while every original passes.
func TestTwinsOfTheSample(t *testing.T) {
	if _, err := exec.Command(hostPython, "-c", "import pytest").CombinedOutput(); err != nil {
		t.Skipf("no pytest for %s: %v", hostPython, err)
	}
	sample := filepath.Join("..", "test", "testdata", "sample")
	for _, seed := range []string{"a", "b", "c"} {
		t.Run(seed, func(t *testing.T) {
			dir := t.TempDir()
			repo, hidden := filepath.Join(dir, "repo"), filepath.Join(dir, "hidden")
			copyDir(t, filepath.Join(sample, "base"), repo)
			copyDir(t, filepath.Join(sample, "hidden"), hidden)
			patch, err := os.ReadFile(filepath.Join(sample, "reference.patch"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("patch", "-s", "-p1", "-d", repo)
			cmd.Stdin = bytes.NewReader(patch)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("patch: %v: %s", err, out)
			}
			run := func() map[string]string {
				cmd := exec.Command(hostPython, "-I", "-B", "-m", "pytest", "-q", "-rA", "--tb=no", "-p", "no:cacheprovider", "-c", "/dev/null", "--rootdir", hidden, hidden)
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "PYTHONPATH="+repo)
				out, _ := cmd.CombinedOutput()
				got := map[string]string{}
				for _, m := range regexp.MustCompile(`(?m)^(PASSED|FAILED|ERROR) (\S+)`).FindAllStringSubmatch(string(out), -1) {
					got[m[2]] = m[1]
				}
				return got
			}
			// -I drops PYTHONPATH: put the repo on the path from the tests.
			for _, f := range []string{"tests/test_wordstats.py", "tests/test_bigrams.py"} {
				p := filepath.Join(hidden, f)
				data, _ := os.ReadFile(p)
				mustWrite(t, p, "import sys; sys.path.insert(0, "+pyQuote(repo)+")\n"+string(data))
			}
			orig := run()
			if len(orig) != 10 {
				t.Fatalf("original outcomes %v, want 10", orig)
			}
			for id, o := range orig {
				if o != "PASSED" {
					t.Errorf("original %s: %s with the reference", id, o)
				}
			}
			m := generate(t, hidden, true, seed, nil)
			if len(m.Twins) != 8 || len(m.Untwinnable) != 0 {
				t.Errorf("twins %+v, untwinnable %+v, want all 8 test functions twinned", m.Twins, m.Untwinnable)
			}
			literal := 0
			for _, tw := range m.Twins {
				if tw.Kind == "literal" || tw.Kind == "parametrize" {
					literal++
				}
			}
			if literal < 6 {
				t.Errorf("%d literal twins, want at least 6: %+v", literal, m.Twins)
			}
			twins := run()
			if len(twins) != 10 {
				t.Fatalf("twin outcomes %v, want 10", twins)
			}
			for id, o := range twins {
				if o == "PASSED" {
					t.Errorf("the reference passes the twin %s", id)
				}
			}
		})
	}
}

// TestTwinOfExpectedDict: a parametrized expected dict gets every value
// changed, so a result whose equality with a dict reads only some keys
// (a version that ignores its build part, as semver's does) still fails
// the twin of every case while passing the original.
func TestTwinOfExpectedDict(t *testing.T) {
	needPytest(t)
	dir := t.TempDir()
	for name, src := range map[string]string{
		"ver.py": "class V:\n    def __init__(self, major, minor, build=None):\n        self.t = (major, minor)\n        self.build = build\n\n" +
			"    def __eq__(self, other):\n        if isinstance(other, dict):\n            other = V(**other)\n        return self.t == other.t\n\n\n" +
			"def parse(text):\n    core, _, build = text.partition('+')\n    a, b = core.split('.')\n    return V(int(a), int(b), build or None)\n",
		"test_ver.py": "import pytest\n\nfrom ver import parse\n\n\n" +
			"@pytest.mark.parametrize('text,expected', [('1.2+b1', {'major': 1, 'minor': 2, 'build': 'b1'}), ('3.4', {'major': 3, 'minor': 4, 'build': None})])\n" +
			"def test_parse(text, expected):\n    assert parse(text) == expected\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := outcomes(t, dir)
	for seed := range 8 {
		twin := t.TempDir()
		copyDir(t, dir, twin)
		m := generate(t, twin, true, fmt.Sprint("seed-", seed), nil)
		if len(m.Twins) != 1 {
			t.Fatalf("twins %+v, untwinnable %+v", m.Twins, m.Untwinnable)
		}
		after := outcomes(t, twin)
		for id, o := range before {
			if o != "PASSED" {
				t.Fatalf("original %s %s", id, o)
			}
			if after[id] != "FAILED" {
				t.Errorf("seed %d: twin of %s %s (%s), want FAILED", seed, id, after[id], m.Twins[0].Change)
			}
		}
	}
}
