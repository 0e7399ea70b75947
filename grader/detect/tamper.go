package detect

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// MaxPatternScanBytes is the largest file TamperSignals scans for source
// patterns. Larger files are still flagged by their names.
const MaxPatternScanBytes = 1 << 20

// maxLinkHops bounds how many in-tree symlinks are followed to read a
// configuration file, as the kernel bounds symlink loops.
const maxLinkHops = 40

// TamperSignals lists the files in t that could hook or bend a test run, and
// the source patterns in its *.py and *.pth files that reach for the runner
// or the hidden tests, sorted by path then reason. hidden, when set, is the
// hidden tests: files of t that pytest could import in place of one of
// them are flagged. It returns nil when it finds nothing; a nil tree is
// treated as empty.
//
// Sources are read as Python reads them: decoded per PEP 263 (a coding
// line naming anything but UTF-8, or bytes that do not decode, is itself a
// signal), identifiers normalised with NFKC and matched as tokens, so that
// "sys . _getframe", fullwidth letters and names spelled in string
// literals are found. Archives and other binaries are flagged by their
// magic bytes whatever their name.
//
// It never touches the disk: symlinks are judged lexically, by their target
// as stored. Files over MaxPatternScanBytes and binary files (containing a
// NUL byte) are not scanned for patterns, but are still flagged by name.
func TamperSignals(t, hidden *tree.Tree) []report.TamperSignal {
	if t == nil {
		return nil
	}
	names := hiddenModuleNames(hidden)
	var out []report.TamperSignal
	for i := range t.Files {
		f := &t.Files[i]
		for _, reason := range nameSignals(t, f) {
			out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
		}
		for _, reason := range names.signals(f.Path) {
			out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
		}
		if f.IsSymlink() {
			if reason := symlinkSignal(f); reason != "" {
				out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
			}
			continue
		}
		if reason := binarySignal(f); reason != "" {
			out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
		}
		if kind, ok := sniffBinary(f.Data); ok && kind.reason == kindZip.reason {
			for _, reason := range zipMemberSignals(f.Data) {
				out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
			}
		}
		for _, reason := range patternSignals(f) {
			out = append(out, report.TamperSignal{Path: f.Path, Reason: reason})
		}
	}
	slices.SortFunc(out, func(a, b report.TamperSignal) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Reason, b.Reason))
	})
	return slices.Compact(out)
}

// hiddenNames are the paths and module names of the hidden test modules,
// and the top-level packages they are imported from.
type hiddenNames struct {
	paths    map[string]bool
	modules  map[string]bool
	packages map[string]bool
}

// hiddenModuleNames collects the paths and module basenames of hidden's
// test modules (test_*.py, *_test.py).
func hiddenModuleNames(hidden *tree.Tree) hiddenNames {
	n := hiddenNames{paths: map[string]bool{}, modules: map[string]bool{}, packages: map[string]bool{}}
	if hidden == nil {
		return n
	}
	hasInit := func(dir string) bool {
		_, ok := hidden.Lookup(path.Join(dir, "__init__.py"))
		return ok
	}
	for _, f := range hidden.Files {
		base := path.Base(f.Path)
		if !IsTestModule(base) {
			continue
		}
		n.paths[f.Path] = true
		n.modules[strings.TrimSuffix(base, ".py")] = true
		// pytest imports a module inside packages by its dotted name from
		// the first directory up without an __init__.py: the topmost
		// package is the name a tree's package can take over.
		top := ""
		for dir := path.Dir(f.Path); dir != "." && hasInit(dir); dir = path.Dir(dir) {
			top = path.Base(dir)
		}
		if top != "" {
			n.packages[top] = true
		}
	}
	return n
}

// ImportableSuffixes are the file name endings Python imports a module
// from, beside a directory (a package, with or without __init__.py).
var ImportableSuffixes = []string{".py", ".pyc", ".pyo", ".pyw", ".so", ".pyd"}

