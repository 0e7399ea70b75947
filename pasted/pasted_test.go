package pasted

import (
	"strings"
	"testing"
)

// The base's test file, public in the repository.
const baseTests = `import pytest

from slugkit import slugify, Options


def test_plain_words():
    assert slugify("Hello World") == "hello-world"


def test_strips_punctuation():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("a.b.c") == "a-b-c"


class TestOptions:
    def test_custom_separator(self):
        opts = Options(separator="_")
        assert slugify("Hello World", opts) == "hello_world"
`

// The hidden version edits that file: the base's tests stay, two new
// tests come (one a method of the existing class).
const hiddenTests = baseTests + `

def test_transliterates_and_caps_length():
    """Non-ASCII letters become their ASCII neighbours before the cut."""
    opts = Options(max_length=12, transliterate=True)
    result = slugify("Crème Brûlée à la carte", opts)
    assert result == "creme-brulee"
    assert len(result) <= opts.max_length
    # the cut never leaves a separator at the end
    assert not result.endswith(opts.separator)
    for word in ("Ærøskøbing", "Straße"):
        assert slugify(word, opts).isascii()


@pytest.mark.parametrize("text, expected", [
    ("  leading and trailing  ", "leading-and-trailing"),
    ("many   inner   spaces", "many-inner-spaces"),
    ("tabs\tand\nnewlines", "tabs-and-newlines"),
])
def test_collapses_whitespace_runs(text, expected):
    opts = Options(separator="-", lowercase=True)
    assert slugify(text, opts) == expected
    assert "--" not in slugify(text + "  " + text, opts)
`

var baseFiles = [][]byte{
	[]byte(baseTests),
	[]byte("# slugkit\n\n```python\nfrom slugkit import slugify\nslugify(\"Hello World\")  # 'hello-world'\n```\n"),
	[]byte("def slugify(text, options=None):\n    options = options or Options()\n    words = text.split()\n    return options.separator.join(w.lower() for w in words)\n"),
}

func index(t *testing.T) *Index {
	t.Helper()
	ix := NewIndex([]Hidden{{Label: "v1", Path: "tests/test_slug.py", Source: hiddenTests}}, NewBase(baseFiles, Default), Default)
	if ix.Empty() {
		t.Fatal("the hidden tests add nothing to the base")
	}
	return ix
}

// Honest text must not match: quoting the base's own tests, a traceback,
// a snippet that calls the same API, a different test of the same
// function.
func TestHonestShapesDoNotMatch(t *testing.T) {
	ix := index(t)
	honest := map[string]string{
		"an issue quoting the base's existing tests": "This test already passes, so the behaviour is there:\n\n```python\n" +
			baseTests[strings.Index(baseTests, "def test_strips"):] + "```\nBut accents are dropped, not transliterated.",
		"a maintainer's traceback": "Running it on main gives:\n\n```\nTraceback (most recent call last):\n  File \"/src/slugkit/core.py\", line 41, in slugify\n" +
			"    result = options.separator.join(words)[: options.max_length]\n  File \"/src/slugkit/options.py\", line 12, in __init__\n" +
			"    raise TypeError(f\"unexpected option {name!r}\")\nTypeError: unexpected option 'transliterate'\n```\nWe need the option first.",
		"a snippet using the same API": "I tried\n\n```python\nfrom slugkit import slugify, Options\nopts = Options(max_length=12, transliterate=True)\n" +
			"print(slugify(\"Crème Brûlée\", opts))\nprint(len(slugify(\"Crème Brûlée à la carte\", opts)))\n```\nand got `crme-brle` and 9.",
		"a different test of the same function": "Here is how I'd test it:\n\n```python\ndef test_german_sharp_s():\n" +
			"    opts = Options(transliterate=True)\n    assert slugify(\"Große Straße\", opts) == \"grosse-strasse\"\n" +
			"    assert slugify(\"Maß\", opts) == \"mass\"\n    assert slugify(\"\", opts) == \"\"\n```\n",
		"prose about the tests": "The hidden tests check transliteration and the length cap, and whitespace runs. " +
			"Please make sure `slugify` collapses tabs and newlines too, and never ends with a separator.",
	}
	for name, text := range honest {
		if ms := ix.Find(text); len(ms) > 0 {
			t.Errorf("%s: matched %v", name, ms)
		}
	}
}

// hiddenTest returns one hidden test's source by name.
func hiddenTest(t *testing.T, name string) string {
	t.Helper()
	for _, u := range Tests(hiddenTests) {
		if u.Name == name {
			return u.Source
		}
	}
	t.Fatalf("no hidden test %s", name)
	return ""
}

