package pasted

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one normalised token and the line of the text it starts on
// (1-based).
type token struct {
	text string
	line int
}

// Options say how text is normalised and compared. The zero value is not
// useful; start from Default.
type Options struct {
	// K is the number of tokens in a shingle.
	K int
	// KeepAttributes keeps a name that follows a dot (an attribute, a
	// method of the library under test) instead of the name placeholder.
	KeepAttributes bool
	// KeepBuiltins keeps Python's builtin names (len, isinstance,
	// ValueError) instead of the name placeholder.
	KeepBuiltins bool
	// KeepLiterals keeps string literals' contents (quote style and
	// prefix normalised) and numbers as written.
	KeepLiterals bool
	// MinShingles is the fewest new shingles of one hidden test (or file)
	// a text must contain to match it.
	MinShingles int
	// MinFraction is the least share of a hidden test's (or file's) new
	// shingles a text must contain to match it.
	MinFraction float64
	// MinTest, when set, is the fewest new shingles a hidden test must
	// have to be matched alone: a smaller one (a three-line dunder
	// helper, a one-assert test) counts only as part of its file.
	MinTest int
}

// Default are the options testfirst uses, chosen by the measurement in
// docs/pasted-tests.md.
var Default = Options{K: 10, KeepAttributes: true, KeepBuiltins: true, KeepLiterals: true, MinShingles: 3, MinFraction: 0.12, MinTest: 6}

var keywords = set("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield")

var builtins = set("abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview min next object oct open ord pow print property range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip " +
	"BaseException Exception ArithmeticError AssertionError AttributeError EOFError ImportError ModuleNotFoundError IndexError KeyError KeyboardInterrupt LookupError MemoryError NameError NotImplementedError OSError OverflowError RecursionError RuntimeError StopIteration SyntaxError SystemError TypeError UnboundLocalError UnicodeError UnicodeDecodeError UnicodeEncodeError ValueError ZeroDivisionError Warning DeprecationWarning UserWarning FileNotFoundError NotImplemented Ellipsis self cls")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// threeOps and twoOps are Python's operators of more than one character.
var threeOps = set("**= //= >>= <<= ...")
var twoOps = set("== != <= >= -> := ** // << >> += -= *= /= %= &= |= ^= @=")

// cleanLines drops what markdown and consoles wrap code in: block-quote
// markers and fence lines, and doctest prompts.
func cleanLines(text string) []string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		for strings.HasPrefix(t, ">") && !strings.HasPrefix(t, ">>>") {
			t = strings.TrimLeft(t[1:], " \t")
			l = t
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			l = ""
		} else if strings.HasPrefix(t, ">>> ") || strings.HasPrefix(t, "... ") || t == ">>>" || t == "..." {
			l = strings.TrimPrefix(strings.TrimPrefix(t, ">>>"), "...")
		}
		lines[i] = l
	}
	return lines
}

// lex reads text as Python, tolerantly: whatever is not Python (prose,
// markdown) becomes tokens too, which simply match nothing. It returns
// the normalised tokens.
func lex(text string, o Options) []token {
	src := strings.Join(cleanLines(text), "\n")
	var out []token
	line := 1
	lineStart := true // no token yet on this line
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\\' || c == '`':
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		startLine, first := line, lineStart
		lineStart = false
		if q, n := stringStart(src[i:]); q != "" {
			body, end, lines := readString(src, i+n, q)
			i = end
			line += lines
			// A string alone on its line(s) is a docstring or a
			// comment-like literal: dropped.
			if first && restOfLineBlank(src, i) {
				continue
			}
			t := "S"
			if o.KeepLiterals {
				t = "S:" + body
			}
			out = append(out, token{t, startLine})
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == '_' || unicode.IsLetter(r):
			j := i + size
			for j < len(src) {
				r2, s2 := utf8.DecodeRuneInString(src[j:])
				if r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
					break
				}
				j += s2
			}
			name := src[i:j]
			t := "N"
			switch {
			case keywords[name]:
				t = name
			case o.KeepBuiltins && builtins[name]:
				t = name
			case o.KeepAttributes && len(out) > 0 && out[len(out)-1].text == ".":
				t = "." + name
				out = out[:len(out)-1]
			}
			out = append(out, token{t, startLine})
			i = j
		case unicode.IsDigit(r) || (c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9'):
			j := i + 1
			for j < len(src) && (isNumChar(src[j]) || ((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			t := "0"
			if o.KeepLiterals {
				t = strings.ReplaceAll(strings.ToLower(src[i:j]), "_", "")
			}
			out = append(out, token{t, startLine})
			i = j
		default:
			n := size
			if i+3 <= len(src) && threeOps[src[i:i+3]] {
				n = 3
			} else if i+2 <= len(src) && twoOps[src[i:i+2]] {
				n = 2
			}
			t := src[i : i+n]
			i += n
			if (t == ")" || t == "]" || t == "}") && len(out) > 0 && out[len(out)-1].text == "," {
				out = out[:len(out)-1] // a trailing comma, which formatters add and remove
			}
			out = append(out, token{t, startLine})
		}
	}
	return out
}

func isNumChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.'
}

// stringStart returns the quote of a string literal that starts s (with
// its prefix's length included in n), or "".
func stringStart(s string) (quote string, n int) {
	p := 0
	for p < len(s) && p < 2 && strings.ContainsRune("rRbBuUfF", rune(s[p])) {
		p++
	}
	if p >= len(s) || (s[p] != '\'' && s[p] != '"') {
		return "", 0
	}
	q := s[p : p+1]
	if strings.HasPrefix(s[p:], q+q+q) {
		q = q + q + q
	}
	return q, p + len(q)
}

// readString reads a string literal's body from i (past its opening
// quote) to its closing quote. A one-line string that is not closed ends
// at the end of its line (an apostrophe in prose). It returns the body
// with its whitespace collapsed, the index past the literal and the line
// breaks it crossed.
func readString(src string, i int, q string) (string, int, int) {
	start, lines := i, 0
	for i < len(src) {
		switch {
		case src[i] == '\\' && i+1 < len(src):
			if src[i+1] == '\n' {
				lines++
			}
			i += 2
			continue
		case strings.HasPrefix(src[i:], q):
			return strings.Join(strings.Fields(src[start:i]), " "), i + len(q), lines
		case src[i] == '\n':
			if len(q) == 1 {
				return strings.Join(strings.Fields(src[start:i]), " "), i, lines
			}
			lines++
		}
		i++
	}
	return strings.Join(strings.Fields(src[start:]), " "), i, lines
}

func restOfLineBlank(src string, i int) bool {
	for ; i < len(src) && src[i] != '\n'; i++ {
		if src[i] == '#' {
			return true
		}
		if src[i] != ' ' && src[i] != '\t' && src[i] != '\r' && src[i] != '`' {
			return false
		}
	}
	return true
}