// signals flags p when it has a hidden test file's path, when it is a
// module or lies in a package named like a hidden test module, or when it
// makes a package with the name of the hidden tests' top-level package:
// with the tree on sys.path, pytest could import it instead of the hidden
// file.
func (n hiddenNames) signals(p string) []string {
	if len(n.modules) == 0 {
		return nil
	}
	var out []string
	if n.paths[p] {
		out = append(out, report.ReasonHiddenPath)
	}
	parts := strings.Split(p, "/")
	for _, dir := range parts[:len(parts)-1] {
		if n.modules[dir] {
			return append(out, report.ReasonHiddenName)
		}
	}
	base := parts[len(parts)-1]
	if base == "__init__.py" && len(parts) > 1 && n.packages[parts[len(parts)-2]] {
		out = append(out, report.ReasonHiddenPkg)
	}
	stem, _, _ := strings.Cut(base, ".")
	if n.modules[stem] && slices.ContainsFunc(ImportableSuffixes, func(s string) bool { return strings.HasSuffix(base, s) }) {
		out = append(out, report.ReasonHiddenName)
	}
	return out
}

// nameSignals flags f by its name and, for configuration files that only
// matter with a pytest section, by that section.
func nameSignals(t *tree.Tree, f *tree.File) []string {
	base := path.Base(f.Path)
	switch base {
	case "conftest.py":
		return []string{"conftest.py can hook the test run"}
	case "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml":
		return []string{base + " configures pytest"}
	case "tox.ini":
		return []string{"tox.ini can configure pytest"}
	case "setup.cfg":
		return configSignal(t, f, "setup.cfg has a [tool:pytest] section", hasIniSection("tool:pytest"))
	case "pyproject.toml":
		return configSignal(t, f, "pyproject.toml has a [tool.pytest] section", hasTOMLPytestTable)
	case "sitecustomize.py", "usercustomize.py":
		return []string{base + " runs at interpreter start-up"}
	case "__init__.py":
		if pkg := path.Base(path.Dir(f.Path)); pkg == "sitecustomize" || pkg == "usercustomize" {
			return []string{pkg + " package runs at interpreter start-up"}
		}
		return nil
	case "entry_points.txt":
		dir := path.Base(path.Dir(f.Path))
		if !strings.HasSuffix(dir, ".dist-info") && !strings.HasSuffix(dir, ".egg-info") {
			return nil
		}
		data, ok := resolveContent(t, f)
		if ok && hasIniSection("pytest11")(data) {
			return []string{"entry_points.txt declares a pytest11 plugin that pytest loads"}
		}
		return []string{"entry_points.txt declares package entry points"}
	}
	switch {
	case strings.HasSuffix(base, ".pth"):
		return []string{".pth file runs code at interpreter start-up"}
	case isCompiledPython(f.Path):
		return []string{"compiled python file can hide code a reviewer cannot read"}
	case underPycache(f.Path):
		return []string{"file under __pycache__ can be imported instead of the source"}
	case strings.HasSuffix(base, ".so"):
		return []string{"native .so module runs code a reviewer cannot read"}
	}
	return nil
}

// configSignal returns reason when the content of f (followed through
// in-tree symlinks) passes has, and a reason of its own when f is a symlink
// that cannot be followed inside the tree.
func configSignal(t *tree.Tree, f *tree.File, reason string, has func([]byte) bool) []string {
	data, ok := resolveContent(t, f)
	switch {
	case !ok:
		return []string{path.Base(f.Path) + " is a symlink that cannot be checked for pytest settings"}
	case has(data):
		return []string{reason}
	}
	return nil
}

// resolveContent returns the content of f, following symlinks lexically
// inside t. It reports false when a link leaves the tree, dangles or loops.
func resolveContent(t *tree.Tree, f *tree.File) ([]byte, bool) {
	for range maxLinkHops {
		if !f.IsSymlink() {
			return f.Data, true
		}
		target, ok := linkTarget(f)
		if !ok {
			return nil, false
		}
		if f, ok = t.Lookup(target); !ok {
			return nil, false
		}
	}
	return nil, false
}

