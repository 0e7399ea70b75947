package wrapper

import (
	"fmt"
	"path"
	"strings"
)

// SourceDirEnv names the environment variable that tells PluginModule the
// directory of the tree under test that holds its packages (a src
// layout), to put on sys.path just before RepoDir.
const SourceDirEnv = "TESTFIRST_SOURCE_DIR"

// sourceDir is the absolute directory of a job's SourceDir, which must be
// a clean relative path inside RepoDir.
func sourceDir(rel string) (string, error) {
	if rel == "" || rel == "." || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("job: source directory %q must be a clean path inside the repository", rel)
	}
	return path.Join(RepoDir, rel), nil
}
