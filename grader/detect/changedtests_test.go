package detect

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/tree"
)

func mustTree(t *testing.T, files map[string]string) *tree.Tree {
	t.Helper()
	var fs []tree.File
	for p, s := range files {
		fs = append(fs, tree.File{Path: p, Mode: 0o644, Data: []byte(s)})
	}
	tr, err := tree.New(fs)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A pull request's rewrite of one test class changes that class's tests,
// not its neighbours' in the same module (more-itertools rewrote
// NumericRangeTests in a test_more.py of a thousand tests); an import
// added for new tests changes nothing; a changed table at the top level
// changes the whole module; a changed data file changes the tests beside
// and above it (tomli's tests/data read by tests/test_data.py), a changed
// conftest those at and below it only; at the root only root files count.
// A data file changes only the tests whose module names it.
func TestChangedTests(t *testing.T) {
	base := mustTree(t, map[string]string{
		"tests/test_more.py": "import pytest\n\nfrom lib import a\n\n\nclass RangeTests:\n    def test_hash(self):\n        assert hash(a(1)) == 1\n\n\n" +
			"class ExtractTests:\n    def test_extract(self):\n        assert a(2) == 2\n\n\n@pytest.mark.parametrize('x', [1])\ndef test_top(x):\n    assert x\n",
		"tests/test_table.py":          "EXPECTED = [1, 2]\n\n\ndef test_table():\n    assert EXPECTED\n",
		"toml/tests/data/valid/x.toml": "a = 1\n",
		"toml/test_t.py":               "def test_t():\n    pass\n",
		"toml/tests/test_data.py":      "import pathlib\n\nDATA = pathlib.Path(__file__).parent / \"data\"\n\n\ndef test_valid():\n    assert DATA\n",
		"toml/tests/test_other.py":     "def test_other():\n    pass\n",
		"tests/test_mixin.py":          mixinBase,
		"tests/unit/conftest.py":       "",
		"tests/unit/test_u.py":         "def test_u():\n    pass\n",
		"tests/other/test_o.py":        "def test_o():\n    pass\n",
		"test_root.py":                 "def test_root():\n    pass\n",
		"lib/__init__.py":              "def a(x):\n    return x\n",
	})
	edits := map[string]string{}
	for _, f := range base.Files {
		edits[f.Path] = string(f.Data)
	}
	edits["tests/test_more.py"] = "import pytest\nimport sys\nfrom lib import (\n    a,\n    b,\n)\n\n\nclass RangeTests:\n    def test_hash(self):\n        assert hash(a(1)) == 2\n\n\n" +
		"class ExtractTests:\n    def test_extract(self):\n        assert a(2) == 2\n\n\n@pytest.mark.parametrize('x', [1])\ndef test_top(x):\n    assert x\n\n\ndef test_new():\n    pass\n"
	edits["tests/test_table.py"] = "EXPECTED = [1, 3]\n\n\ndef test_table():\n    assert EXPECTED\n"
	edits["toml/tests/data/valid/x.toml"] = "a = 2\n"
	edits["tests/unit/conftest.py"] = "import pytest\n"
	edits["tests/test_mixin.py"] = strings.Replace(strings.Replace(mixinBase, "assert self.x == 1", "assert self.x == 2", 1), "self.y = 0", "self.y = 1", 1)
	edits["lib/__init__.py"] = "def a(x):\n    return x + 0\n"
	c := ChangedTestsOf(base, mustTree(t, edits))
	for id, want := range map[string]bool{
		"tests/test_more.py::RangeTests::test_hash":      true,
		"tests/test_more.py::ExtractTests::test_extract": false,
		"tests/test_more.py::test_top[1]":                false,
		"tests/test_table.py::test_table":                true,
		"toml/tests/test_data.py::test_valid":            true,
		"toml/test_t.py::test_t":                         false, // data below it that it does not name
		"toml/tests/test_other.py::test_other":           false,
		"tests/test_mixin.py::DictTest::test_attrs":      true,
		"tests/test_mixin.py::DictTest::test_other":      false,
		"tests/test_mixin.py::SetUpTest::test_one":       true,
		"tests/test_mixin.py::SetUpTest::test_two":       true,
		"tests/test_mixin.py::test_free":                 false,
		"tests/unit/test_u.py::test_u":                   true,
		"tests/other/test_o.py::test_o":                  false, // the conftest is in a sibling
		"test_root.py::test_root":                        false,
	} {
		if got := c.Changed(id); got != want {
			t.Errorf("Changed(%s) = %v, want %v (%+v)", id, got, want, c)
		}
	}
}

// mixinBase: a mixin's test method runs in every class that inherits it
// (cachetools' MethodDecoratorTestMixin); a class whose setUp changed has
// every test changed.
const mixinBase = `import unittest


class Mixin:
    def test_attrs(self):
        assert self.x == 1

    def test_other(self):
        assert True


class DictTest(unittest.TestCase, Mixin):
    x = 1


class SetUpTest(unittest.TestCase):
    def setUp(self):
        self.y = 0

    def test_one(self):
        assert self.y == 0

    def test_two(self):
        pass


def test_free():
    pass
`
