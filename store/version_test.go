package store

import (
	"strings"
	"testing"
)

// TestPushRefusesTestsPythonCannotCompile: a test module with a syntax
// error is refused at the push, saying which file and line and what is
// wrong, and uses up no version number: the corrected push is v1. A
// broken Python file a test only reads (a linter's fixture) is kept.
func TestPushRefusesTestsPythonCannotCompile(t *testing.T) {
	w, _ := openStore(t, privateFileBlobs(t), newKeys(t))
	broken := draft("writer-bot")
	broken.Files[0].Data = []byte("from calc import add\n\n\ndef test_add()\n    assert add(2, 3) == 5\n")
	_, err := w.Push(t.Context(), ticket, broken)
	for _, want := range []string{`file "tests/test_calc.py" line 4: expected ':'`, "nothing was stored"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("push of a test module with a syntax error: %v; want it to say %q", err, want)
		}
	}
	fixed := draft("writer-bot")
	fixed.Files = append(fixed.Files, File{Path: "tests/data/bad_syntax.py", Data: []byte("def f(\n")})
	v, err := w.Push(t.Context(), ticket, fixed)
	if err != nil {
		t.Fatalf("the corrected push, with a broken fixture file: %v", err)
	}
	if v.Number != 1 {
		t.Errorf("the corrected push is v%d, want v1: the refused push used a number", v.Number)
	}
}
