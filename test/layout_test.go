package test

import (
	"bufio"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// architectureDoc is the page whose Layout table says what each package
// of this module may import.
const architectureDoc = "docs/architecture.md"

// layoutRule is one row of docs/architecture.md's Layout table: the
// packages of this module that the non-test Go files below dir may import.
// A folder may always import its own subpackages (and they it). An entry
// ending in "/..." allows that folder and everything below it; "..."
// allows anything.
type layoutRule struct {
	dir string
	may []string
}

// codeSpan matches one `code span` of a table cell.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// readLayoutRules reads the Layout table of the architecture page: the
// rows under "## Layout" whose first cell names a folder in a code span,
// and whose last cell lists, in code spans, what it may import ("—" for
// nothing).
func readLayoutRules(path string) ([]layoutRule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rules []layoutRule
	inLayout := false
	for n, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inLayout = strings.TrimSpace(line) == "## Layout"
			continue
		case !inLayout || !strings.HasPrefix(line, "|"):
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) < 3 {
			return nil, fmt.Errorf("%s:%d: a Layout row needs package, owns and may import cells", path, n+1)
		}
		first := codeSpan.FindStringSubmatch(cells[0])
		if first == nil {
			continue // the header or its rule
		}
		r := layoutRule{dir: strings.TrimSuffix(first[1], "/")}
		last := strings.TrimSpace(cells[len(cells)-1])
		for _, m := range codeSpan.FindAllStringSubmatch(last, -1) {
			r.may = append(r.may, strings.TrimSuffix(m[1], "/"))
		}
		if len(r.may) == 0 && last != "—" {
			return nil, fmt.Errorf("%s:%d: %s may import %q: list packages in code spans, or — for none", path, n+1, r.dir, last)
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s has no Layout table", path)
	}
	return rules, nil
}

