package wrapper

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"path"
	"strings"
)

// sentinelWords make sentinel names look like the names of ordinary tests.
var sentinelWords = []string{
	"empty", "single", "many", "order", "unicode", "spaces", "limit", "negative",
	"zero", "large", "nested", "repeat", "default", "invalid", "missing", "mixed",
	"upper", "lower", "trailing", "leading", "duplicate", "boundary", "round", "split",
	"join", "count", "parse", "format", "merge", "sorted", "reverse", "window",
}

// randInt returns a uniform random number in [0, n). crypto/rand.Int
// fails only if the reader does, and since Go 1.24 crypto/rand's Reader
// never returns an error (it crashes the program instead), so the error
// carries no case to handle.
func randInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}

func randWord() string { return sentinelWords[randInt(len(sentinelWords))] }

// sentinelModule makes a test module holding one test that must pass and
// one that must fail. If the runner reports either the other way round, or
// not at all, something bent it. The module is made hard to tell apart from
// the hidden test files: it sits in the directory of one of them, starts
// with a canary line shaped like theirs, and has names and bodies that look
// like ordinary tests and change with every grade. taken reports whether a
// path is already in use.
func sentinelModule(expected []ExpectedTest, canaries []string, taken func(string) bool) (file string, source []byte, sentinels []Sentinel) {
	dir := ""
	if len(expected) > 0 {
		dir = path.Dir(expected[randInt(len(expected))].File)
		if dir == "." {
			dir = ""
		}
	}
	for {
		file = path.Join(dir, "test_"+randWord()+"_"+randWord()+".py")
		if !taken(file) {
			break
		}
	}
	pass := "test_" + randWord() + "_" + randWord()
	fail := pass
	for fail == pass {
		fail = "test_" + randWord() + "_" + randWord()
	}
	var b strings.Builder
	if len(canaries) > 0 {
		fmt.Fprintf(&b, "# testfirst-canary: %s\n", lookalikeToken(canaries[randInt(len(canaries))]))
	}
	x, y := 2+randInt(50), 2+randInt(50)
	fmt.Fprintf(&b, "\n\ndef %s():\n    assert %d + %d == %d\n", pass, x, y, x+y)
	fmt.Fprintf(&b, "\n\ndef %s():\n    assert %d * %d == %d\n", fail, x, y, x*y+1)
	module := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
	return file, []byte(b.String()), []Sentinel{
		{ClassName: module, Name: pass, MustPass: true},
		{ClassName: module, Name: fail, MustPass: false},
	}
}

// lookalikeToken returns a fresh token shaped like tok: the same prefix up to
// its last '-', then as many random hex digits as tok has after it.
func lookalikeToken(tok string) string {
	prefix, rest := "", tok
	if i := strings.LastIndexByte(tok, '-'); i >= 0 {
		prefix, rest = tok[:i+1], tok[i+1:]
	}
	const hex = "0123456789abcdef"
	b := make([]byte, max(len(rest), 8))
	for i := range b {
		b[i] = hex[randInt(len(hex))]
	}
	return prefix + string(b)
}
