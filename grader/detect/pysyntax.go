package detect

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// PythonSyntaxError is a syntax error that Python certainly raises on a
// source: the line it is on and what is wrong, in Python's own words where
// Python has them.
type PythonSyntaxError struct {
	Line int
	Msg  string
}

func (e *PythonSyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// CheckPythonSyntax returns the first syntax error in a Python source that
// is certain without a parser, or nil. It reads the source as Python's
// tokenizer does and reports what every Python 3 rejects: null bytes, bytes
// that are not UTF-8 with no coding line, unterminated strings, brackets
// that do not match or are never closed, a character after a line
// continuation, characters that are never valid outside strings and
// comments (`$`, `?`, a backquote, a lone `!`, a control character, the
// typographic quotes, dashes and spaces of pasted text), a single `}` in an
// f-string, and indentation: an indent nothing opened, an unindent to no
// outer level, a block header (a logical line ending in `:`) with no
// indented block after it, tabs and spaces whose order depends on the tab
// size. A missing colon usually shows as one of these.
//
// Nil does not mean the source compiles: everything else is left to the
// interpreter. Whatever is unsure is nil: a source with a coding line for
// another encoding, and any f-string whose replacement fields this reader
// cannot follow, are not checked. A file Python accepts must never get an
// error here (TestCheckPythonSyntaxAgreesWithPython compares it with the
// interpreter on every Python file of this machine and on mutants of
// them).
func CheckPythonSyntax(data []byte) *PythonSyntaxError {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &PythonSyntaxError{Line: 1 + bytes.Count(data[:i], []byte("\n")), Msg: "source code cannot contain null bytes"}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if name := declaredEncoding(data); name != "" && !isUTF8Name(name) {
		return nil
	}
	if !utf8.Valid(data) {
		line := 1
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return &PythonSyntaxError{Line: line, Msg: fmt.Sprintf("Non-UTF-8 code starting with '\\x%02x', but no encoding declared", data[i])}
			}
			if r == '\n' {
				line++
			}
			i += n
		}
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	s := &pyScanner{text: text, line: 1, indents: []indent{{}}}
	err := s.run()
	var se *PythonSyntaxError
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// errUnsure stops a check that met something it cannot follow: the source
// is then not judged.
var errUnsure = errors.New("not followed")

// indent is an indentation level as Python's tokenizer keeps it: columns
// with tabs to multiples of 8 and with tabs as one column.
type indent struct{ col, alt int }

type bracket struct {
	ch   byte
	line int
}

// pyScanner reads a source's tokens as far as CheckPythonSyntax needs them.
type pyScanner struct {
	text     string
	pos      int
	line     int
	indents  []indent
	brackets []bracket
	// last is the last token of the logical line so far ("" before its
	// first); header is the line of the last logical line when it ended
	// in a colon, else 0.
	last   string
	header int
	// first is the first token of the logical line; topColon is true once
	// it has a colon outside brackets; noColon is the line of the last
	// logical line when it began with a compound statement's keyword and
	// had no such colon, else 0.
	first    string
	topColon bool
	noColon  int
}

// compoundKeywords begin the headers of compound statements, which end in
// a colon.
var compoundKeywords = map[string]bool{
	"def": true, "class": true, "if": true, "elif": true, "else": true, "for": true, "while": true,
	"try": true, "except": true, "finally": true, "with": true, "async": true,
}

func (s *pyScanner) fail(line int, format string, args ...any) error {
	return &PythonSyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// run reads logical lines to the end of the text.
func (s *pyScanner) run() error {
	for {
		done, err := s.lineStart()
		if done || err != nil {
			return err
		}
		if err := s.logicalLine(); err != nil {
			return err
		}
	}
}

// lineStart reads the indentation of the next line that holds a token and
// checks it against the levels open; done is true at the end of the text.
func (s *pyScanner) lineStart() (done bool, err error) {
	for {
		var cur indent
		for s.pos < len(s.text) {
			switch s.text[s.pos] {
			case ' ':
				cur.col++
				cur.alt++
			case '\t':
				cur.col = (cur.col/8 + 1) * 8
				cur.alt++
			case '\f':
				cur = indent{}
			default:
				goto measured
			}
			s.pos++
		}
	measured:
		if s.pos >= len(s.text) {
			if s.header > 0 {
				return true, s.fail(s.line, "expected an indented block after line %d", s.header)
			}
			return true, nil
		}
		switch s.text[s.pos] {
		case '#':
			s.skipComment()
			continue
		case '\n':
			s.pos++
			s.line++
			continue
		case '\\':
			// A continuation before any token: where Python takes such a
			// line's indentation from is not followed here.
			return true, errUnsure
		}
		return false, s.indent(cur)
	}
}

// indent checks a logical line's indentation cur against the open levels.
func (s *pyScanner) indent(cur indent) error {
	top := s.indents[len(s.indents)-1]
	header, noColon := s.header, s.noColon
	s.header, s.noColon = 0, 0
	switch {
	case cur.col > top.col:
		if cur.alt <= top.alt {
			return s.fail(s.line, "inconsistent use of tabs and spaces in indentation")
		}
		if header == 0 && noColon > 0 {
			return s.fail(noColon, "expected ':'")
		}
		if header == 0 {
			return s.fail(s.line, "unexpected indent")
		}
		s.indents = append(s.indents, cur)
		return nil
	case header > 0:
		return s.fail(s.line, "expected an indented block after line %d", header)
	case cur.col == top.col:
		if cur.alt != top.alt {
			return s.fail(s.line, "inconsistent use of tabs and spaces in indentation")
		}
		return nil
	}
	for len(s.indents) > 1 && cur.col < s.indents[len(s.indents)-1].col {
		s.indents = s.indents[:len(s.indents)-1]
	}
	top = s.indents[len(s.indents)-1]
	if cur.col != top.col {
		return s.fail(s.line, "unindent does not match any outer indentation level")
	}
	if cur.alt != top.alt {
		return s.fail(s.line, "inconsistent use of tabs and spaces in indentation")
	}
	return nil
}

func (s *pyScanner) skipComment() {
	if i := strings.IndexByte(s.text[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.text)
	}
}

// logicalLine reads tokens to the newline that ends the logical line (or
// the end of the text).
func (s *pyScanner) logicalLine() error {
	s.last, s.first, s.topColon = "", "", false
	for s.pos < len(s.text) {
		if s.first == "" && s.last != "" {
			s.first = s.last
		}
		c := s.text[s.pos]
		switch {
		case c == '\n':
			s.pos++
			s.line++
			if len(s.brackets) == 0 {
				if s.first == "" {
					s.first = s.last
				}
				switch {
				case s.last == ":":
					s.header = s.line - 1
				case compoundKeywords[s.first] && !s.topColon:
					s.noColon = s.line - 1
				}
				return nil
			}
		case c == ' ' || c == '\t' || c == '\f':
			s.pos++
		case c == '#':
			s.skipComment()
		case c == '\\':
			if s.pos+1 < len(s.text) && s.text[s.pos+1] == '\n' {
				s.pos += 2
				s.line++
				continue
			}
			if s.pos+1 >= len(s.text) {
				return errUnsure
			}
			return s.fail(s.line, "unexpected character after line continuation character")
		case c == '"' || c == '\'':
			if err := s.str("", 0); err != nil {
				return err
			}
			s.last = "str"
		case c >= '0' && c <= '9' || c == '.' && s.pos+1 < len(s.text) && isDigit(s.text[s.pos+1]):
			s.number()
			s.last = "num"
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			if err := s.name(); err != nil {
				return err
			}
		case strings.IndexByte("([{", c) >= 0:
			s.brackets = append(s.brackets, bracket{c, s.line})
			s.pos++
			s.last = string(c)
		case strings.IndexByte(")]}", c) >= 0:
			if err := s.close(c); err != nil {
				return err
			}
			s.pos++
			s.last = string(c)
		case c == ':':
			s.pos++
			s.last = ":"
			if s.pos < len(s.text) && s.text[s.pos] == '=' {
				s.pos++
				s.last = ":="
			} else if len(s.brackets) == 0 {
				s.topColon = true
			}
		case c == '!':
			if s.pos+1 < len(s.text) && s.text[s.pos+1] == '=' {
				s.pos += 2
				s.last = "!="
				continue
			}
			return s.fail(s.line, "invalid syntax")
		case c == '$' || c == '?' || c == '`':
			return s.fail(s.line, "invalid syntax")
		case c < 0x20 || c == 0x7f:
			return s.fail(s.line, "invalid non-printable character U+%04X", c)
		default:
			s.pos++
			s.last = string(c)
		}
	}
	if len(s.brackets) > 0 {
		b := s.brackets[len(s.brackets)-1]
		return s.fail(b.line, "'%c' was never closed", b.ch)
	}
	if s.last == ":" {
		return s.fail(s.line, "expected an indented block after line %d", s.line)
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// close matches the closing bracket c against the innermost open one.
func (s *pyScanner) close(c byte) error {
	if len(s.brackets) == 0 {
		return s.fail(s.line, "unmatched '%c'", c)
	}
	b := s.brackets[len(s.brackets)-1]
	if want := map[byte]byte{'(': ')', '[': ']', '{': '}'}[b.ch]; want != c {
		if b.line != s.line {
			return s.fail(s.line, "closing parenthesis '%c' does not match opening parenthesis '%c' on line %d", c, b.ch, b.line)
		}
		return s.fail(s.line, "closing parenthesis '%c' does not match opening parenthesis '%c'", c, b.ch)
	}
	s.brackets = s.brackets[:len(s.brackets)-1]
	return nil
}

// number reads a numeric literal loosely: numbers are not checked.
func (s *pyScanner) number() {
	for s.pos < len(s.text) {
		c := s.text[s.pos]
		switch {
		case isDigit(c) || c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			s.pos++
			if (c == 'e' || c == 'E') && s.pos < len(s.text) && (s.text[s.pos] == '+' || s.text[s.pos] == '-') {
				s.pos++
			}
		default:
			return
		}
	}
}

// pastedCharacters are characters that are never part of a Python token,
// which pasted prose brings: Python reports each as an invalid character.
var pastedCharacters = map[rune]bool{
	'\u2018': true, '\u2019': true, '\u201c': true, '\u201d': true, // typographic quotes
	'\u2013': true, '\u2014': true, '\u2212': true, // dashes, minus sign
	'\u2026': true,                                                 // ellipsis
	'\uff08': true, '\uff09': true, '\uff0c': true, '\uff1a': true, // full-width ( ) , :
}

// unprintableCharacters are the spaces Python reports as invalid
// non-printable characters.
var unprintableCharacters = map[rune]bool{'\u00a0': true, '\u200b': true, '\u3000': true, '\ufeff': true}

// name reads an identifier, keyword or string prefix (and the string it
// prefixes). Any character outside ASCII that is not one pasted prose
// brings is taken as part of a name: whether it may be is Python's to say.
func (s *pyScanner) name() error {
	start := s.pos
	for s.pos < len(s.text) {
		c := s.text[s.pos]
		if c == '_' || isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			s.pos++
			continue
		}
		if c < 0x80 {
			break
		}
		r, n := utf8.DecodeRuneInString(s.text[s.pos:])
		if pastedCharacters[r] {
			return s.fail(s.line, "invalid character '%c' (U+%04X)", r, r)
		}
		if unprintableCharacters[r] {
			return s.fail(s.line, "invalid non-printable character U+%04X", r)
		}
		s.pos += n
	}
	word := s.text[start:s.pos]
	if s.pos < len(s.text) && (s.text[s.pos] == '"' || s.text[s.pos] == '\'') && isLiteralPrefix(word) {
		if err := s.str(word, 0); err != nil {
			return err
		}
		s.last = "str"
		return nil
	}
	s.last = word
	return nil
}

// isLiteralPrefix reports whether w is a string literal's prefix: r, b,
// u, f and t (Python 3.14's template strings, read as f-strings are), and
// their pairs, any case.
func isLiteralPrefix(w string) bool {
	return len(w) <= 2 && strings.Trim(strings.ToLower(w), "rbuft") == ""
}

// str reads a string literal whose quote is at s.pos, with its prefix.
// depth is how many f-string replacement fields it is inside: an error
// there is unsure, since Python's versions differ on what those may hold.
func (s *pyScanner) str(prefix string, depth int) error {
	p := strings.ToLower(prefix)
	fstring := strings.ContainsAny(p, "ft")
	q := s.text[s.pos]
	quote := string(q)
	if strings.HasPrefix(s.text[s.pos:], strings.Repeat(quote, 3)) {
		quote = strings.Repeat(quote, 3)
	}
	triple := len(quote) == 3
	start := s.line
	s.pos += len(quote)
	for {
		if s.pos >= len(s.text) {
			if depth > 0 {
				return errUnsure
			}
			end := s.line
			if strings.HasSuffix(s.text, "\n") {
				end--
			}
			if triple {
				return s.fail(start, "unterminated triple-quoted string literal (detected at line %d)", end)
			}
			return s.fail(start, "unterminated string literal (detected at line %d)", end)
		}
		c := s.text[s.pos]
		switch {
		case strings.HasPrefix(s.text[s.pos:], quote):
			s.pos += len(quote)
			return nil
		case c == '\n':
			if !triple {
				if depth > 0 {
					return errUnsure
				}
				return s.fail(start, "unterminated string literal (detected at line %d)", s.line)
			}
			s.line++
			s.pos++
		case c == '\\':
			// A backslash escapes a quote, itself and a newline, never an
			// f-string's brace: rf"\{c}" is a field.
			s.pos++
			if s.pos < len(s.text) && !(fstring && (s.text[s.pos] == '{' || s.text[s.pos] == '}')) {
				if s.text[s.pos] == '\n' {
					s.line++
				}
				s.pos++
			}
		case fstring && c == '{':
			if strings.HasPrefix(s.text[s.pos:], "{{") {
				s.pos += 2
				continue
			}
			s.pos++
			if err := s.field(depth + 1); err != nil {
				return err
			}
		case fstring && c == '}':
			if strings.HasPrefix(s.text[s.pos:], "}}") {
				s.pos += 2
				continue
			}
			if depth > 0 {
				return errUnsure
			}
			return s.fail(s.line, "f-string: single '}' is not allowed")
		default:
			s.pos++
		}
	}
}

// field reads an f-string's replacement field after its '{', through its
// '}'. Anything it cannot follow is unsure.
func (s *pyScanner) field(depth int) error {
	if depth > 16 {
		return errUnsure
	}
	open := 0
	for s.pos < len(s.text) {
		c := s.text[s.pos]
		switch {
		case c == '\n':
			s.line++
			s.pos++
		case c == '"' || c == '\'':
			if err := s.str("", depth); err != nil {
				return err
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			start := s.pos
			for s.pos < len(s.text) && (s.text[s.pos] == '_' || isDigit(s.text[s.pos]) || s.text[s.pos] >= 'a' && s.text[s.pos] <= 'z' || s.text[s.pos] >= 'A' && s.text[s.pos] <= 'Z') {
				s.pos++
			}
			if s.pos < len(s.text) && (s.text[s.pos] == '"' || s.text[s.pos] == '\'') && isLiteralPrefix(s.text[start:s.pos]) {
				if err := s.str(s.text[start:s.pos], depth); err != nil {
					return err
				}
			}
		case strings.IndexByte("([{", c) >= 0:
			open++
			s.pos++
		case strings.IndexByte(")]", c) >= 0:
			if open == 0 {
				return errUnsure
			}
			open--
			s.pos++
		case c == '}':
			s.pos++
			if open == 0 {
				return nil
			}
			open--
		case open == 0 && c == '!' && !strings.HasPrefix(s.text[s.pos:], "!="):
			s.pos++
		case open == 0 && c == ':':
			s.pos++
			return s.spec(depth)
		case c == '#' || c == '\\':
			return errUnsure
		default:
			s.pos++
		}
	}
	return errUnsure
}

// spec reads a replacement field's format spec after its ':', through the
// field's '}': text with replacement fields of its own.
func (s *pyScanner) spec(depth int) error {
	for s.pos < len(s.text) {
		switch c := s.text[s.pos]; c {
		case '{':
			s.pos++
			if err := s.field(depth + 1); err != nil {
				return err
			}
		case '}':
			s.pos++
			return nil
		case '\n', '"', '\'', '\\':
			return errUnsure
		default:
			s.pos++
		}
	}
	return errUnsure
}
