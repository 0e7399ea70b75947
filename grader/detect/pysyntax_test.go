package detect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPythonSyntax(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"honest", "import os\n\n\ndef test_a():\n    assert os.sep\n", 0, ""},
		{"unittest class with a skip", "import unittest\n\n\nclass T(unittest.TestCase):\n    @unittest.skip('later')\n    def test_a(self):\n        self.assertEqual(1, 1)\n", 0, ""},
		{"brackets across lines", "x = [\n    1,\n  2,\n]\nif x:\n    pass\n", 0, ""},
		{"continuation", "x = 1 + \\\n        2\n", 0, ""},
		{"f-strings", "x = f\"{a!r:>{w}} {b['k']} {{}} {c:%Y-%m} {d=}\"\ny = f'''{\n  e\n}'''\n", 0, ""},
		{"a backslash before a field", "x = rf\"\\{c}\" if c in r\"\\^-][\" else f'\\{c}'\n", 0, ""},
		{"a continuation before the first token is not judged", "class A:\n\\\n    pass\n\nclass B:\n  \\\n    pass\n", 0, ""},
		{"template strings (Python 3.14)", "x = t'{\nX\n!r\n}'\ny = Rt\"{a} {{b}}\"\n", 0, ""},
		{"a nested quote (Python 3.12) is not judged", "x = f\"{d[\"k\"]}\"\n", 0, ""},
		{"non-ASCII names and strings", "café = '“quoted”'\nπ = 3.14  # ‘comment’\n", 0, ""},
		{"CRLF and a BOM", "\ufeffdef f():\r\n    return 1\r\n", 0, ""},
		{"tabs throughout", "if x:\n\tif y:\n\t\tpass\n", 0, ""},
		{"a coding line for another encoding is not judged", "# -*- coding: latin-1 -*-\nx = '\xe9'\n    y\n", 0, ""},
		{"class body on its line", "class A: pass\nif x: y = {1:\n  2}\n", 0, ""},

		{"missing colon", "def test_a()\n    assert f()\n", 1, "expected ':'"},
		{"missing colon after else", "if x:\n    pass\nelse\n    pass\n", 3, "expected ':'"},
		{"an indent after a one-line body", "if x: y = 1\n    z = 2\n", 2, "unexpected indent"},
		{"unclosed call", "def test_a():\n    assert f(1 == 1\n\ndef test_b():\n    pass\n", 2, "'(' was never closed"},
		{"unterminated string", "def test_a():\n    assert f() == 'abc\n", 2, "unterminated string literal (detected at line 2)"},
		{"unterminated docstring", "def test_a():\n    \"\"\"Says.\n    assert 1\n", 2, "unterminated triple-quoted string literal (detected at line 3)"},
		{"mismatched bracket", "x = [1, 2)\n", 1, "closing parenthesis ')' does not match opening parenthesis '['"},
		{"unmatched", "x = 1)\n", 1, "unmatched ')'"},
		{"no block", "def test_a():\nx = 1\n", 2, "expected an indented block after line 1"},
		{"no block at the end", "def test_a():\n", 2, "expected an indented block after line 1"},
		{"bad unindent", "if x:\n        a\n    b\n", 3, "unindent does not match any outer indentation level"},
		{"tabs and spaces", "if x:\n        a\n\tb\n", 3, "inconsistent use of tabs and spaces in indentation"},
		{"typographic quote", "assert f() == “a”\n", 1, "invalid character '“' (U+201C)"},
		{"no-break space", "x =\u00a01\n", 1, "invalid non-printable character U+00A0"},
		{"dollar", "x = $y\n", 1, "invalid syntax"},
		{"after a continuation", "x = 1 \\ 2\n", 1, "unexpected character after line continuation character"},
		{"single brace", "x = f'a } b'\n", 1, "f-string: single '}' is not allowed"},
		{"null byte", "x = 1\ny = 2\x00\n", 2, "source code cannot contain null bytes"},
		{"not UTF-8", "x = 1\ny = '\xe9'\n", 2, "Non-UTF-8 code starting with '\\xe9', but no encoding declared"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CheckPythonSyntax([]byte(c.src))
			if c.msg == "" {
				if got != nil {
					t.Fatalf("an error in a source Python accepts: %v", got)
				}
				return
			}
			if got == nil || got.Line != c.line || got.Msg != c.msg {
				t.Fatalf("got %v, want line %d: %s", got, c.line, c.msg)
			}
		})
	}
}

