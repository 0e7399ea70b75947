package detect

import (
	"io/fs"
	"testing"

	"github.com/testfirst-app/testfirst/tree"
)

func TestSourceDir(t *testing.T) {
	pkg := tree.File{Path: "src/tally/__init__.py", Mode: 0o644, Data: []byte("x = 1\n")}
	cases := []struct {
		name  string
		files []tree.File
		want  string
	}{
		{"flat", []tree.File{{Path: "tally/__init__.py", Mode: 0o644}}, ""},
		{"pyproject packages.find", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[project]\nname = \"t\"\n\n[tool.setuptools.packages.find]\nwhere = [\"lib\"]\n")}, {Path: "lib/tally/__init__.py", Mode: 0o644}}, "lib"},
		{"pyproject package-dir", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools]\npackage-dir = {\"\" = \"code\"}\n")}, {Path: "code/tally.py", Mode: 0o644}}, "code"},
		{"pyproject package-dir table", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.package-dir]\n\"\" = \"code\"\n")}, {Path: "code/tally.py", Mode: 0o644}}, "code"},
		{"setup.cfg package_dir", []tree.File{{Path: "setup.cfg", Mode: 0o644, Data: []byte("[metadata]\nname = t\n\n[options]\npackage_dir =\n    =lib\npackages = find:\n")}, {Path: "lib/tally/__init__.py", Mode: 0o644}}, "lib"},
		{"setup.cfg packages.find", []tree.File{{Path: "setup.cfg", Mode: 0o644, Data: []byte("[options.packages.find]\nwhere = lib\n")}, {Path: "lib/tally/__init__.py", Mode: 0o644}}, "lib"},
		{"setup.py", []tree.File{{Path: "setup.py", Mode: 0o644, Data: []byte("setup(package_dir={'': 'lib'}, packages=find_packages('lib'))\n")}, {Path: "lib/tally/__init__.py", Mode: 0o644}}, "lib"},
		{"src directory alone", []tree.File{pkg}, "src"},
		{"src beside the same package at the root", []tree.File{pkg, {Path: "tally/__init__.py", Mode: 0o644}}, ""},
		{"declared directory missing", []tree.File{{Path: "setup.cfg", Mode: 0o644, Data: []byte("[options]\npackage_dir = =lib\n")}, pkg}, "src"},
		{"escaping path", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.packages.find]\nwhere = [\"../etc\"]\n")}, {Path: "x.py", Mode: 0o644}}, ""},
		{"symlinked directory", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.packages.find]\nwhere = [\"lib\"]\n")}, {Path: "lib", Mode: fs.ModeSymlink | 0o777, Link: "/hidden"}}, ""},
		{"root declared", []tree.File{{Path: "pyproject.toml", Mode: 0o644, Data: []byte("[tool.setuptools.packages.find]\nwhere = [\".\"]\n")}, pkg}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tree, err := tree.New(c.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := SourceDir(tree); got != c.want {
				t.Errorf("SourceDir = %q, want %q", got, c.want)
			}
		})
	}
}
