package detect

import (
	"path"
	"regexp"
	"strings"

	"github.com/testfirst-app/testfirst/tree"
)

// SourceDir is the directory of a tree that holds its importable packages
// when it is not the tree's root (a src layout), or "" for a flat tree. It
// reads, in order: pyproject.toml's [tool.setuptools] package-dir "" entry
// and [tool.setuptools.packages.find] where; setup.cfg's [options]
// package_dir "=" entry and [options.packages.find] where; setup.py's
// package_dir={"": …}; and else a src/ directory that holds a package
// while the root holds none of the same name. The directory must be a
// clean relative path to a real directory of the tree (no symlink on the
// way).
//
// The grader decides it from the base tree when it has one, so a pull
// request cannot point sys.path at a directory of its choosing.
func SourceDir(t *tree.Tree) string {
	if t == nil {
		return ""
	}
	var candidates []string
	if f, ok := t.Lookup("pyproject.toml"); ok && !f.IsSymlink() {
		candidates = append(candidates, pyprojectSourceDirs(string(f.Data))...)
	}
	if f, ok := t.Lookup("setup.cfg"); ok && !f.IsSymlink() {
		candidates = append(candidates, setupCfgSourceDirs(string(f.Data))...)
	}
	if f, ok := t.Lookup("setup.py"); ok && !f.IsSymlink() {
		if m := setupPyPackageDir.FindStringSubmatch(string(f.Data)); m != nil {
			candidates = append(candidates, m[1])
		}
	}
	for _, c := range candidates {
		c = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(c), "./"), "/")
		if c == "" || c == "." {
			return ""
		}
		if realDir(t, c) {
			return c
		}
	}
	if realDir(t, "src") && srcHoldsPackage(t) {
		return "src"
	}
	return ""
}

var (
	setupPyPackageDir = regexp.MustCompile(`package_dir\s*=\s*\{\s*['"]{2}\s*:\s*['"]([^'"\n]+)['"]`)
	tomlSection       = regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]\s*(#.*)?$`)
	tomlPackageDir    = regexp.MustCompile(`^\s*package-dir\s*=\s*\{(?:[^}]*,)?\s*["']{2}\s*=\s*["']([^"']+)["']`)
	tomlEmptyKey      = regexp.MustCompile(`^\s*["']{2}\s*=\s*["']([^"']+)["']`)
	tomlWhere         = regexp.MustCompile(`^\s*where\s*=\s*\[\s*["']([^"']+)["']`)
	cfgKey            = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)\s*[=:]\s*(.*)$`)
)

// pyprojectSourceDirs reads the setuptools source directories of a
// pyproject.toml, line by line: the forms setuptools documents, not all
// of TOML.
func pyprojectSourceDirs(text string) []string {
	var out []string
	section := ""
	for _, line := range strings.Split(text, "\n") {
		if m := tomlSection.FindStringSubmatch(line); m != nil {
			section = strings.ReplaceAll(m[1], " ", "")
			continue
		}
		switch section {
		case "tool.setuptools":
			if m := tomlPackageDir.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		case "tool.setuptools.package-dir":
			if m := tomlEmptyKey.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		case "tool.setuptools.packages.find":
			if m := tomlWhere.FindStringSubmatch(line); m != nil {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// setupCfgSourceDirs reads [options] package_dir's "=dir" entry and
// [options.packages.find] where of a setup.cfg.
func setupCfgSourceDirs(text string) []string {
	var out []string
	for _, v := range SetupCfgValues(text) {
		switch {
		case v.Section == "options" && v.Key == "package_dir":
			if dir, ok := strings.CutPrefix(v.Line, "="); ok {
				out = append(out, strings.TrimSpace(dir))
			}
		case v.Section == "options.packages.find" && v.Key == "where":
			out = append(out, v.Line)
		}
	}
	return out
}

// realDir reports whether dir is a clean relative path to a directory of
// t that holds files, with no symlink on the way.
func realDir(t *tree.Tree, dir string) bool {
	if tree.CheckPath(dir) != nil {
		return false
	}
	for p := dir; p != "." && p != "/"; p = path.Dir(p) {
		if _, ok := t.Lookup(p); ok {
			return false // a file or symlink stands where the directory should be
		}
	}
	for _, f := range t.Files {
		if strings.HasPrefix(f.Path, dir+"/") {
			return true
		}
	}
	return false
}

// srcHoldsPackage reports whether src/ holds a package or module that the
// root does not.
func srcHoldsPackage(t *tree.Tree) bool {
	for _, f := range t.Files {
		rest, ok := strings.CutPrefix(f.Path, "src/")
		if !ok || f.IsSymlink() {
			continue
		}
		name, inner, nested := strings.Cut(rest, "/")
		switch {
		case nested && inner == "__init__.py":
		case !nested && strings.HasSuffix(name, ".py"):
			name = strings.TrimSuffix(name, ".py")
		default:
			continue
		}
		if _, ok := t.Lookup(name + "/__init__.py"); ok {
			continue
		}
		if _, ok := t.Lookup(name + ".py"); ok {
			continue
		}
		return true
	}
	return false
}