// TestCheckPythonSyntaxAgreesWithPython: CheckPythonSyntax must never
// refuse what Python compiles. Every Python file of this machine's Python
// installation, and mutants of a sample of them (a character deleted or
// added, a line's indentation changed, a colon dropped, a quote pasted in),
// are compiled by the interpreter; each file the check refuses must be one
// the interpreter refuses too. The share of refused mutants the check
// catches is logged.
func TestCheckPythonSyntaxAgreesWithPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed to compare with (make deps installs it)")
	}
	var files []string
	for _, root := range []string{"/usr/lib/python3", "/usr/lib/python3.11", "/usr/lib/python3.12", "/usr/lib/python3.13"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") && d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 200 {
		t.Fatalf("%d Python files found under /usr/lib: too few to compare with", len(files))
	}
	var sources [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err == nil && len(data) < 1<<20 {
			sources = append(sources, data)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	originals := len(sources)
	for i := 0; i < 4000; i++ {
		src := sources[rng.IntN(originals)]
		if len(src) == 0 {
			continue
		}
		sources = append(sources, mutate(rng, src))
	}
	verdicts := compileAll(t, python, sources)

	var caught, rejected, lineAgrees int
	for i, src := range sources {
		got := CheckPythonSyntax(src)
		v := verdicts[i]
		if got != nil && v.OK {
			name := "a mutant"
			if i < originals {
				name = files[i]
			}
			t.Errorf("%s compiles but the check says %v:\n%s", name, got, excerpt(src, got.Line))
		}
		if !v.OK && i >= originals {
			rejected++
			if got != nil {
				caught++
				if got.Line == v.Line {
					lineAgrees++
				} else if os.Getenv("PYSYNTAX_SHOW_LINES") != "" {
					t.Logf("line %d, Python's %d: %s", got.Line, v.Line, got.Msg)
				}
			}
		}
	}
	t.Logf("%d files and %d mutants compared; of the %d mutants Python refuses the check caught %d (%d on Python's line)",
		originals, len(sources)-originals, rejected, caught, lineAgrees)
	if caught*3 < rejected {
		t.Errorf("the check caught %d of %d refused mutants: fewer than a third", caught, rejected)
	}
}

// mutate returns src with one edit a hurried writer makes.
func mutate(rng *rand.Rand, src []byte) []byte {
	out := bytes.Clone(src)
	at := rng.IntN(len(out))
	lineStart := bytes.LastIndexByte(out[:at], '\n') + 1
	switch rng.IntN(7) {
	case 0: // a character deleted
		return append(out[:at:at], out[at+1:]...)
	case 1: // a bracket or quote added
		ins := []byte{"([{)]}'\""[rng.IntN(8)]}
		return append(out[:at:at], append(ins, out[at:]...)...)
	case 2: // a line indented by one more space
		return append(out[:lineStart:lineStart], append([]byte(" "), out[lineStart:]...)...)
	case 3: // a line's first indentation character removed
		if lineStart < len(out) && (out[lineStart] == ' ' || out[lineStart] == '\t') {
			return append(out[:lineStart:lineStart], out[lineStart+1:]...)
		}
		return out
	case 4: // a line-ending colon dropped
		if i := bytes.Index(out[at:], []byte(":\n")); i >= 0 {
			return append(out[:at+i:at+i], out[at+i+1:]...)
		}
		return out
	case 5: // a typographic quote pasted in
		return append(out[:at:at], append([]byte("“"), out[at:]...)...)
	default: // a tab for a space
		if i := bytes.IndexByte(out[at:], ' '); i >= 0 {
			out[at+i] = '\t'
		}
		return out
	}
}

type compiled struct {
	OK   bool `json:"ok"`
	Line int  `json:"line"`
}

// compileAll compiles each source with the interpreter, as a grade's
// collection would (compile of the file's bytes).
func compileAll(t *testing.T, python string, sources [][]byte) []compiled {
	t.Helper()
	const script = `
import json, sys, warnings
warnings.simplefilter("ignore")
out = []
for line in sys.stdin:
    src = bytes.fromhex(line.strip())
    try:
        compile(src, "t.py", "exec", dont_inherit=True)
        out.append({"ok": True, "line": 0})
    except (SyntaxError, ValueError) as e:
        out.append({"ok": False, "line": getattr(e, "lineno", 0) or 0})
json.dump(out, sys.stdout)
`
	var in bytes.Buffer
	w := bufio.NewWriter(&in)
	for _, s := range sources {
		fmt.Fprintf(w, "%x\n", s)
	}
	w.Flush()
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var v []compiled
	if err := json.Unmarshal(out, &v); err != nil || len(v) != len(sources) {
		t.Fatalf("python3 answered %d verdicts for %d sources: %v", len(v), len(sources), err)
	}
	return v
}

func excerpt(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	lo, hi := max(0, line-3), min(len(lines), line+2)
	return strings.Join(lines[lo:hi], "\n")
}
