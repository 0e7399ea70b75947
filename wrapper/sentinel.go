package wrapper

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ListedModule is what the listing of the hidden tests says about one
// hidden test module, read from its syntax tree before any code under test
// exists in the container.
type ListedModule struct {
	File string `json:"file"`
	// Host is true when sentinels may be appended to the module: it has no
	// fixtures, module marks, star imports or functions pytest runs around
	// its tests, any of which could change a sentinel's outcome.
	Host bool `json:"host"`
	// Calls are calls of the code under test that its plain test functions
	// make.
	Calls []ListedCall `json:"calls"`
	// Hooked is true when a hidden conftest.py in the module's directory or
	// above hooks the run or has autouse fixtures: a sentinel module beside
	// it would share them.
	Hooked bool `json:"hooked,omitempty"`
}

// ListedCall is one call a hidden test makes, as a statement of its own.
type ListedCall struct {
	// Test is the test function that makes it.
	Test string `json:"test"`
	// Call is its source, as ast.unparse gives it.
	Call string `json:"call"`
	// Target is the variable it is assigned to, if any.
	Target string `json:"target"`
}

// maxSentinelHosts bounds the hidden modules that get sentinels.
const maxSentinelHosts = 2

// randInt returns a uniform random number in [0, n). crypto/rand.Int
// fails only if the reader does, and since Go 1.24 crypto/rand's Reader
// never returns an error (it crashes the program instead), so the error
// carries no case to handle.
func randInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

// writeSentinels writes the sentinels of a run into the hidden tests in dir
// and returns them: tests with an outcome known whatever the code under test
// does, one that must pass and one that must fail per host module. If the
// runner reports either the other way round, or not at all, something bent
// it.
//
// Sentinels are hard to tell from the hidden tests: they are appended to
// (the wrapper's copy of) a hidden module, so they carry its real canary,
// its imports and its module name; they are named from the words of their
// neighbours' names; and they make a call that a neighbouring test makes.
// Their outcome still holds for any implementation, honest or not, as long
// as the runner is not bent:
//
//	def test_frequencies_of_text():
//	    try:
//	        result = stats.frequencies(TEXT)
//	    except BaseException:
//	        result = None
//	    assert isinstance(result, object)       # must pass
//	    assert not isinstance(result, object)   # must fail
//
// whatever the call returns or raises (an exception of the code under test,
// pytest.skip, SystemExit), isinstance(x, object) is true for every x, and
// neither isinstance, object nor BaseException can be rebound by the code
// under test in the module's namespace (hosts with star imports or that
// bind those names are not chosen). Hosts have no fixtures, marks or
// setup/teardown functions, so nothing but the body decides the outcome.
// With no host, the sentinels go in a module of their own beside a hidden
// one, with its canary line.
//
// It is the one function every run of hidden tests calls after listing
// them, so that sentinels are never listed as hidden tests.
func writeSentinels(dir string, expected []ExpectedTest, modules []ListedModule) ([]Sentinel, error) {
	var hosts []ListedModule
	for _, m := range modules {
		if m.Host && slices.ContainsFunc(expected, func(e ExpectedTest) bool { return e.File == m.File }) {
			hosts = append(hosts, m)
		}
	}
	if len(hosts) > 1 {
		// The last module's last test is where pytest reports the errors of
		// session-wide teardowns: no sentinel goes there.
		hosts = hosts[:len(hosts)-1]
	}
	if len(hosts) == 0 {
		return writeSentinelModule(dir, expected, modules)
	}
	for len(hosts) > maxSentinelHosts {
		i := randInt(len(hosts))
		hosts = slices.Delete(hosts, i, i+1)
	}
	var out []Sentinel
	for _, h := range hosts {
		file := filepath.Join(dir, filepath.FromSlash(h.File))
		source, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read hidden module %s: %w", h.File, err)
		}
		words := nameWords(expected, h.File)
		var b strings.Builder
		if len(source) > 0 && source[len(source)-1] != '\n' {
			b.WriteByte('\n')
		}
		taken := func(name string) bool {
			return wordIn(source, name) || strings.Contains(b.String(), name)
		}
		first := randInt(2) == 0
		for _, mustPass := range []bool{first, !first} {
			var call ListedCall
			if len(h.Calls) > 0 {
				call = h.Calls[randInt(len(h.Calls))]
			}
			name := sentinelName(call.Test, words, taken)
			b.WriteString(sentinelBody(name, call, mustPass))
			out = append(out, Sentinel{ClassName: moduleName(h.File), Name: name, MustPass: mustPass})
		}
		if err := appendFile(file, b.String()); err != nil {
			return nil, fmt.Errorf("append sentinels to %s: %w", h.File, err)
		}
	}
	return out, nil
}

