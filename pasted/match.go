package pasted

import (
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Hidden is one hidden test file of an approved version: its path in the
// version and its source (the card's masked copy).
type Hidden struct {
	// Label names the version the file belongs to ("v2").
	Label  string
	Path   string
	Source string
}

// Match is a hidden test found in a text.
type Match struct {
	// Label is the hidden file's version, Path its path.
	Label string `json:"version"`
	Path  string `json:"hidden_file"`
	// Test is the test matched ("test_parse", "TestX::test_y"), or "" when
	// the file as a whole matched (pieces of several of its tests).
	Test string `json:"test,omitempty"`
	// Matched of Of are the test's new shingles the text contains.
	Matched int `json:"matched"`
	Of      int `json:"of"`
	// FirstLine and LastLine are the lines of the text the matched
	// shingles start on.
	FirstLine int `json:"first_line"`
	LastLine  int `json:"last_line"`
}

// String says what matched, in counts and names only: no hidden text.
func (m Match) String() string {
	what := m.Path
	if m.Test != "" {
		what += "::" + m.Test
	}
	return fmt.Sprintf("%s %s (%d of its %d new shingles, lines %d-%d)", m.Label, what, m.Matched, m.Of, m.FirstLine, m.LastLine)
}

// unit is one test (or a file's lines outside its tests) with its new
// shingles: those that occur nowhere in the base.
type unit struct {
	label, path, test string
	shingles          map[uint64]bool
}

// Index holds the new shingles of a set of hidden files, ready to be
// compared with texts.
type Index struct {
	o     Options
	units []unit
	// files maps label+path to the union of its units' shingles.
	files map[[2]string]map[uint64]bool
}

// Base is the set of shingles of a base tree's files.
type Base map[uint64]bool

// NewBase reads the files of the base tree (any text: sources, tests,
// docs) into the shingles a hidden test's must differ from.
func NewBase(files [][]byte, o Options) Base {
	b := Base{}
	for _, f := range files {
		for _, h := range shingles(lex(string(f), o), o.K) {
			b[h.hash] = true
		}
	}
	return b
}

// NewIndex builds the index of hidden files against a base (nil for
// none).
func NewIndex(hidden []Hidden, base Base, o Options) *Index {
	ix := &Index{o: o, files: map[[2]string]map[uint64]bool{}}
	for _, h := range hidden {
		key := [2]string{h.Label, h.Path}
		if ix.files[key] == nil {
			ix.files[key] = map[uint64]bool{}
		}
		for _, u := range splitTests(h.Source) {
			set := map[uint64]bool{}
			for _, chunk := range strings.Split(u.text, chunkBreak) {
				for _, s := range shingles(lex(chunk, o), o.K) {
					if !base[s.hash] {
						set[s.hash] = true
						ix.files[key][s.hash] = true
					}
				}
			}
			// A test with fewer than MinTest new shingles is matched only
			// as part of its file.
			if len(set) > 0 && len(set) >= o.MinTest {
				ix.units = append(ix.units, unit{label: h.Label, path: h.Path, test: u.name, shingles: set})
			}
		}
	}
	return ix
}

// Empty says the index holds no new shingle (no hidden file, or hidden
// files that add nothing to the base).
func (ix *Index) Empty() bool {
	for _, set := range ix.files {
		if len(set) > 0 {
			return false
		}
	}
	return true
}

// Find returns the hidden tests a text contains, one match per test, and a
// match per file when its tests' pieces together do though no single test
// does; sorted by label, path and test.
func (ix *Index) Find(text string) []Match {
	at := places(text, ix.o)
	var out []Match
	matchedFile := map[[2]string]bool{}
	for _, u := range ix.units {
		if m, ok := ix.judge(u.shingles, at); ok {
			m.Label, m.Path, m.Test = u.label, u.path, u.test
			out = append(out, m)
			matchedFile[[2]string{u.label, u.path}] = true
		}
	}
	for key, set := range ix.files {
		if matchedFile[key] {
			continue
		}
		if m, ok := ix.judge(set, at); ok {
			m.Label, m.Path = key[0], key[1]
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		return strings.Compare(a.Label+"\x00"+a.Path+"\x00"+a.Test, b.Label+"\x00"+b.Path+"\x00"+b.Test)
	})
	return out
}

func (ix *Index) judge(set map[uint64]bool, at map[uint64][]int) (Match, bool) {
	m := Match{Of: len(set), FirstLine: math.MaxInt}
	for h := range set {
		lines, ok := at[h]
		if !ok {
			continue
		}
		m.Matched++
		m.FirstLine = min(m.FirstLine, lines[0])
		m.LastLine = max(m.LastLine, lines[len(lines)-1])
	}
	return m, m.Matched >= ix.need(len(set))
}

// need is how many of a test's (or file's) n new shingles a text must
// hold to match it.
func (ix *Index) need(n int) int {
	return max(ix.o.MinShingles, int(math.Ceil(ix.o.MinFraction*float64(n))))
}

type shingle struct {
	hash uint64
	line int
}

// places are the lines of text its shingles start on, by hash.
func places(text string, o Options) map[uint64][]int {
	at := map[uint64][]int{}
	for _, s := range shingles(lex(text, o), o.K) {
		at[s.hash] = append(at[s.hash], s.line)
	}
	return at
}

func shingles(toks []token, k int) []shingle {
	if len(toks) < k {
		return nil
	}
	out := make([]shingle, 0, len(toks)-k+1)
	for i := 0; i+k <= len(toks); i++ {
		h := fnv.New64a()
		for _, t := range toks[i : i+k] {
			h.Write([]byte(t.text))
			h.Write([]byte{0})
		}
		out = append(out, shingle{h.Sum64(), toks[i].line})
	}
	return out
}

type testUnit struct {
	name, text string
}

var defLine = regexp.MustCompile(`^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+([A-Za-z_][A-Za-z_0-9]*)`)

// splitTests cuts a Python file into its tests: every function at the top
// level and every method of a class at the top level, each with its
// decorators; the rest (imports, helpers' classes' own lines, constants)
// is one unit named "" of its own.
func splitTests(src string) []testUnit {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }
	blank := func(l string) bool { t := strings.TrimSpace(l); return t == "" || strings.HasPrefix(t, "#") }
	var units []testUnit
	// rest are the lines outside the tests; a test's place in it is
	// marked so that no shingle spans the lines before and after it.
	var rest []string
	class := ""
	for i := 0; i < len(lines); {
		l := lines[i]
		m := defLine.FindStringSubmatch(l)
		if m != nil && len(m[1]) == 0 && m[2] == "class" {
			class = m[3]
			rest = append(rest, l)
			i++
			continue
		}
		if m == nil || m[2] != "def" || (len(m[1]) > 0 && class == "") {
			if !blank(l) && indent(l) == 0 {
				class = ""
			}
			rest = append(rest, l)
			i++
			continue
		}
		if len(m[1]) == 0 {
			class = ""
		}
		// Decorators directly above belong to the test, with their
		// continuation lines (a parametrize list over several lines).
		start := i
		for j := i - 1; j >= 0; j-- {
			t := strings.TrimSpace(lines[j])
			if t == "" {
				break
			}
			if strings.HasPrefix(t, "@") {
				start = j
				continue
			}
			if indent(lines[j]) <= len(m[1]) && !strings.HasPrefix(t, ")") && !strings.HasPrefix(t, "]") && !strings.HasPrefix(t, "}") {
				break
			}
		}
		if n := i - start; n > 0 {
			rest = rest[:max(0, len(rest)-n)]
			rest = append(rest, "")
		}
		end := i + 1
		for end < len(lines) && (blank(lines[end]) || indent(lines[end]) > len(m[1])) {
			end++
		}
		name := m[3]
		if len(m[1]) > 0 {
			name = class + "::" + name
		}
		units = append(units, testUnit{name: name, text: strings.Join(lines[start:end], "\n")})
		rest = append(rest, chunkBreak)
		i = end
	}
	if len(rest) > 0 {
		units = append(units, testUnit{name: ModuleLevel, text: strings.ReplaceAll(strings.Join(rest, "\n"), "\n"+chunkBreak+"\n", chunkBreak)})
	}
	return units
}

