package detect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/tree"
)

func TestIsTestFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"test_add.py", true},
		{"pkg/test_add.py", true},
		{"add_test.py", true},
		{"pkg/sub/add_test.py", true},
		{"conftest.py", true},
		{"pkg/conftest.py", true},
		{"tests/data.json", true},
		{"tests/helpers.py", true},
		{"src/pkg/tests/fixtures/x.txt", true},
		{"test/util.py", true},
		{"a/test/b/c.py", true},
		{"add.py", false},
		{"test_add.txt", false},
		{"testing.py", false},
		{"contest.py", false},
		{"tests", false},
		{"tests.py", false},
		{"mytests/x.py", false},
		{"testsuite/x.py", false},
		{"Tests/x.py", false},
	}
	for _, tt := range tests {
		if got := IsTestFile(tt.path); got != tt.want {
			t.Errorf("IsTestFile(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestTouchedTests(t *testing.T) {
	base := []tree.File{
		detectorFile("pkg/mod.py", "x = 1\n"),
		detectorFile("tests/test_a.py", "def test_a(): pass\n"),
		detectorFile("tests/test_b.py", "def test_b(): pass\n"),
		detectorFile("tests/test_mode.py", ""),
		detectorLink("tests/link.py", "../pkg/mod.py"),
		detectorFile("conftest.py", ""),
	}
	tests := []struct {
		name string
		head []tree.File
		want []string
	}{
		{
			name: "unchanged",
			head: base,
		},
		{
			name: "only sources changed",
			head: replaceFiles(base, detectorFile("pkg/mod.py", "x = 2\n"), detectorFile("pkg/new.py", "")),
		},
		{
			name: "content changed",
			head: replaceFiles(base, detectorFile("tests/test_a.py", "def test_a(): assert True\n")),
			want: []string{"tests/test_a.py"},
		},
		{
			name: "mode changed",
			head: replaceFiles(base, tree.File{Path: "tests/test_mode.py", Mode: 0o755}),
			want: []string{"tests/test_mode.py"},
		},
		{
			name: "symlink target changed",
			head: replaceFiles(base, detectorLink("tests/link.py", "/etc/passwd")),
			want: []string{"tests/link.py"},
		},
		{
			name: "file became a symlink",
			head: replaceFiles(base, detectorLink("tests/test_b.py", "test_a.py")),
			want: []string{"tests/test_b.py"},
		},
		{
			name: "removed; added test files are the implementer's own",
			head: append(removeFiles(base, "tests/test_b.py", "conftest.py"), detectorFile("pkg/feature_test.py", "")),
			want: []string{"conftest.py", "tests/test_b.py"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TouchedTests(detectorTree(t, base...), detectorTree(t, tt.head...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TouchedTests() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTouchedTestsNilTrees(t *testing.T) {
	head := &tree.Tree{Files: []tree.File{detectorFile("test_x.py", "")}}
	if diff := cmp.Diff([]string(nil), TouchedTests(nil, head)); diff != "" {
		t.Errorf("TouchedTests(nil, head) mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"test_x.py"}, TouchedTests(head, nil)); diff != "" {
		t.Errorf("TouchedTests(head, nil) mismatch (-want +got):\n%s", diff)
	}
}

// replaceFiles returns files with each of repl put in place of the file at
// the same path, or added.
func replaceFiles(files []tree.File, repl ...tree.File) []tree.File {
	out := removeFiles(files, pathsOf(repl)...)
	return append(out, repl...)
}

// removeFiles returns files without the given paths.
func removeFiles(files []tree.File, paths ...string) []tree.File {
	drop := make(map[string]bool)
	for _, p := range paths {
		drop[p] = true
	}
	var out []tree.File
	for _, f := range files {
		if !drop[f.Path] {
			out = append(out, f)
		}
	}
	return out
}

func pathsOf(files []tree.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