// writeSentinelModule writes the sentinels into a module of their own, in
// the directory of a hidden module and with that module's canary line,
// for hidden tests none of whose modules can host them.
func writeSentinelModule(dir string, expected []ExpectedTest, modules []ListedModule) ([]Sentinel, error) {
	var words []string
	for _, e := range expected {
		words = append(words, nameWords(expected, e.File)...)
	}
	// The neighbour is a module no hidden conftest hooks, if there is one:
	// its hooks and autouse fixtures would run around the sentinels too.
	hooked := map[string]bool{}
	for _, m := range modules {
		hooked[m.File] = m.Hooked
	}
	var files []string
	for _, e := range expected {
		if !hooked[e.File] && !slices.Contains(files, e.File) {
			files = append(files, e.File)
		}
	}
	if len(files) == 0 {
		for _, e := range expected {
			files = append(files, e.File)
		}
	}
	if len(files) == 0 {
		for _, m := range modules {
			files = append(files, m.File)
		}
	}
	neighbour := ""
	if len(files) > 0 {
		neighbour = files[randInt(len(files))]
	}
	var head string
	if neighbour != "" {
		if src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(neighbour))); err == nil {
			if m := canaryLine.Find(src); m != nil {
				head = string(m) + "\n"
			}
		}
	}
	rel := ""
	sentinelName("", words, func(name string) bool {
		rel = path.Join(path.Dir(cmp.Or(neighbour, "x")), name+".py")
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		return err == nil
	})
	var b strings.Builder
	b.WriteString(head)
	var out []Sentinel
	taken := func(name string) bool { return strings.Contains(b.String(), name) }
	for _, mustPass := range []bool{true, false} {
		name := sentinelName("", words, taken)
		b.WriteString(sentinelBody(name, ListedCall{}, mustPass))
		out = append(out, Sentinel{ClassName: moduleName(rel), Name: name, MustPass: mustPass})
	}
	if err := writeFile(dir, rel, 0o644, strings.NewReader(b.String())); err != nil {
		return nil, err
	}
	return out, nil
}

// canaryLine is the store's canary line (see grader.CanaryLine).
var canaryLine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*testfirst-canary:[ \t]*[A-Za-z0-9_-]{8,}`)

// moduleName is the JUnit classname pytest gives the module-level tests of
// a hidden file: "tests/test_x.py" -> "tests.test_x".
func moduleName(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
}

// nameWords returns the words of the names of the hidden tests of file:
// "test_top_words_length" gives "top", "words", "length".
func nameWords(expected []ExpectedTest, file string) []string {
	var words []string
	for _, e := range expected {
		if e.File != file {
			continue
		}
		for _, w := range testWords(e.Name) {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	return words
}

// plainWord is a word a sentinel name may be made of.
var plainWord = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

func testWords(name string) []string {
	var words []string
	for _, w := range strings.Split(strings.ToLower(strings.TrimPrefix(name, "test")), "_") {
		if plainWord.MatchString(w) {
			words = append(words, w)
		}
	}
	return words
}

// sentinelName makes a test name like its neighbours': the first words of
// donor's name (a neighbouring test whose call the sentinel makes), then
// one or two words of the module's test names. taken reports a name that
// is already in use; a name is never a word of the module's source, so it
// neither shadows a test nor hides in another name.
func sentinelName(donor string, words []string, taken func(string) bool) string {
	if len(words) == 0 {
		words = []string{"value", "check"}
	}
	lead := testWords(donor)
	for try := 0; ; try++ {
		var parts []string
		if len(lead) > 0 {
			parts = append(parts, lead[:1+randInt(min(len(lead), 3))]...)
		}
		fromDonor := len(parts)
		for range 1 + randInt(2) + try/20 {
			w := words[randInt(len(words))]
			if slices.Contains(parts, w) && try < 40 {
				continue
			}
			parts = append(parts, w)
		}
		name := "test_" + strings.Join(parts, "_")
		// At least one word of the module's names follows the donor's:
		// a name of the donor's first word alone is the module's own.
		if len(parts) == fromDonor && try < 40 {
			continue
		}
		if !taken(name) {
			return name
		}
	}
}

// wordIn reports whether name occurs in source as a whole word.
func wordIn(source []byte, name string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).Match(source)
}

// sentinelBody is the source of one sentinel test, appended at the end of a
// module.
func sentinelBody(name string, call ListedCall, mustPass bool) string {
	expr := call.Call
	if expr == "" || strings.ContainsAny(expr, "\n\r") {
		expr = "None"
	}
	target := call.Target
	if target == "" || target == "isinstance" || target == "object" || target == "BaseException" {
		target = "result"
	}
	assertion := "isinstance(" + target + ", object)"
	if !mustPass {
		assertion = "not " + assertion
	}
	return fmt.Sprintf("\n\ndef %s():\n    try:\n        %s = %s\n    except BaseException:\n        %s = None\n    assert %s\n",
		name, target, expr, target, assertion)
}

// appendFile appends text to the regular file at name, never through a
// symlink.
func appendFile(name, text string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|syscallNoFollow, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