// chunkBreak separates the runs of a file's module-level lines.
const chunkBreak = "\x00"

// ModuleLevel names a hidden file's lines outside its tests (imports,
// constants, the lines of a class outside its methods).
const ModuleLevel = "(module level)"

// Test is one test of a Python file as the index cuts it: a top-level
// function or a method of a top-level class (Name "Class::method"), with
// its decorators, or the file's other lines (Name ModuleLevel).
type Test struct {
	Name, Source string
}

// Tests cuts a Python file into the tests the index matches one by one.
func Tests(src string) []Test {
	var out []Test
	for _, u := range splitTests(src) {
		out = append(out, Test{u.name, u.text})
	}
	return out
}

// Tokens is the number of normalised tokens of text.
func Tokens(text string, o Options) int { return len(lex(text, o)) }

// Nearest is the test (or file) of the index that text comes closest to
// matching, with the number of its new shingles a match would need: what
// a miss fell short by. ok is false when text holds no new shingle of any
// test.
func (ix *Index) Nearest(text string) (m Match, need int, ok bool) {
	at := places(text, ix.o)
	best := -1.0
	for _, u := range ix.units {
		c, _ := ix.judge(u.shingles, at)
		n := ix.need(len(u.shingles))
		if score := float64(c.Matched) / float64(n); c.Matched > 0 && score > best {
			best, m, need, ok = score, c, n, true
			m.Label, m.Path, m.Test = u.label, u.path, u.test
		}
	}
	return m, need, ok
}

// Novel is the number of text's shingles that are not in the base b.
func (b Base) Novel(text string, o Options) (novel, all int) {
	for _, s := range shingles(lex(text, o), o.K) {
		all++
		if !b[s.hash] {
			novel++
		}
	}
	return novel, all
}
