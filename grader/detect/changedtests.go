package detect

import (
	"path"
	"regexp"
	"strings"

	"github.com/testfirst-app/testfirst/tree"
)

// ChangedTests says which tests of base a pull request (head) rewrote: by
// test module, the test functions and methods whose text differs or that
// head removed, the classes whose other parts (setUp, attributes,
// helpers) changed, or the whole module when code at its top level other
// than imports and test functions changed (a table of expected values, a
// helper the tests call).
type ChangedTests struct {
	// Whole are the test modules changed as a whole, and the support
	// files (data, conftest.py, helpers) head changed or removed.
	Whole map[string]bool
	// Classes are, by test module, the classes changed as a whole.
	Classes map[string]map[string]bool
	// Funcs are, by test module, the names of the changed test functions
	// and methods, in any class (a mixin's method runs in every class
	// that inherits it).
	Funcs map[string]map[string]bool
	base  *tree.Tree
}

// ChangedTestsOf compares base's test files (IsTestFile) with head's.
func ChangedTestsOf(base, head *tree.Tree) ChangedTests {
	c := ChangedTests{Whole: map[string]bool{}, Classes: map[string]map[string]bool{}, Funcs: map[string]map[string]bool{}, base: base}
	for _, p := range TouchedTests(base, head) {
		if !IsTestModule(path.Base(p)) {
			c.Whole[p] = true
			continue
		}
		b, _ := base.Lookup(p)
		h, ok := head.Lookup(p)
		if !ok || b.IsSymlink() || h.IsSymlink() {
			c.Whole[p] = true
			continue
		}
		bp, bb := topLevelBlocks(string(b.Data), 0)
		hp, hb := topLevelBlocks(string(h.Data), 0)
		if bp != hp {
			c.Whole[p] = true
			continue
		}
		classes, funcs := map[string]bool{}, map[string]bool{}
		for name, text := range bb {
			if hb[name] == text {
				continue
			}
			switch {
			case strings.HasPrefix(text, "class ") || strings.Contains(text, "\nclass "):
				// A class: its test methods one by one, the rest as a
				// whole.
				brest, bm := topLevelBlocks(text, 4)
				hrest, hm := topLevelBlocks(hb[name], 4)
				if brest != hrest {
					classes[name] = true
				}
				for m, mt := range bm {
					if hm[m] == mt {
						continue
					}
					if strings.HasPrefix(m, "test") {
						funcs[m] = true
					} else {
						classes[name] = true
					}
				}
			case strings.HasPrefix(name, "test"):
				funcs[name] = true
			default:
				// A helper or fixture of the module's: any of its tests
				// may read it.
				c.Whole[p] = true
			}
		}
		c.Classes[p], c.Funcs[p] = classes, funcs
	}
	return c
}

// Changed reports whether the test id (a pytest node id) is one head
// rewrote: its function or method, its class, its whole module, a
// conftest.py in its module's directory or above, a helper in its
// directory, below it or above it, or a data file its module names (its
// first directory below the module's, or its own name) in its directory
// or below (at the root, only files at the root itself).
func (c ChangedTests) Changed(id string) bool {
	file, rest, _ := strings.Cut(id, "::")
	if c.Whole[file] {
		return true
	}
	parts := strings.Split(rest, "::")
	fn, _, _ := strings.Cut(parts[len(parts)-1], "[")
	if c.Funcs[file][fn] || (len(parts) > 1 && c.Classes[file][parts[0]]) {
		return true
	}
	dir := path.Dir(file)
	within := func(d, parent string) bool {
		return d == parent || (parent != "." && strings.HasPrefix(d, parent+"/"))
	}
	for p := range c.Whole {
		name := path.Base(p)
		if IsTestModule(name) {
			continue // another test module: its own tests are the changed ones
		}
		td := path.Dir(p)
		switch {
		case name == "conftest.py":
			// A conftest holds for its directory and below.
			if within(dir, td) {
				return true
			}
		case strings.HasSuffix(name, ".py"):
			// A helper: imported by the tests beside, above or below it.
			if within(td, dir) || within(dir, td) {
				return true
			}
		case within(td, dir) && c.names(file, dir, p):
			// Data read by the tests above it that name it.
			return true
		}
	}
	return false
}

// names reports whether the base's test module file (in dir) names the
// data file p below it: the first directory on the way to p, or p's own
// name when it is beside the module.
func (c ChangedTests) names(file, dir, p string) bool {
	rel := strings.TrimPrefix(p, dir+"/")
	if dir == "." {
		rel = p
	}
	word, _, _ := strings.Cut(rel, "/")
	if c.base == nil {
		return true
	}
	f, ok := c.base.Lookup(file)
	if !ok {
		return true
	}
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`).Match(f.Data)
}

// blockStart is a top-level def, async def or class statement.
var blockStart = regexp.MustCompile(`^(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)`)

// topLevelBlocks splits a Python module (or, at indent 4, a class's
// body) into its top-level functions and classes by name (each with the decorators above it and everything
// indented below it) and the rest, imports (one line or parenthesised),
// blank lines and comments left out. It reads lines, not a syntax tree: a
// top-level statement starts at column 0, and a block ends at the next.
func topLevelBlocks(src string, indent int) (rest string, blocks map[string]string) {
	blocks = map[string]string{}
	var other, cur, decorators strings.Builder
	name := ""
	inImport := false
	flush := func() {
		if name != "" {
			blocks[name] += cur.String()
		}
		cur.Reset()
		name = ""
	}
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if inImport {
			inImport = !strings.Contains(l, ")")
			continue
		}
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(l) < indent || strings.TrimLeft(l[:indent], " ") != "" {
			// Shallower than the level read: the class's own header.
			other.WriteString(l + "\n")
			continue
		}
		l = l[indent:]
		top := l[0] != ' ' && l[0] != '\t' && l[0] != ')' && l[0] != ']' && l[0] != '}'
		switch {
		case top && strings.HasPrefix(l, "@"):
			flush()
			decorators.WriteString(l + "\n")
		case top && blockStart.MatchString(l):
			flush()
			name = blockStart.FindStringSubmatch(l)[1]
			cur.WriteString(decorators.String() + l + "\n")
			decorators.Reset()
		case top && (strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "from ")):
			flush()
			inImport = strings.Contains(l, "(") && !strings.Contains(l, ")")
		case top:
			flush()
			other.WriteString(decorators.String() + l + "\n")
			decorators.Reset()
		case name != "":
			cur.WriteString(l + "\n")
		default:
			other.WriteString(l + "\n")
		}
	}
	flush()
	return other.String(), blocks
}