// layoutRules reads the architecture page's rules, failing the test when
// it cannot.
func layoutRules(t *testing.T) []layoutRule {
	t.Helper()
	rules, err := readLayoutRules(filepath.Join(testenv.RepoRoot(), architectureDoc))
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// ruleFor returns the rule of the package in dir (relative to the module
// root, slash-separated): the one of the longest folder that holds it.
func ruleFor(rules []layoutRule, dir string) (layoutRule, bool) {
	var found layoutRule
	ok := false
	for _, r := range rules {
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

// allows reports whether the package pkg, under r, may import the
// module's package imp (both relative to the module root): a package
// below pkg always; an ancestor of pkg only when r names it (the adapter
// sandbox/docker imports sandbox), never by `...` nor by sharing r's
// folder (grader/x does not import grader because grader's row covers it);
// anything else when r lists it.
func (r layoutRule) allows(pkg, imp string) bool {
	if within(imp, pkg) {
		return true
	}
	ancestor := within(pkg, imp)
	for _, m := range r.may {
		switch {
		case imp == m:
			return true
		case ancestor:
		case m == "...":
			return true
		case strings.HasSuffix(m, "/..."):
			if within(imp, strings.TrimSuffix(m, "/...")) {
				return true
			}
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

// TestLayoutRule checks the table as the architecture page holds it:
// the domain imports nothing of the module, adapters import the domain,
// and only the composition root and the commands reach the sandbox.
func TestLayoutRule(t *testing.T) {
	rules := layoutRules(t)
	tests := []struct {
		pkg, imp string
		want     bool
	}{
		{"cmd/testfirst", "app", true},
		{"cmd/testfirst", "internal/bench", true},
		{"cmd/testfirst", "store", true},
		{"cmd/testfirst", "db", false},
		{"cmd/testfirst", "jobs", false},
		{"cmd/testfirst-wrapper", "wrapper", true},
		{"cmd/testfirst-wrapper", "grader", false},
		{"pipeline", "report", true},
		{"pipeline", "grader", false},
		{"pipeline", "store", false},
		{"pipeline", "sandbox/docker", false},
		{"report", "grader", false},
		{"report", "tree", false},
		{"tree", "report", false},
		{"wrapper", "grader", false},
		{"wrapper", "sandbox", false},
		{"grader", "sandbox/docker", false},
		{"grader", "grader/detect", true},
		{"grader", "report", true},
		{"grader/detect", "grader", false},
		{"grader/detect", "report", true},
		{"grader/detect", "tree", true},
		{"grader/detect", "grader/evaluate", false},
		{"grader/evaluate", "grader", false},
		{"grader/evaluate", "grader/detect", true},
		{"grader/evaluate", "report", true},
		{"grader/evaluate", "sandbox", false},
		{"grader/environment", "grader", false},
		{"grader/environment", "sandbox", true},
		{"grader", "grader/environment", true},
		{"grader", "grader/evaluate", true},
		{"grader/detect/x", "grader/detect", false},
		{"grader/detect/x", "grader", false},
		{"grader/detect", "grader/detect/x", true},
		{"test/testenv", "test", false},
		{"sandbox/docker", "grader", false},
		{"pipeline", "github", false},
		{"pipeline", "db", false},
		{"db", "pipeline", true},
		{"db", "github", false},
		{"jobs", "db", true},
		{"jobs", "handlers", false},
		{"jobs", "card", false},
		{"card", "handlers", true},
		{"card", "jobs", false},
		{"card", "sandbox", false},
		{"card", "grader", false},
		{"handlers", "github", true},
		{"handlers", "app", false},
		{"handlers", "db", false},
		{"app", "store", true},
		{"app", "jobs", true},
		{"app", "cmd/testfirst", false},
		{"app", "internal/bench", false},
		{"app", "test/fakegithub", false},
		{"internal/bench", "app", true},
		{"github", "grader", false},
		{"github", "checkrun", true},
		{"github", "pipeline", false},
		{"pipeline", "checkrun", true},
		{"jobs", "checkrun", true},
		{"checkrun", "pipeline", false},
		{"checkrun", "github", false},
		{"checkrun", "report", false},
		{"sandbox", "grader", false},
		{"grader", "sandbox", true},
		{"store", "grader", false},
		{"store", "tree", true},
		{"grader", "wrapper", true},
		{"grader", "github", false},
		{"store", "app", false},
		{"test/testenv", "app", true},
		{"internal/testkit", "db", true},
		{"internal/testkit", "test/fakegithub", true},
		{"internal/testkit", "jobs", false},
		{"jobs", "internal/testkit", false},
		{"app", "internal/testkit", false},
		{"card", "internal/testkit", false},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+" imports "+tt.imp, func(t *testing.T) {
			r, ok := ruleFor(rules, tt.pkg)
			if !ok {
				t.Fatalf("no rule for %s", tt.pkg)
			}
			if got := r.allows(tt.pkg, tt.imp); got != tt.want {
				t.Errorf("%s: allows(%s) = %t, want %t", r, tt.imp, got, tt.want)
			}
		})
	}
	if _, ok := ruleFor(rules, "docs"); ok {
		t.Error("a folder outside the table has a rule")
	}
}

// TestReadLayoutRules reads a table as the architecture page writes it,
// and refuses a row whose imports are not spelled as code spans.
func TestReadLayoutRules(t *testing.T) {
	dir := t.TempDir()
	page := "# x\n\n## Layout\n\n| package | owns | may import |\n|---|---|---|\n" +
		"| `pipeline/` | the domain, `TicketState` | — |\n| `db/` | rows | `pipeline` |\n| `test/` | tests | `...` |\n\n## Other\n\n| `x` | y | `z` |\n"
	path := filepath.Join(dir, "architecture.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := readLayoutRules(path)
	want := []layoutRule{{dir: "pipeline"}, {dir: "db", may: []string{"pipeline"}}, {dir: "test", may: []string{"..."}}}
	if err != nil || fmt.Sprint(rules) != fmt.Sprint(want) {
		t.Errorf("readLayoutRules = %v, %v; want %v", rules, err, want)
	}
	bad := strings.Replace(page, "| `pipeline` |\n", "| pipeline |\n", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readLayoutRules(path); err == nil || !strings.Contains(err.Error(), "code spans") {
		t.Errorf("a row without code spans: %v, want it refused", err)
	}
}

// TestLayoutImports parses every non-test Go file of the module and fails
// on an import of this module that docs/architecture.md's Layout table
// does not allow, on a package no row covers, and on a row that covers no
// package.
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
	rules := layoutRules(t)
	used := map[string]bool{}
	for _, dir := range sortedKeys(imports) {
		r, ok := ruleFor(rules, dir)
		if !ok {
			t.Errorf("package %s is in no row of %s's Layout table: add it there", dir, architectureDoc)
			continue
		}
		used[r.dir] = true
		for _, imp := range imports[dir] {
			if !r.allows(dir, imp.path) {
				t.Errorf("%s imports %s: %s (%s, Layout)", imp.file, imp.path, r, architectureDoc)
			}
		}
	}
	for _, r := range rules {
		if !used[r.dir] {
			t.Errorf("layout rule for %s covers no package: the folder moved, or the rule is mistyped", r.dir)
		}
	}
}

// testKits are the packages of the unit tests' shared helpers.
var testKits = []string{"internal/testkit", "grader/evaluate/evaluatetest"}

// TestLayoutTestKitOnlyInTests fails when a non-test Go file imports a
// test kit: the Layout table keeps them out of every row but test/'s, whose
// "..." would let test/testenv or test/fakegithub take them in.
func TestLayoutTestKitOnlyInTests(t *testing.T) {
	root := testenv.RepoRoot()
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	imports, err := moduleImports(root, module)
	if err != nil {
		t.Fatal(err)
	}
	for _, kit := range testKits {
		if _, ok := imports[kit]; !ok {
			t.Errorf("%s holds no package", kit)
		}
	}
	for _, dir := range sortedKeys(imports) {
		for _, imp := range imports[dir] {
			if slices.Contains(testKits, imp.path) {
				t.Errorf("%s imports %s: only tests may", imp.file, imp.path)
			}
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
// the go command does, and so is a folder with a go.mod of its own (another
// module, such as the scratch modules make test-kube builds in var/kube).
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
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
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

// TestDomainHoldsNoAdapter: everything the domain, the grader's values and
// the agents' runner pull in, down to the standard library, holds no
// database, GitHub, River, Docker or HTTP package (docs/architecture.md,
// Layout).
func TestDomainHoldsNoAdapter(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./pipeline", "./grader/...", "./report", "./tree", "./wrapper", "./agent")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"net/http", "database/sql", "github.com/docker/", "github.com/riverqueue/",
		"github.com/google/go-github/", "cloud.google.com/",
		"github.com/testfirst-app/testfirst/db", "github.com/testfirst-app/testfirst/github",
		"github.com/testfirst-app/testfirst/sandbox/docker", "github.com/testfirst-app/testfirst/store",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f) {
				t.Errorf("pipeline, grader, report, tree, wrapper or agent depends on %s", dep)
			}
		}
	}
}
