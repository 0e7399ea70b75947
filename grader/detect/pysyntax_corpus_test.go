package detect

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPythonSyntaxOnACorpus compares CheckPythonSyntax with the
// interpreter on every Python file under TESTFIRST_PYSYNTAX_CORPUS, a
// folder of real projects' sources (scripts/pysyntax-corpus.sh builds one
// from fetched repositories). It needs that folder, so make test leaves it
// out: it measures, on code nobody here wrote, that the check refuses
// nothing the interpreter compiles.
func TestCheckPythonSyntaxOnACorpus(t *testing.T) {
	root := os.Getenv("TESTFIRST_PYSYNTAX_CORPUS")
	if root == "" {
		t.Skip("TESTFIRST_PYSYNTAX_CORPUS names no folder of Python sources")
	}
	var files []string
	var sources [][]byte
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".py") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files = append(files, p)
			sources = append(sources, data)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("read %s: %d Python files, %v", root, len(files), err)
	}
	verdicts := compileAll(t, "python3", sources)
	var refused, checked int
	for i, src := range sources {
		got := CheckPythonSyntax(src)
		if got != nil {
			checked++
			if verdicts[i].OK {
				t.Errorf("%s compiles but the check says %v", files[i], got)
			}
		}
		if !verdicts[i].OK {
			refused++
		}
	}
	t.Logf("%d files: the interpreter refuses %d, the check %d", len(files), refused, checked)
}