// linkTarget resolves the symlink f lexically against its own directory. It
// reports false when the target is absolute or leaves the tree.
func linkTarget(f *tree.File) (string, bool) {
	if path.IsAbs(f.Link) {
		return "", false
	}
	p := path.Join(path.Dir(f.Path), f.Link)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// symlinkSignal flags a symlink whose target is absolute or leaves the tree.
func symlinkSignal(f *tree.File) string {
	if path.IsAbs(f.Link) {
		return "symlink target is an absolute path outside the tree"
	}
	if _, ok := linkTarget(f); !ok {
		return "symlink target leaves the tree"
	}
	return ""
}

// hasIniSection returns a check for a "[name]" section header in an
// ini-style file, tolerant of surrounding whitespace.
func hasIniSection(name string) func([]byte) bool {
	return func(data []byte) bool {
		for b := range bytes.Lines(data) {
			line := strings.TrimSpace(string(b))
			if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") &&
				strings.TrimSpace(line[1:len(line)-1]) == name {
				return true
			}
		}
		return false
	}
}

// hasTOMLPytestTable reports whether a pyproject.toml configures pytest: a
// [tool.pytest...] table header, a dotted key that reaches tool.pytest
// (tool.pytest.ini_options.addopts = ... at the top, pytest.x = ... under
// [tool]) or an inline table under tool that names pytest. It is lexical,
// so it errs towards flagging.
func hasTOMLPytestTable(data []byte) bool {
	table := ""
	for b := range bytes.Lines(data) {
		line := strings.TrimSpace(string(b))
		if strings.HasPrefix(line, "[") {
			header := strings.Trim(line, "[] \t")
			if i := strings.Index(header, "]"); i >= 0 {
				header = header[:i] // "[a.b] # comment"
			}
			table = normalizeTOMLKey(header)
			if reachesPytest(table) {
				return true
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		full := normalizeTOMLKey(key)
		if table != "" {
			full = table + "." + full
		}
		if reachesPytest(full) || (full == "tool" && strings.Contains(value, "pytest")) {
			return true
		}
	}
	return false
}

// reachesPytest reports whether a normalized TOML key lies in pytest's
// table. Like the "[tool.pytest" prefix it stands for, it errs towards
// flagging ("tool.pytest_cov" matches too).
func reachesPytest(key string) bool {
	return strings.HasPrefix(key, "tool.pytest")
}

// normalizeTOMLKey drops the whitespace and quotes a TOML key may carry:
// ` "tool" . pytest ` becomes "tool.pytest".
func normalizeTOMLKey(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '"', '\'':
			return -1
		}
		return r
	}, k)
}

// sourcePattern is a string in Python source that reaches for the runner or
// the hidden tests.
type sourcePattern struct {
	text string
	why  string
	// foldCase matches regardless of case (PytestPluginManager).
	foldCase bool
	// identStart requires the match to start an identifier, so that
	// run_pytest does not match _pytest.
	identStart bool
	// attr, when set, is an attribute name distinctive enough that a
	// string literal holding exactly it (getattr(sys, "_getframe")) is the
	// pattern too.
	attr string
}

var sourcePatterns = []sourcePattern{
	{text: "_pytest", why: "pytest internals", identStart: true},
	{text: "pluginmanager", why: "can register pytest plugins", foldCase: true},
	{text: "sys._getframe", why: "can reach the caller's frames", attr: "_getframe"},
	{text: "inspect.stack", why: "can reach the caller's frames"},
	{text: "f_back", why: "can reach the caller's frames"},
	{text: "gc.get_objects", why: "can reach the runner's objects", attr: "get_objects"},
	{text: "co_consts", why: "can read the constants of test code"},
	{text: "os._exit", why: "can end the runner early", attr: "_exit"},
	{text: "atexit", why: "can run code after the tests"},
	{text: "pytest.exit", why: "can stop the test run"},
	{text: "allow_module_level", why: "can skip or exit at import"},
	{text: "/proc/self/fd", why: "can reach the runner's open files"},
	{text: "/proc/1", why: "can reach the wrapper process"},
	{text: wrapper.HiddenDir, why: "the hidden tests' directory"},
	{text: "sys.argv", why: "can find the hidden tests' directory on the runner's command line"},
	{text: "/dev/fd", why: "can reach the runner's open files"},
	{text: "dup2", why: "can replace the runner's open files"},
	{text: "fdopen", why: "can open the runner's file descriptors"},
	{text: "ctypes", why: "can call into the C library"},
	{text: "marshal", why: "can load hidden bytecode"},
}

