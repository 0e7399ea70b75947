package detect

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// zipOf returns a zip archive holding one file.
func zipOf(t *testing.T, name, data string) string {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	f, err := w.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(data))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tarOf returns a tar header block shaped like ustar's, with its magic at
// offset 257.
func tarOf(name string) string {
	h := make([]byte, 512)
	copy(h, name)
	copy(h[257:], "ustar\x0000")
	return string(h)
}

// TestTamperSignalsReadPython: the scan reads Python as Python does, so
// what the interpreter sees cannot hide behind an encoding, a normal form,
// whitespace, string literals or an archive under an innocent name.
func TestTamperSignalsReadPython(t *testing.T) {
	const getframe = "source mentions sys._getframe (can reach the caller's frames)"
	tests := []struct {
		name  string
		files []tree.File
		want  []report.TamperSignal
	}{
		{
			name:  "utf-7 source",
			files: []tree.File{detectorFile("wordstats/stats.py", "# -*- coding: utf-7 -*-\nimport sys\nf = sys.+AF8-getframe(1)\n")},
			want: []report.TamperSignal{
				{Path: "wordstats/stats.py", Reason: report.ReasonForeignEncoding},
				{Path: "wordstats/stats.py", Reason: getframe},
			},
		},
		{
			name: "coding lines",
			files: []tree.File{
				detectorFile("a.py", "# coding: latin-1\nx = 'caf\xe9'\n"),
				detectorFile("b.py", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nx = 'café'\n"),
				detectorFile("c.py", "# vim: set fileencoding=UTF_8 :\n"),
				detectorFile("d.py", "x = 1\n# coding: utf-7\n"),
				detectorFile("e.py", "# coding: no-such-codec\nimport sys\n"),
			},
			want: []report.TamperSignal{
				{Path: "a.py", Reason: report.ReasonForeignEncoding},
				{Path: "e.py", Reason: report.ReasonForeignEncoding},
				{Path: "e.py", Reason: report.ReasonUndecodable},
			},
		},
		{
			name:  "not utf-8",
			files: []tree.File{detectorFile("a.py", "x = '\xff\xfe'\n")},
			want:  []report.TamperSignal{{Path: "a.py", Reason: report.ReasonUndecodable}},
		},
		{
			name: "fullwidth identifiers",
			files: []tree.File{
				detectorFile("a.py", "import ｓｙｓ\nf = ｓｙｓ._ｇｅｔｆｒａｍｅ(1)\n"),
				detectorFile("b.py", "α = 1\nnaïve = 2\n"),
			},
			want: []report.TamperSignal{
				{Path: "a.py", Reason: report.ReasonNotNFKC},
				{Path: "a.py", Reason: getframe},
			},
		},
		{
			name: "spaces, continuations and imports",
			files: []tree.File{
				detectorFile("a.py", "import sys\nf = sys . _getframe(1)\n"),
				detectorFile("b.py", "import sys\nf = (sys\n     ._getframe)(1)\n"),
				detectorFile("c.py", "import sys\nf = sys.\\\n    _getframe(1)\n"),
				detectorFile("d.py", "from sys import _getframe as g\n"),
				detectorFile("e.py", "from os import (\n    path,\n    _exit,\n)\n"),
			},
			want: []report.TamperSignal{
				{Path: "a.py", Reason: getframe},
				{Path: "b.py", Reason: getframe},
				{Path: "c.py", Reason: getframe},
				{Path: "d.py", Reason: getframe},
				{Path: "e.py", Reason: "source mentions os._exit (can end the runner early)"},
			},
		},
		{
			name: "names in string literals",
			files: []tree.File{
				detectorFile("a.py", "import sys\nf = getattr(sys, '_getframe')(1)\n"),
				detectorFile("b.py", "f = getattr(__import__('s' 'ys'), '_get' + \"frame\")\n"),
				detectorFile("c.py", "m = __import__('\\x5fpy' + 'test')\n"),
				detectorFile("d.py", "m = __import__('ct' 'ypes')\n"),
				detectorFile("e.py", "p = '/hid' + 'den/tests'\n"),
			},
			want: []report.TamperSignal{
				{Path: "a.py", Reason: getframe},
				{Path: "b.py", Reason: getframe},
				{Path: "c.py", Reason: "source mentions _pytest (pytest internals)"},
				{Path: "d.py", Reason: "source mentions ctypes (can call into the C library)"},
				{Path: "e.py", Reason: "source mentions /hidden (the hidden tests' directory)"},
			},
		},
		{
			name: "honest words stay quiet",
			files: []tree.File{
				detectorFile("a.py", "import sys\nprint(sys.version, 'frame', 'get')\nstack = []\nstack.append(1)\n"),
				detectorFile("b.py", "def run_pytest():\n    return 'exit'\n"),
				detectorFile("c.py", "s = '''\nmulti\nline'''\nb = rb'\\x00'\n"),
			},
		},
		{
			name: "archives and binaries by their magic bytes",
			files: []tree.File{
				detectorFile("wordstats/data.txt", zipOf(t, "evil.py", "import _pytest\n")),
				detectorFile("wheels/x-1.0-py3-none-any.whl", zipOf(t, "x/__init__.py", "")),
				detectorFile("wordstats/words.py", zipOf(t, "__main__.py", "")),
				detectorFile("tail.bin", "junk before the archive"+zipOf(t, "a.py", "")),
				detectorFile("tool.dat", "\x7fELF\x02\x01\x01"),
				detectorFile("notes", "\x1f\x8b\x08\x00"),
				detectorFile("cache.bin", "\xa7\x0d\x0d\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
				detectorFile("backup", tarOf("a.py")),
				detectorFile("pkg/_speed.so", "\x7fELF"),
				detectorFile("README.md", "PK is a word\n"),
				detectorFile("broken.zip", "PK\x03\x04 not really"),
			},
			want: []report.TamperSignal{
				{Path: "backup", Reason: "tar archive: its content is not scanned"},
				{Path: "broken.zip", Reason: "zip archive that could not be read whole: its members are not all scanned"},
				{Path: "broken.zip", Reason: "zip archive: Python can import code from it whatever its name"},
				{Path: "cache.bin", Reason: "compiled python bytecode: it can hide code a reviewer cannot read"},
				{Path: "notes", Reason: "gzip data: its content is not scanned"},
				{Path: "pkg/_speed.so", Reason: "native .so module runs code a reviewer cannot read"},
				{Path: "tail.bin", Reason: "zip archive: Python can import code from it whatever its name"},
				{Path: "tool.dat", Reason: "ELF binary: native code a reviewer cannot read"},
				{Path: "wheels/x-1.0-py3-none-any.whl", Reason: "zip archive: Python can import code from it whatever its name"},
				{Path: "wordstats/data.txt", Reason: "source mentions _pytest (pytest internals)"},
				{Path: "wordstats/data.txt", Reason: "zip archive: Python can import code from it whatever its name"},
				{Path: "wordstats/words.py", Reason: unscanned},
				{Path: "wordstats/words.py", Reason: "zip archive: Python can import code from it whatever its name"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TamperSignals(detectorTree(t, tt.files...), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TamperSignals() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTamperSignalsHiddenNames: a file of the tree that pytest could import
// in place of a hidden test module is flagged.
func TestTamperSignalsHiddenNames(t *testing.T) {
	hidden := detectorTree(t,
		detectorFile("tests/test_wordstats.py", "def test_a():\n    pass\n"),
		detectorFile("tests/test_bigrams.py", "def test_b():\n    pass\n"),
		detectorFile("tests/helpers.py", "X = 1\n"),
		detectorFile("tests/__init__.py", ""),
	)
	tree := detectorTree(t,
		detectorFile("tests/test_wordstats.py", "def test_mine():\n    pass\n"),
		detectorFile("test_bigrams.py", ""),
		detectorFile("lib/test_bigrams/__init__.py", ""),
		detectorFile("lib/test_bigrams/impl.py", ""),
		detectorFile("native/test_wordstats.cpython-311-x86_64-linux-gnu.so", ""),
		detectorFile("tests/__init__.py", ""),
		detectorFile("tests/helpers.py", ""),
		detectorFile("tests/test_existing.py", ""),
		detectorFile("test_bigrams_extra.py", ""),
		detectorFile("docs/test_wordstats.md", ""),
	)
	const named = "named like a hidden test module: it can be imported in its place"
	const pkg = "package with the import name of a hidden test package: it can be imported in its place"
	want := []report.TamperSignal{
		{Path: "lib/test_bigrams/__init__.py", Reason: named},
		{Path: "lib/test_bigrams/impl.py", Reason: named},
		{Path: "native/test_wordstats.cpython-311-x86_64-linux-gnu.so", Reason: named},
		{Path: "native/test_wordstats.cpython-311-x86_64-linux-gnu.so", Reason: "native .so module runs code a reviewer cannot read"},
		{Path: "test_bigrams.py", Reason: named},
		{Path: "tests/__init__.py", Reason: pkg},
		{Path: "tests/test_wordstats.py", Reason: "has the path of a hidden test file"},
		{Path: "tests/test_wordstats.py", Reason: named},
	}
	if diff := cmp.Diff(want, TamperSignals(tree, hidden)); diff != "" {
		t.Errorf("TamperSignals() mismatch (-want +got):\n%s", diff)
	}
	if got := TamperSignals(tree, nil); strings.Contains(cmp.Diff(nil, got), named) {
		t.Errorf("without hidden tests nothing is named like one: %v", got)
	}
}

// FuzzReadPython: reading any bytes as Python never panics and always
// gives valid UTF-8 to match patterns in.
func FuzzReadPython(f *testing.F) {
	for _, s := range []string{"# coding: utf-7\n+AF8-", "x = '\\", "'''", "from . import (a as b, c)", "ｓｙｓ . _getframe", "r'\\x5f' + b'\\u0041'"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := readPython(data)
		for _, v := range append([]string{src.text}, src.views...) {
			if !utf8.ValidString(v) {
				t.Fatalf("readPython(%q) gives invalid UTF-8 %q", data, v)
			}
		}
	})
}

// FuzzTamperSignals: any content, as a source or as a data file, is
// scanned without a panic.
func FuzzTamperSignals(f *testing.F) {
	var zb bytes.Buffer
	w := zip.NewWriter(&zb)
	m, _ := w.Create("a.py")
	m.Write([]byte("import _pytest\n"))
	w.Close()
	for _, s := range []string{zb.String(), "PK\x05\x06", "\x7fELF", "# coding: utf-7\n+AF8-"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := tree.New([]tree.File{{Path: "a.py", Mode: 0o644, Data: data}, {Path: "b.dat", Mode: 0o644, Data: data}})
		if err != nil {
			t.Skip()
		}
		TamperSignals(tree, tree)
	})
}