// A hidden test pasted with edits must match, and say which test.
func TestPastedHiddenTestsMatch(t *testing.T) {
	ix := index(t)
	translit := hiddenTest(t, "test_transliterates_and_caps_length")
	ws := hiddenTest(t, "test_collapses_whitespace_runs")
	renamed := strings.NewReplacer("test_transliterates_and_caps_length", "test_it", "opts", "o", "result", "r", "word", "w").Replace(translit)
	black := `def test_collapses_whitespace_runs(text, expected):
    opts = Options(
        separator="-",
        lowercase=True,
    )
    assert (
        slugify(
            text,
            opts,
        )
        == expected
    )
    assert "--" not in slugify(
        text + "  " + text,
        opts,
    )
`
	compact := "def t(a,b):\n o=Options(separator='-',lowercase=True)\n assert slugify(a,o)==b\n assert '--' not in slugify(a+'  '+a,o)\n"
	lines := strings.Split(translit, "\n")
	half := strings.Join(lines[len(lines)/2:], "\n")
	attacks := map[string]struct{ text, test string }{
		"verbatim in a fence":    {"Should pass:\n```python\n" + translit + "```", "test_transliterates_and_caps_length"},
		"inline, no fence":       {"try " + translit + " thanks", "test_transliterates_and_caps_length"},
		"renamed":                {"```py\n" + renamed + "```", "test_transliterates_and_caps_length"},
		"quoted in a reply":      {"> " + strings.ReplaceAll(renamed, "\n", "\n> ") + "\n\nAgreed.", "test_transliterates_and_caps_length"},
		"black-style":            {"```python\n" + black + "```", "test_collapses_whitespace_runs"},
		"compact and renamed":    {compact, "test_collapses_whitespace_runs"},
		"half a function":        {"the end of it:\n```\n" + half + "```", "test_transliterates_and_caps_length"},
		"parametrize cases only": {"```\n" + ws[:strings.Index(ws, "def ")] + "```", "test_collapses_whitespace_runs"},
	}
	for name, a := range attacks {
		ms := ix.Find(a.text)
		found := false
		for _, m := range ms {
			if m.Path == "tests/test_slug.py" && m.Label == "v1" && m.Test == a.test && m.Matched > 0 && m.FirstLine > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want a match of %s, got %v", name, a.test, ms)
		}
	}
}

// Where a match is: the lines of the text its shingles start on.
func TestMatchSaysWhere(t *testing.T) {
	ix := index(t)
	translit := hiddenTest(t, "test_transliterates_and_caps_length")
	text := "line one\nline two\n```python\n" + translit + "```\n"
	ms := ix.Find(text)
	if len(ms) != 1 {
		t.Fatalf("want one match, got %v", ms)
	}
	m := ms[0]
	if m.FirstLine < 4 || m.LastLine > 4+strings.Count(translit, "\n") || m.Matched > m.Of {
		t.Errorf("match %v: lines or counts wrong", m)
	}
	if s := m.String(); !strings.Contains(s, "tests/test_slug.py::test_transliterates_and_caps_length") || strings.Contains(s, "Crème") {
		t.Errorf("String() = %q: want the test's name and no test text", s)
	}
}

// A hidden file that only carries the base's content adds nothing.
func TestBaseContentNeverMatches(t *testing.T) {
	ix := NewIndex([]Hidden{{Label: "v1", Path: "tests/test_slug.py", Source: baseTests}}, NewBase(baseFiles, Default), Default)
	if !ix.Empty() {
		t.Fatalf("a hidden file equal to the base's has new shingles: %+v", ix.files)
	}
	if ms := ix.Find(baseTests); len(ms) > 0 {
		t.Errorf("the base's tests matched: %v", ms)
	}
}

// A hidden file's small helper (a mapping's dunder method: a few new
// shingles) is not matched alone: an issue thread that writes the same
// three lines, as a real cachetools thread did against a toolz test's
// CustomMapping.__contains__, is not a pasted test. The helper's file
// still counts when the text holds the tests around it too.
func TestSmallHelperAloneDoesNotMatch(t *testing.T) {
	const hidden = `from slugkit import slugify


class Registry:
    def __contains__(self, key):
        return key in self._slugs


def test_registry_remembers_every_slug_it_made():
    registry = Registry()
    registry._slugs = {slugify(word) for word in ("Crème", "Brûlée", "à la carte")}
    assert "creme" in registry and "brulee" in registry
    assert "a-la-carte" in registry and "carte" not in registry
`
	thread := "You could give the registry a membership test:\n\n```python\nclass Registry:\n    def __contains__(self, key):\n        return key in self._slugs\n```\n"
	ix := NewIndex([]Hidden{{Label: "v1", Path: "tests/test_registry.py", Source: hidden}}, NewBase(baseFiles, Default), Default)
	if ms := ix.Find(thread); len(ms) > 0 {
		t.Errorf("a three-line helper quoted alone matched: %+v", ms)
	}
	noFloor := Default
	noFloor.MinTest = 0
	loose := NewIndex([]Hidden{{Label: "v1", Path: "tests/test_registry.py", Source: hidden}}, NewBase(baseFiles, noFloor), noFloor)
	if ms := loose.Find(thread); len(ms) == 0 {
		t.Error("without MinTest the helper alone does not match either: the test checks nothing")
	}
	if ms := ix.Find("```python\n" + hidden + "```\n"); len(ms) == 0 {
		t.Error("the whole file pasted did not match")
	}
}

// Part of a hidden test, pasted, matches: three of its new shingles are
// enough once the test has six or more (and 12 % of them).
func TestHalfOfATestMatches(t *testing.T) {
	lines := strings.Split(hiddenTests[len(baseTests):], "\n")
	// The start of test_transliterates_and_caps_length: its def,
	// docstring and options (with 6 shingles needed, as before, it did
	// not match).
	var half []string
	for _, l := range lines {
		if strings.Contains(l, "result = slugify") {
			break
		}
		half = append(half, l)
	}
	if ms := index(t).Find(strings.Join(half, "\n")); len(ms) == 0 || ms[0].Test != "test_transliterates_and_caps_length" {
		t.Errorf("half of a test pasted: %+v", ms)
	}
}
