package wrapper

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// SourceDirEnv names the environment variable that tells PluginModule the
// directory of the tree under test that holds its packages (a src
// layout), to put on sys.path just before RepoDir.
const SourceDirEnv = "TESTFIRST_SOURCE_DIR"

// hasHiddenConftest reports whether the hidden set brings a conftest.py of
// its own, in any directory pytest collects.
func hasHiddenConftest(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipDir
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "conftest.py" && d.Type().IsRegular() {
			found = true
		}
		return nil
	})
	return found
}

// withHiddenConftest turns a pytest command line that ignores every
// conftest.py into one that loads the hidden set's own: --noconftest
// gives way to --confcutdir HiddenDir, so pytest looks for conftest files
// in the collected hidden directories and never above them. The tree
// under test is never collected, so its conftest files stay unloaded; the
// wrapper's plugin also refuses any conftest outside HiddenDir.
func withHiddenConftest(argv []string) []string {
	out := slices.Clone(argv)
	if i := slices.Index(out, "--noconftest"); i >= 0 {
		out = slices.Replace(out, i, i+1, "--confcutdir", HiddenDir)
	}
	return out
}

// sourceDir is the absolute directory of a job's SourceDir, which must be
// a clean relative path inside RepoDir.
func sourceDir(rel string) (string, error) {
	if rel == "" || rel == "." || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("job: source directory %q must be a clean path inside the repository", rel)
	}
	return path.Join(RepoDir, rel), nil
}