// patternSignals reads a *.py or *.pth file as Python does and scans it for
// sourcePatterns, one reason per pattern found, after the reasons that
// reading it raised.
func patternSignals(f *tree.File) []string {
	ext := path.Ext(f.Path)
	if ext != ".py" && ext != ".pth" {
		return nil
	}
	if len(f.Data) > MaxPatternScanBytes || bytes.IndexByte(f.Data, 0) >= 0 {
		// Not scanned, so it is flagged: size or a NUL byte must not be a
		// way past the pattern scan.
		return []string{fmt.Sprintf("source too large (over %d bytes) or binary to scan for patterns", MaxPatternScanBytes)}
	}
	src := readPython(f.Data)
	out := src.signals
	texts := append([]string{src.text}, src.views...)
	var lower []string
	for _, sp := range sourcePatterns {
		in := texts
		if sp.foldCase {
			if lower == nil {
				for _, t := range texts {
					lower = append(lower, strings.ToLower(t))
				}
			}
			in = lower
		}
		found := slices.ContainsFunc(in, func(t string) bool { return containsPattern([]byte(t), sp) })
		if !found && sp.attr != "" {
			// getattr(sys, "_getframe"): the attribute spelled as a string.
			found = slices.Contains(src.strs, sp.attr)
		}
		if found {
			out = append(out, "source mentions "+sp.text+" ("+sp.why+")")
		}
	}
	return out
}

