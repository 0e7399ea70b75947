package test

import (
	"bufio"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// layoutRule is one row of DESIGN.md's Layout table: the packages of this
// module that the non-test Go files below dir may import. A folder may
// always import its own subpackages (and they it). An entry ending in
// "/..." allows that folder and everything below it; "..." allows anything.
type layoutRule struct {
	dir string
	may []string
}

// layoutRules are DESIGN.md's Layout table as it holds today.
var layoutRules = []layoutRule{
	{dir: "cmd/testfirst", may: []string{"app", "internal/bench"}},
	// Not in the table: this binary is the sandbox wrapper, a static
	// program that must not pull in the rest of testfirst.
	{dir: "cmd/testfirst-wrapper", may: []string{"grader/wrapper"}},
	{dir: "app", may: []string{"handlers", "github", "grader/...", "sandbox", "pipeline", "db", "jobs", "card"}},
	{dir: "pipeline"},
	{dir: "db", may: []string{"pipeline"}},
	{dir: "jobs", may: []string{"pipeline", "db", "github", "grader/...", "sandbox"}},
	{dir: "card", may: []string{"pipeline", "db", "github", "grader/...", "handlers"}},
	{dir: "internal/bench", may: []string{"app", "jobs", "db", "github", "grader", "handlers"}},
	{dir: "scripts"},
	// "app interfaces" in the table are interfaces handlers declares and
	// app satisfies: app imports handlers, never the other way.
	{dir: "handlers", may: []string{"github"}},
	{dir: "github"},
	{dir: "sandbox"},
	{dir: "grader", may: []string{"sandbox"}},
	{dir: "test", may: []string{"..."}},
}

// ruleFor returns the rule of the package in dir (relative to the module
// root, slash-separated): the one of the longest folder that holds it.
func ruleFor(dir string) (layoutRule, bool) {
	var found layoutRule
	ok := false
	for _, r := range layoutRules {
		if within(dir, r.dir) && len(r.dir) > len(found.dir) {
			found, ok = r, true
		}
	}
	return found, ok
}

// within reports whether dir is folder or below it.
func within(dir, folder string) bool {
	return dir == folder || strings.HasPrefix(dir, folder+"/")
}

// allows reports whether a package under r may import the module's
// package imp (relative to the module root).
func (r layoutRule) allows(imp string) bool {
	if within(imp, r.dir) {
		return true
	}
	for _, m := range r.may {
		switch {
		case m == "...":
			return true
		case strings.HasSuffix(m, "/..."):
			if within(imp, strings.TrimSuffix(m, "/...")) {
				return true
			}
		case imp == m:
			return true
		}
	}
	return false
}

// String says what the rule allows, for a failure message.
func (r layoutRule) String() string {
	if len(r.may) == 0 {
		return r.dir + " may import no other package of this module"
	}
	return r.dir + " may import only " + strings.Join(r.may, ", ")
}

func TestLayoutRule(t *testing.T) {
	tests := []struct {
		pkg, imp string
		want     bool
	}{
		{"cmd/testfirst", "app", true},
		{"cmd/testfirst", "app/db", false},
		{"cmd/testfirst", "grader", false},
		{"cmd/testfirst", "grader/store", false},
		{"cmd/testfirst", "sandbox", false},
		{"cmd/testfirst-wrapper", "grader/wrapper", true},
		{"cmd/testfirst-wrapper", "grader", false},
		{"app", "grader/store", true},
		{"pipeline", "github", false},
		{"db", "pipeline", true},
		{"app", "cmd/testfirst", false},
		{"app", "test/fakegithub", false},
		{"handlers", "github", true},
		{"handlers", "app", false},
		{"github", "grader", false},
		{"sandbox", "grader", false},
		{"grader", "sandbox", true},
		{"grader/store", "grader", true},
		{"grader", "grader/wrapper", true},
		{"grader", "github", false},
		{"grader/store", "app", false},
		{"test/testenv", "app", true},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+" imports "+tt.imp, func(t *testing.T) {
			r, ok := ruleFor(tt.pkg)
			if !ok {
				t.Fatalf("no rule for %s", tt.pkg)
			}
			if got := r.allows(tt.imp); got != tt.want {
				t.Errorf("%s: allows(%s) = %t, want %t", r, tt.imp, got, tt.want)
			}
		})
	}
	if _, ok := ruleFor("charts"); ok {
		t.Error("a folder outside the table has a rule")
	}
}

// TestLayoutImports parses every non-test Go file of the module and fails
// on an import of this module that DESIGN.md's Layout table does not
// allow, on a package no rule covers, and on a rule that covers no package.
// Test files are left out: tests may use anything, as test/ does.
func TestLayoutImports(t *testing.T) {
	root := testenv.RepoRoot()
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	imports, err := moduleImports(root, module)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, dir := range sortedKeys(imports) {
		r, ok := ruleFor(dir)
		if !ok {
			t.Errorf("package %s is in no row of DESIGN.md's Layout table: add it there and to layoutRules", dir)
			continue
		}
		used[r.dir] = true
		for _, imp := range imports[dir] {
			if !r.allows(imp.path) {
				t.Errorf("%s imports %s: %s (DESIGN.md, Layout)", imp.file, imp.path, r)
			}
		}
	}
	for _, r := range layoutRules {
		if !used[r.dir] {
			t.Errorf("layout rule for %s covers no package: the folder moved, or the rule is mistyped", r.dir)
		}
	}
}

// moduleImport is an import of a package of this module.
type moduleImport struct {
	file string // relative to the module root
	path string // imported package, relative to the module root
}

// moduleImports returns, for every folder below root holding non-test Go
// files, the imports of module's packages they make. Folders named
// testdata, and those whose name starts with "." or "_", are skipped, as
// the go command does.
func moduleImports(root, module string) (map[string][]moduleImport, error) {
	out := map[string][]moduleImport{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := out[dir]; !ok {
			out[dir] = nil
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", rel, spec.Path.Value, err)
			}
			if p == module {
				out[dir] = append(out[dir], moduleImport{file: rel, path: "."})
			} else if strings.HasPrefix(p, module+"/") {
				out[dir] = append(out[dir], moduleImport{file: rel, path: strings.TrimPrefix(p, module+"/")})
			}
		}
		return nil
	})
	return out, err
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", errors.New(gomod + ": no module line")
}

// sortedKeys returns m's keys in order, so failures read the same each run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
