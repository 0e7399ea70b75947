package environment

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/tree"
)

// Declared is what a tree declares it needs to run its tests.
type Declared struct {
	// Files are the declaration files read, in order.
	Files []string
	// Requirements are pip requirement specifiers, in the order read,
	// without duplicates.
	Requirements []string
	// Ignored are lines of requirements files that are not requirements
	// (options such as --index-url or -e, which the operator's settings
	// decide), each as "file: line".
	Ignored []string
}

// testGroups are the optional dependency groups of pyproject.toml and the
// extras of setup.cfg that a grade installs.
var testGroups = []string{"test", "tests", "testing", "dev"}

// IsDeclaration reports whether p, a path in a tree, is a file the
// environment is built from.
func IsDeclaration(p string) bool {
	dir, name := path.Split(p)
	switch {
	case dir == "" && strings.HasPrefix(name, "requirements") && strings.HasSuffix(name, ".txt"):
		return true
	case dir == "requirements/" && strings.HasSuffix(name, ".txt"):
		return true
	case dir == "" && (name == "pyproject.toml" || name == "setup.cfg"):
		return true
	}
	return false
}

// Declarations reads what t declares: requirements*.txt and
// requirements/*.txt; pyproject.toml's [project] dependencies, its optional
// dependencies named test, tests, testing or dev, and its PEP 735
// [dependency-groups] of those names; setup.cfg's install_requires and
// those extras. A file that does not parse is an error that names it.
func Declarations(t *tree.Tree) (Declared, error) {
	var d Declared
	seen := map[string]bool{}
	add := func(req string) {
		req = strings.TrimSpace(req)
		if req != "" && !seen[req] {
			seen[req] = true
			d.Requirements = append(d.Requirements, req)
		}
	}
	var names []string
	for _, f := range t.Files {
		if !f.IsSymlink() && IsDeclaration(f.Path) {
			names = append(names, f.Path)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int {
		if c := cmpDecl(a) - cmpDecl(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		f, _ := t.Lookup(name)
		var reqs []string
		var err error
		switch {
		case name == "pyproject.toml":
			reqs, err = pyprojectRequirements(f.Data)
		case name == "setup.cfg":
			reqs = setupCfgRequirements(f.Data)
		default:
			var ignored []string
			reqs, ignored = requirementsLines(f.Data)
			for _, l := range ignored {
				d.Ignored = append(d.Ignored, name+": "+l)
			}
		}
		if err != nil {
			return d, fmt.Errorf("%s: %w", name, err)
		}
		d.Files = append(d.Files, name)
		for _, r := range reqs {
			add(r)
		}
	}
	return d, nil
}

// cmpDecl orders declaration files: requirements files, then
// pyproject.toml, then setup.cfg.
func cmpDecl(p string) int {
	switch p {
	case "pyproject.toml":
		return 1
	case "setup.cfg":
		return 2
	}
	return 0
}

// requirementsLines returns the requirement specifiers of a requirements
// file, and the option lines it leaves out. Options (-r, -c, -e,
// --index-url, ...) are not followed: every requirements file of the tree
// is read anyway, and where packages come from is the operator's setting.
func requirementsLines(data []byte) (reqs, ignored []string) {
	s := bufio.NewScanner(bytes.NewReader(data))
	var cont string
	for s.Scan() {
		line := cont + s.Text()
		cont = ""
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "-"):
			ignored = append(ignored, line)
		default:
			reqs = append(reqs, line)
		}
	}
	return reqs, ignored
}

// pyprojectRequirements reads pyproject.toml's dependencies and test
// groups.
func pyprojectRequirements(data []byte) ([]string, error) {
	var doc struct {
		Project struct {
			Dependencies         []string            `toml:"dependencies"`
			OptionalDependencies map[string][]string `toml:"optional-dependencies"`
		} `toml:"project"`
		DependencyGroups map[string][]any `toml:"dependency-groups"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, fmt.Errorf("does not parse as TOML: %w", err)
	}
	reqs := slices.Clone(doc.Project.Dependencies)
	for _, g := range testGroups {
		reqs = append(reqs, doc.Project.OptionalDependencies[g]...)
	}
	var group func(name string, depth int) error
	group = func(name string, depth int) error {
		if depth > 8 {
			return fmt.Errorf("[dependency-groups] %s: include-group nests too deep", name)
		}
		for _, e := range doc.DependencyGroups[name] {
			switch v := e.(type) {
			case string:
				reqs = append(reqs, v)
			case map[string]any:
				inc, ok := v["include-group"].(string)
				if !ok {
					return fmt.Errorf("[dependency-groups] %s: a table entry needs include-group", name)
				}
				if err := group(inc, depth+1); err != nil {
					return err
				}
			default:
				return fmt.Errorf("[dependency-groups] %s: entry %v is neither a requirement nor an include-group", name, e)
			}
		}
		return nil
	}
	for _, g := range testGroups {
		if err := group(g, 0); err != nil {
			return nil, err
		}
	}
	return reqs, nil
}

// setupCfgRequirements reads setup.cfg's [options] install_requires and
// [options.extras_require] test groups: INI values, one requirement per
// line (a semicolon starts an environment marker, as in any requirement).
func setupCfgRequirements(data []byte) []string {
	var reqs []string
	for _, v := range detect.SetupCfgValues(string(data)) {
		if (v.Section == "options" && v.Key == "install_requires") ||
			(v.Section == "options.extras_require" && slices.Contains(testGroups, v.Key)) {
			reqs = append(reqs, v.Line)
		}
	}
	return reqs
}

// ChangedDeclarations lists the declaration files that differ between base
// and head: the pull request changed them, and its grade still uses the
// base's environment.
func ChangedDeclarations(base, head *tree.Tree) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range []*tree.Tree{base, head} {
		for _, f := range t.Files {
			if !IsDeclaration(f.Path) || seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			a, aok := base.Lookup(f.Path)
			b, bok := head.Lookup(f.Path)
			if aok != bok || (aok && !bytes.Equal(a.Data, b.Data)) {
				out = append(out, f.Path)
			}
		}
	}
	slices.Sort(out)
	return out
}