func containsPattern(data []byte, sp sourcePattern) bool {
	needle := []byte(sp.text)
	for off := 0; ; {
		i := bytes.Index(data[off:], needle)
		if i < 0 {
			return false
		}
		at := off + i
		if !sp.identStart || at == 0 || !isIdentByte(data[at-1]) {
			return true
		}
		off = at + 1
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// RankTamperSignals splits the signals of head into those about what head
// adds or changes against base, which are signals, and those about files
// that are on base unchanged, which are context: a real tox.ini or
// conftest.py, library source that uses ctypes or sys.argv. Context is the
// repository as it was, which the base run ran with too; a reviewer who
// sees it flagged on every pull request learns to ignore signals. A file is
// unchanged when base has it at the same path with the same kind, mode
// and content and, for a symlink, the same content at the end of its
// links. A configuration file the tree changed outside its pytest settings
// is context too. A source the tree changed keeps as context the patterns it
// mentioned on the base, unless the lines the tree adds mention them too.
// Without a base every signal is flagged.
func RankTamperSignals(signals []report.TamperSignal, base, head *tree.Tree) (flagged, context []report.TamperSignal) {
	if base == nil {
		return signals, nil
	}
	before := filesByPath(base)
	unchanged := map[string]bool{}
	for _, s := range signals {
		if _, done := unchanged[s.Path]; done {
			continue
		}
		h, ok := head.Lookup(s.Path)
		b := before[s.Path]
		same := ok && b != nil && sameFile(b, h)
		if same && h.IsSymlink() {
			hd, hok := resolveContent(head, h)
			bd, bok := resolveContent(base, b)
			same = hok && bok && bytes.Equal(hd, bd)
		}
		unchanged[s.Path] = same
	}
	// A source that the tree changed keeps as context what it mentioned on
	// the base already, unless the lines the tree adds mention it too.
	type seen struct{ before, added []string }
	sources := map[string]*seen{}
	for _, s := range signals {
		if unchanged[s.Path] || !strings.HasPrefix(s.Reason, "source mentions ") || sources[s.Path] != nil {
			continue
		}
		h, _ := head.Lookup(s.Path)
		b := before[s.Path]
		if h == nil || b == nil || h.IsSymlink() || b.IsSymlink() {
			continue
		}
		added := tree.File{Path: h.Path, Mode: h.Mode, Data: addedLines(b.Data, h.Data)}
		sources[s.Path] = &seen{before: patternSignals(b), added: patternSignals(&added)}
	}
	for _, s := range signals {
		src := sources[s.Path]
		switch {
		case unchanged[s.Path]:
			context = append(context, s)
		case samePytestSettings(base, head, s):
			context = append(context, s)
		case src != nil && strings.HasPrefix(s.Reason, "source mentions ") &&
			slices.Contains(src.before, s.Reason) && !slices.Contains(src.added, s.Reason):
			context = append(context, s)
		default:
			flagged = append(flagged, s)
		}
	}
	return flagged, context
}

// samePytestSettings reports whether s is about a configuration file that
// the tree changed outside its pytest settings: tox.ini's [pytest] section,
// setup.cfg's [tool:pytest], pyproject.toml's tool.pytest tables are the
// same on the base, which had the same signal.
func samePytestSettings(base, head *tree.Tree, s report.TamperSignal) bool {
	var part func([]byte) string
	switch path.Base(s.Path) {
	case "tox.ini":
		part = iniSection("pytest")
	case "setup.cfg":
		part = iniSection("tool:pytest")
	case "pyproject.toml":
		part = tomlPytestPart
	default:
		return false
	}
	h, hok := head.Lookup(s.Path)
	b, bok := base.Lookup(s.Path)
	if !hok || !bok || h.IsSymlink() || b.IsSymlink() || !slices.Contains(nameSignals(base, b), s.Reason) {
		return false
	}
	return part(b.Data) == part(h.Data)
}

// iniSection returns a reader of the lines of the "[name]" section of an
// ini-style file, its header included, or "" when it has none.
func iniSection(name string) func([]byte) string {
	return func(data []byte) string {
		var out strings.Builder
		in := false
		for b := range bytes.Lines(data) {
			line := strings.TrimSpace(string(b))
			if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
				in = strings.TrimSpace(line[1:len(line)-1]) == name
			}
			if in {
				out.WriteString(line + "\n")
			}
		}
		return out.String()
	}
}

// tomlPytestPart returns the lines of a pyproject.toml that reach pytest's
// settings: the lines of its tool.pytest tables and the keys that reach
// them from elsewhere, read as hasTOMLPytestTable reads them.
func tomlPytestPart(data []byte) string {
	var out strings.Builder
	table := ""
	for b := range bytes.Lines(data) {
		line := strings.TrimSpace(string(b))
		if strings.HasPrefix(line, "[") {
			header := strings.Trim(line, "[] \t")
			if i := strings.Index(header, "]"); i >= 0 {
				header = header[:i]
			}
			table = normalizeTOMLKey(header)
		}
		key, value, _ := strings.Cut(line, "=")
		full := normalizeTOMLKey(key)
		if table != "" && !strings.HasPrefix(line, "[") {
			full = table + "." + full
		}
		if reachesPytest(table) || reachesPytest(full) || (full == "tool" && strings.Contains(value, "pytest")) {
			out.WriteString(line + "\n")
		}
	}
	return out.String()
}

// addedLines returns the lines of head that base does not have (as many
// times as head has them more often), in head's order.
func addedLines(base, head []byte) []byte {
	have := map[string]int{}
	for l := range bytes.Lines(base) {
		have[string(bytes.TrimRight(l, "\r\n"))]++
	}
	var out []byte
	for l := range bytes.Lines(head) {
		k := string(bytes.TrimRight(l, "\r\n"))
		if have[k] > 0 {
			have[k]--
			continue
		}
		out = append(append(out, k...), '\n')
	}
	return out
}
