package detect

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

// detectorTree builds a Tree for the detector tests, failing t on a bad path.
func detectorTree(t *testing.T, files ...tree.File) *tree.Tree {
	t.Helper()
	tr, err := tree.New(files)
	if err != nil {
		t.Fatalf("NewTree: %v", err)
	}
	return tr
}

// detectorFile is a regular file with mode 0644.
func detectorFile(p, data string) tree.File {
	return tree.File{Path: p, Mode: 0o644, Data: []byte(data)}
}

// detectorLink is a symlink to target.
func detectorLink(p, target string) tree.File {
	return tree.File{Path: p, Mode: fs.ModeSymlink | 0o777, Link: target}
}

const unscanned = "source too large (over 1048576 bytes) or binary to scan for patterns"

func TestTamperSignals(t *testing.T) {
	big := strings.Repeat("#\n", MaxPatternScanBytes/2) + "import os\nos._exit(0)\n"
	tests := []struct {
		name  string
		files []tree.File
		want  []report.TamperSignal
	}{
		{
			name:  "plain sources",
			files: []tree.File{detectorFile("pkg/mod.py", "def add(a, b):\n    return a + b\n"), detectorFile("README.md", "os._exit /hidden")},
		},
		{
			name:  "conftest at the root and nested",
			files: []tree.File{detectorFile("conftest.py", ""), detectorFile("pkg/sub/conftest.py", "")},
			want: []report.TamperSignal{
				{Path: "conftest.py", Reason: "conftest.py can hook the test run"},
				{Path: "pkg/sub/conftest.py", Reason: "conftest.py can hook the test run"},
			},
		},
		{
			name: "pytest configuration files",
			files: []tree.File{
				detectorFile("pytest.ini", "[pytest]\n"),
				detectorFile(".pytest.ini", ""),
				detectorFile("pytest.toml", ""),
				detectorFile(".pytest.toml", ""),
				detectorFile("sub/tox.ini", "[tox]\n"),
			},
			want: []report.TamperSignal{
				{Path: ".pytest.ini", Reason: ".pytest.ini configures pytest"},
				{Path: ".pytest.toml", Reason: ".pytest.toml configures pytest"},
				{Path: "pytest.ini", Reason: "pytest.ini configures pytest"},
				{Path: "pytest.toml", Reason: "pytest.toml configures pytest"},
				{Path: "sub/tox.ini", Reason: "tox.ini can configure pytest"},
			},
		},
		{
			name: "setup.cfg only with a tool:pytest section",
			files: []tree.File{
				detectorFile("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -p evil\n"),
				detectorFile("a/setup.cfg", "[metadata]\nname = tool:pytest\n[flake8]\n"),
				detectorFile("b/setup.cfg", "[ tool:pytest ]\r\n"),
			},
			want: []report.TamperSignal{
				{Path: "b/setup.cfg", Reason: "setup.cfg has a [tool:pytest] section"},
				{Path: "setup.cfg", Reason: "setup.cfg has a [tool:pytest] section"},
			},
		},
		{
			name: "pyproject.toml only with a tool.pytest table",
			files: []tree.File{
				detectorFile("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-p evil\"\n"),
				detectorFile("a/pyproject.toml", "[project]\nname = \"pytest\"\n[tool.black]\nline-length = 100\n"),
				detectorFile("b/pyproject.toml", "[tool]\npytest.ini_options.addopts = \"-p evil\"\n"),
				detectorFile("c/pyproject.toml", "tool.pytest.ini_options.addopts = \"-p evil\"\n"),
				detectorFile("d/pyproject.toml", "[ \"tool\" . pytest ] # pytest 9\n"),
				detectorFile("e/pyproject.toml", "tool = { pytest = { ini_options = {} } }\n"),
			},
			want: []report.TamperSignal{
				{Path: "b/pyproject.toml", Reason: "pyproject.toml has a [tool.pytest] section"},
				{Path: "c/pyproject.toml", Reason: "pyproject.toml has a [tool.pytest] section"},
				{Path: "d/pyproject.toml", Reason: "pyproject.toml has a [tool.pytest] section"},
				{Path: "e/pyproject.toml", Reason: "pyproject.toml has a [tool.pytest] section"},
				{Path: "pyproject.toml", Reason: "pyproject.toml has a [tool.pytest] section"},
			},
		},
		{
			name: "configuration behind symlinks",
			files: []tree.File{
				detectorLink("setup.cfg", "cfg/real.cfg"),
				detectorFile("cfg/real.cfg", "[tool:pytest]\n"),
				detectorLink("a/pyproject.toml", "../cfg/plain.toml"),
				detectorFile("cfg/plain.toml", "[project]\n"),
				detectorLink("b/setup.cfg", "missing.cfg"),
				detectorLink("c/setup.cfg", "setup.cfg"),
				detectorLink("d/setup.cfg", "/etc/setup.cfg"),
			},
			want: []report.TamperSignal{
				{Path: "b/setup.cfg", Reason: "setup.cfg is a symlink that cannot be checked for pytest settings"},
				{Path: "c/setup.cfg", Reason: "setup.cfg is a symlink that cannot be checked for pytest settings"},
				{Path: "d/setup.cfg", Reason: "setup.cfg is a symlink that cannot be checked for pytest settings"},
				{Path: "d/setup.cfg", Reason: "symlink target is an absolute path outside the tree"},
				{Path: "setup.cfg", Reason: "setup.cfg has a [tool:pytest] section"},
			},
		},
		{
			name: "interpreter start-up hooks",
			files: []tree.File{
				detectorFile("sitecustomize.py", ""),
				detectorFile("lib/usercustomize.py", ""),
				detectorFile("sitecustomize/__init__.py", ""),
				detectorFile("site-packages/evil.pth", "import os\n"),
			},
			want: []report.TamperSignal{
				{Path: "lib/usercustomize.py", Reason: "usercustomize.py runs at interpreter start-up"},
				{Path: "site-packages/evil.pth", Reason: ".pth file runs code at interpreter start-up"},
				{Path: "sitecustomize.py", Reason: "sitecustomize.py runs at interpreter start-up"},
				{Path: "sitecustomize/__init__.py", Reason: "sitecustomize package runs at interpreter start-up"},
			},
		},
		{
			name: "entry points",
			files: []tree.File{
				detectorFile("site/evil-1.0.dist-info/entry_points.txt", "[console_scripts]\nx = a:b\n\n[pytest11]\nevil = evil.plugin\n"),
				detectorFile("site/tool-2.0.dist-info/entry_points.txt", "[console_scripts]\nx = a:b\n"),
				detectorFile("src/pkg.egg-info/entry_points.txt", " [ pytest11 ] \nevil = evil\n"),
				detectorFile("docs/entry_points.txt", "[pytest11]\n"),
			},
			want: []report.TamperSignal{
				{Path: "site/evil-1.0.dist-info/entry_points.txt", Reason: "entry_points.txt declares a pytest11 plugin that pytest loads"},
				{Path: "site/tool-2.0.dist-info/entry_points.txt", Reason: "entry_points.txt declares package entry points"},
				{Path: "src/pkg.egg-info/entry_points.txt", Reason: "entry_points.txt declares a pytest11 plugin that pytest loads"},
			},
		},
		{
			name: "compiled and native files",
			files: []tree.File{
				detectorFile("pkg/mod.pyc", "\x00\x00"),
				detectorFile("pkg/old.pyo", ""),
				detectorFile("pkg/__pycache__/mod.cpython-312.pyc", ""),
				detectorFile("pkg/__pycache__/notes.txt", ""),
				detectorFile("pkg/_speed.cpython-312-x86_64-linux-gnu.so", "\x7fELF"),
			},
			want: []report.TamperSignal{
				{Path: "pkg/__pycache__/mod.cpython-312.pyc", Reason: "compiled python file can hide code a reviewer cannot read"},
				{Path: "pkg/__pycache__/notes.txt", Reason: "file under __pycache__ can be imported instead of the source"},
				{Path: "pkg/_speed.cpython-312-x86_64-linux-gnu.so", Reason: "native .so module runs code a reviewer cannot read"},
				{Path: "pkg/mod.pyc", Reason: "compiled python file can hide code a reviewer cannot read"},
				{Path: "pkg/old.pyo", Reason: "compiled python file can hide code a reviewer cannot read"},
			},
		},
		{
			name: "symlinks",
			files: []tree.File{
				detectorLink("abs", "/hidden/test_x.py"),
				detectorLink("up", ".."),
				detectorLink("a/b/out", "../../../etc/passwd"),
				detectorLink("a/b/in", "../../pkg/mod.py"),
				detectorLink("a/b/sneaky", "x/../../../.."),
				detectorLink("a/self", "."),
				detectorLink("conftest.py", "/tmp/conftest.py"),
			},
			want: []report.TamperSignal{
				{Path: "a/b/out", Reason: "symlink target leaves the tree"},
				{Path: "a/b/sneaky", Reason: "symlink target leaves the tree"},
				{Path: "abs", Reason: "symlink target is an absolute path outside the tree"},
				{Path: "conftest.py", Reason: "conftest.py can hook the test run"},
				{Path: "conftest.py", Reason: "symlink target is an absolute path outside the tree"},
				{Path: "up", Reason: "symlink target leaves the tree"},
			},
		},
		{
			name: "every source pattern",
			files: []tree.File{
				detectorFile("a.py", "import _pytest.main\n"),
				detectorFile("b.py", "config.pluginmanager.register(p)\n"),
				detectorFile("b2.py", "from pytest import PytestPluginManager\n"),
				detectorFile("c.py", "f = sys._getframe(1)\n"),
				detectorFile("d.py", "inspect.stack()\n"),
				detectorFile("e.py", "frame.f_back.f_locals\n"),
				detectorFile("f.py", "gc.get_objects()\n"),
				detectorFile("g.py", "fn.__code__.co_consts\n"),
				detectorFile("h.py", "os._exit(0)\n"),
				detectorFile("i.py", "import atexit\n"),
				detectorFile("j.py", "pytest.exit('done')\n"),
				detectorFile("k.py", "pytest.skip('x', allow_module_level=True)\n"),
				detectorFile("l.py", "os.listdir('/proc/self/fd')\n"),
				detectorFile("m.py", "open('/proc/1/environ')\n"),
				detectorFile("n.py", "open('/hidden/test_x.py')\n"),
			},
			want: []report.TamperSignal{
				{Path: "a.py", Reason: "source mentions _pytest (pytest internals)"},
				{Path: "b.py", Reason: "source mentions pluginmanager (can register pytest plugins)"},
				{Path: "b2.py", Reason: "source mentions pluginmanager (can register pytest plugins)"},
				{Path: "c.py", Reason: "source mentions sys._getframe (can reach the caller's frames)"},
				{Path: "d.py", Reason: "source mentions inspect.stack (can reach the caller's frames)"},
				{Path: "e.py", Reason: "source mentions f_back (can reach the caller's frames)"},
				{Path: "f.py", Reason: "source mentions gc.get_objects (can reach the runner's objects)"},
				{Path: "g.py", Reason: "source mentions co_consts (can read the constants of test code)"},
				{Path: "h.py", Reason: "source mentions os._exit (can end the runner early)"},
				{Path: "i.py", Reason: "source mentions atexit (can run code after the tests)"},
				{Path: "j.py", Reason: "source mentions pytest.exit (can stop the test run)"},
				{Path: "k.py", Reason: "source mentions allow_module_level (can skip or exit at import)"},
				{Path: "l.py", Reason: "source mentions /proc/self/fd (can reach the runner's open files)"},
				{Path: "m.py", Reason: "source mentions /proc/1 (can reach the wrapper process)"},
				{Path: "n.py", Reason: "source mentions /hidden (the hidden tests' directory)"},
			},
		},
		{
			name: "one signal per file and pattern, beside the name rule",
			files: []tree.File{
				detectorFile("conftest.py", "import os, atexit\natexit.register(lambda: os._exit(0))\nos._exit(1)\n"),
			},
			want: []report.TamperSignal{
				{Path: "conftest.py", Reason: "conftest.py can hook the test run"},
				{Path: "conftest.py", Reason: "source mentions atexit (can run code after the tests)"},
				{Path: "conftest.py", Reason: "source mentions os._exit (can end the runner early)"},
			},
		},
		{
			name: "_pytest must start an identifier",
			files: []tree.File{
				detectorFile("tasks.py", "def run_pytest():\n    pass\n"),
				detectorFile("hook.py", "x = run_pytest; import _pytest\n"),
			},
			want: []report.TamperSignal{
				{Path: "hook.py", Reason: "source mentions _pytest (pytest internals)"},
			},
		},
		{
			name: "pth files are scanned, other files are not",
			files: []tree.File{
				detectorFile("x.pth", "import os; os._exit(0)\n"),
				detectorFile("notes.txt", "os._exit(0)\n"),
				detectorFile("script.sh", "cat /hidden/*\n"),
			},
			want: []report.TamperSignal{
				{Path: "x.pth", Reason: ".pth file runs code at interpreter start-up"},
				{Path: "x.pth", Reason: "source mentions os._exit (can end the runner early)"},
			},
		},
		{
			name: "large and binary sources are flagged as unscanned",
			files: []tree.File{
				detectorFile("big.py", big),
				detectorFile("conftest.py", big),
				detectorFile("bin.py", "os._exit(0)\x00"),
			},
			want: []report.TamperSignal{
				{Path: "big.py", Reason: unscanned},
				{Path: "bin.py", Reason: unscanned},
				{Path: "conftest.py", Reason: "conftest.py can hook the test run"},
				{Path: "conftest.py", Reason: unscanned},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TamperSignals(detectorTree(t, tt.files...), nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TamperSignals() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTamperSignalsNilTree(t *testing.T) {
	if got := TamperSignals(nil, nil); got != nil {
		t.Errorf("TamperSignals(nil) = %v, want nil", got)
	}
}

// TestRankTamperSignals: a signal is about what the pull request adds or
// changes; a file that is on the base unchanged is context (a real tox.ini,
// library source that uses ctypes), also through a symlink, unless the
// symlink's target changed.
func TestRankTamperSignals(t *testing.T) {
	lib := detectorFile("pkg/native.py", "import ctypes\n")
	tox := detectorFile("tox.ini", "[tox]\n")
	conf := detectorFile("tests/conftest.py", "import pytest\n")
	link := detectorLink("setup.cfg", "cfg/real.cfg")
	real := detectorFile("cfg/real.cfg", "[tool:pytest]\naddopts = -q\n")
	base := detectorTree(t, lib, tox, conf, link, real)
	head := detectorTree(t, lib, tox,
		detectorFile("tests/conftest.py", "import pytest\nimport atexit\n"), // changed
		detectorFile("pkg/new.py", "import sys\nsys.argv\n"),                // added
		link, detectorFile("cfg/real.cfg", "[tool:pytest]\naddopts = -p evil\n"), // the link's target changed
		detectorFile("pkg/sitecustomize.py", "import ctypes\n"), // a base file's content under a new name
	)
	flagged, context := RankTamperSignals(TamperSignals(head, nil), base, head)
	paths := func(ss []report.TamperSignal) []string {
		var out []string
		for _, s := range ss {
			if len(out) == 0 || out[len(out)-1] != s.Path {
				out = append(out, s.Path)
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"pkg/new.py", "pkg/sitecustomize.py", "setup.cfg", "tests/conftest.py"}, paths(flagged)); diff != "" {
		t.Errorf("flagged (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pkg/native.py", "tox.ini"}, paths(context)); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// A library module the tree changes keeps what it mentioned before as
	// context, but what its new lines mention is a signal.
	semver := "import sys\n\n\ndef deprecated(f):\n    frame = sys._getframe(1).f_back\n    return f\n\n\ndef main():\n    return sys.argv\n"
	base = detectorTree(t, detectorFile("semver.py", semver))
	fixed := detectorTree(t, detectorFile("semver.py", semver+"\n\ndef bump(v):\n    return v + 1\n"))
	bent := detectorTree(t, detectorFile("semver.py", semver+"\n\ndef bump(v):\n    return len(sys.argv) + v\n"))
	if flagged, context := RankTamperSignals(TamperSignals(fixed, nil), base, fixed); len(flagged) != 0 || len(context) != 3 {
		t.Errorf("a fix that adds no pattern: flagged %v, context %v", flagged, context)
	}
	flagged, _ = RankTamperSignals(TamperSignals(bent, nil), base, bent)
	if diff := cmp.Diff([]report.TamperSignal{{Path: "semver.py", Reason: "source mentions sys.argv (can find the hidden tests' directory on the runner's command line)"}}, flagged); diff != "" {
		t.Errorf("new lines that mention sys.argv (-want +got):\n%s", diff)
	}
	// A configuration file changed outside its pytest settings is context;
	// a change to them is a signal.
	base = detectorTree(t, detectorFile("tox.ini", "[tox]\nenvlist = py310\n\n[pytest]\naddopts = -q\n"),
		detectorFile("pyproject.toml", "[project]\nversion = '1'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n"))
	bumped := detectorTree(t, detectorFile("tox.ini", "[tox]\nenvlist = py310,py311\n\n[pytest]\naddopts = -q\n"),
		detectorFile("pyproject.toml", "[project]\nversion = '2'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n"))
	if flagged, context := RankTamperSignals(TamperSignals(bumped, nil), base, bumped); len(flagged) != 0 || len(context) != 2 {
		t.Errorf("configs changed outside pytest's settings: flagged %v, context %v", flagged, context)
	}
	hooked := detectorTree(t, detectorFile("tox.ini", "[tox]\nenvlist = py310\n\n[pytest]\naddopts = -p evil\n"),
		detectorFile("pyproject.toml", "[project]\nversion = '1'\n\n[tool.pytest.ini_options]\naddopts = '-p evil'\n"))
	if flagged, _ := RankTamperSignals(TamperSignals(hooked, nil), base, hooked); len(flagged) != 2 {
		t.Errorf("configs whose pytest settings changed: flagged %v, want both", flagged)
	}
	if f, c := RankTamperSignals(TamperSignals(head, nil), nil, head); len(c) != 0 || len(f) != len(TamperSignals(head, nil)) {
		t.Errorf("without a base every signal is flagged: %d flagged, %d context", len(f), len(c))
	}
}
