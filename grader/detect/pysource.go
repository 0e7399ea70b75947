package detect

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/testfirst-app/testfirst/report"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/unicode/norm"
)

// codingLine is PEP 263's declaration: a comment on line 1 or 2 matching
// "coding[:=]\s*([-\w.]+)".
var codingLine = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

// pySource is a Python source as the interpreter reads it.
type pySource struct {
	// text is the decoded source.
	text string
	// signals are what decoding and tokenizing it raised.
	signals []string
	// views are renderings of the source the patterns are matched in
	// besides text: its identifiers in NFKC form with dotted names joined
	// ("sys . _getframe" becomes "sys._getframe", "from os import _exit"
	// adds "os._exit"), and the values of its string literals, adjacent
	// and '+'-joined literals concatenated.
	views []string
	// strs are the values of its string literals, concatenated as in views.
	strs []string
}

// readPython decodes data per PEP 263 and tokenizes it.
func readPython(data []byte) pySource {
	var src pySource
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text, foreign, ok := decodePython(data)
	if foreign {
		src.signals = append(src.signals, report.ReasonForeignEncoding)
	}
	if !ok {
		src.signals = append(src.signals, report.ReasonUndecodable)
	}
	src.text = text
	toks := tokenizePython(text)
	names, strs, changed := renderTokens(toks)
	if changed {
		src.signals = append(src.signals, report.ReasonNotNFKC)
	}
	src.strs = strs
	src.views = append([]string{names}, strs...)
	return src
}

// decodePython returns data decoded as Python would decode it. foreign is
// set when a coding line names another encoding than UTF-8; ok is false
// when the bytes do not decode (the text is then read as Latin-1, so the
// scan still sees every ASCII byte).
func decodePython(data []byte) (text string, foreign, ok bool) {
	name := declaredEncoding(data)
	if name == "" || isUTF8Name(name) {
		if utf8.Valid(data) {
			return string(data), false, true
		}
		return latin1(data), false, false
	}
	if dec, ok := decodeWith(name, data); ok {
		return dec, true, true
	}
	return latin1(data), true, false
}

// declaredEncoding returns the encoding a PEP 263 coding line names, or "".
// Python looks at line 2 only when line 1 is a comment or blank.
func declaredEncoding(data []byte) string {
	lines := bytes.SplitN(data, []byte("\n"), 3)
	for i, line := range lines {
		if i == 2 {
			break
		}
		if m := codingLine.FindSubmatch(line); m != nil {
			return string(m[1])
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			break
		}
	}
	return ""
}

// isUTF8Name reports whether Python reads an encoding name as UTF-8: it
// folds case and '_' to '-' and accepts "utf-8" and "utf-8-..." names.
func isUTF8Name(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	return n == "utf-8" || n == "utf8" || strings.HasPrefix(n, "utf-8-")
}

// decodeWith decodes data in the named encoding.
func decodeWith(name string, data []byte) (string, bool) {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "-")
	if n == "utf-7" || n == "utf7" || n == "u7" || n == "unicode-1-1-utf-7" {
		return decodeUTF7(data)
	}
	var enc encoding.Encoding
	for _, try := range []func(string) (encoding.Encoding, error){ianaindex.IANA.Encoding, htmlindex.Get} {
		if e, err := try(n); err == nil && e != nil {
			enc = e
			break
		}
	}
	if enc == nil {
		switch n {
		case "latin-1", "latin1", "iso-latin-1", "l1":
			return latin1(data), true
		}
		return "", false
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil || !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

// decodeUTF7 decodes RFC 2152 UTF-7 as Python's codec does: "+" starts a
// run of modified base64 of UTF-16, ended by "-" (dropped) or any other
// character; "+-" is a plus sign.
func decodeUTF7(data []byte) (string, bool) {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out strings.Builder
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c >= 0x80 {
			return "", false
		}
		if c != '+' {
			out.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(data) && strings.IndexByte(b64, data[j]) >= 0 {
			j++
		}
		run := data[i+1 : j]
		if len(run) == 0 {
			if j < len(data) && data[j] == '-' {
				out.WriteByte('+')
				i = j
				continue
			}
			return "", false
		}
		var units []uint16
		acc, bits := uint32(0), 0
		for _, ch := range run {
			acc = acc<<6 | uint32(strings.IndexByte(b64, ch))
			bits += 6
			if bits >= 16 {
				bits -= 16
				units = append(units, uint16(acc>>bits))
				acc &= 1<<bits - 1
			}
		}
		out.WriteString(string(utf16.Decode(units)))
		i = j - 1
		if j < len(data) && data[j] == '-' {
			i = j
		}
	}
	return out.String(), true
}

func latin1(data []byte) string {
	r := make([]rune, len(data))
	for i, c := range data {
		r[i] = rune(c)
	}
	return string(r)
}

// pyToken is one token of Python source, as far as the scan needs: names,
// string literal values and single-character operators.
type pyToken struct {
	kind byte // 'n' name, 's' string, 'o' operator, '\n' end of a logical line
	text string
}

// tokenizePython splits text into tokens. It drops comments, whitespace and
// line continuations, so "sys .\\\n _getframe" is three tokens. It never
// fails: what it does not know is an operator.
func tokenizePython(text string) []pyToken {
	var toks []pyToken
	depth := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case r == '\n':
			if depth == 0 {
				toks = append(toks, pyToken{kind: '\n'})
			}
			i++
		case r == '\\':
			// A line continuation joins the next line to this one.
			i++
			if strings.HasPrefix(text[i:], "\r\n") {
				i += 2
			} else if strings.HasPrefix(text[i:], "\n") {
				i++
			}
		case r == ' ' || r == '\t' || r == '\f' || r == '\r':
			i += size
		case isIdentStart(r):
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isIdentContinue(r2) {
					break
				}
				j += s2
			}
			word := text[i:j]
			if j < len(text) && (text[j] == '\'' || text[j] == '"') && isStringPrefix(word) {
				val, end := readString(text, j, strings.ContainsAny(word, "rR"))
				toks = append(toks, pyToken{kind: 's', text: val})
				i = end
				continue
			}
			toks = append(toks, pyToken{kind: 'n', text: word})
			i = j
		case r == '\'' || r == '"':
			val, end := readString(text, i, false)
			toks = append(toks, pyToken{kind: 's', text: val})
			i = end
		case '0' <= r && r <= '9':
			for i < len(text) && (isIdentByte(text[i]) || text[i] == '.') {
				i++
			}
		default:
			switch r {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(depth-1, 0)
			}
			toks = append(toks, pyToken{kind: 'o', text: string(r)})
			i += size
		}
	}
	return toks
}

func isIdentStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || r >= 0x80 && startsIdent(norm.NFKC.String(string(r)))
}

func startsIdent(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || unicode.IsLetter(r)
}

func isIdentContinue(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Nl) ||
		r >= 0x80 && r != utf8.RuneError && !unicode.IsSpace(r) && isIdentStartOrDigit(norm.NFKC.String(string(r)))
}

func isIdentStartOrDigit(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// isStringPrefix reports whether w is a string prefix (r, b, u, f and
// their pairs, any case).
func isStringPrefix(w string) bool {
	if len(w) > 2 {
		return false
	}
	for _, c := range strings.ToLower(w) {
		if !strings.ContainsRune("rbuf", c) {
			return false
		}
	}
	return true
}

// readString reads the string literal starting with the quote at text[i]
// and returns its value (escapes decoded unless raw) and the index after it.
// An unterminated literal runs to the end of its line, or of the text when
// triple-quoted.
func readString(text string, i int, raw bool) (string, int) {
	q := text[i]
	triple := strings.HasPrefix(text[i:], strings.Repeat(string(q), 3))
	closing := string(q)
	if triple {
		closing = strings.Repeat(string(q), 3)
	}
	j := i + len(closing)
	var b strings.Builder
	for j < len(text) {
		if strings.HasPrefix(text[j:], closing) {
			return b.String(), j + len(closing)
		}
		c := text[j]
		if c == '\n' && !triple {
			return b.String(), j
		}
		if c == '\\' && j+1 < len(text) {
			if raw {
				_, n := utf8.DecodeRuneInString(text[j+1:])
				b.WriteString(text[j : j+1+n])
				j += 1 + n
				continue
			}
			n := unescape(text[j:], &b)
			j += n
			continue
		}
		b.WriteByte(c)
		j++
	}
	return b.String(), j
}

// unescape decodes the escape sequence at the start of s into b and
// returns its length.
func unescape(s string, b *strings.Builder) int {
	hex := func(n int) int {
		if len(s) < 2+n {
			b.WriteString(s[:2])
			return 2
		}
		v, err := strconv.ParseUint(s[2:2+n], 16, 32)
		if err != nil {
			b.WriteString(s[:2])
			return 2
		}
		b.WriteRune(rune(v))
		return 2 + n
	}
	switch c := s[1]; c {
	case '\n':
		return 2
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n := 1
		for n < 3 && 1+n < len(s) && '0' <= s[1+n] && s[1+n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[1:1+n], 8, 32)
		b.WriteRune(rune(v))
		return 1 + n
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	default:
		r, n := utf8.DecodeRuneInString(s[1:])
		b.WriteRune(r)
		return 1 + n
	}
	return 2
}

// renderTokens returns the names view of toks (NFKC identifiers, dotted
// names joined, "from a import b" also as "a.b"), the values of the string
// literals joined where Python or a '+' joins them, and whether any
// identifier changed under NFKC.
func renderTokens(toks []pyToken) (string, []string, bool) {
	var names strings.Builder
	var strs []string
	changed := false
	var fromModule string // the module of the "from ... import" being read
	inImport := false
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch t.kind {
		case 'n':
			name := t.text
			if !isASCII(name) {
				if n := norm.NFKC.String(name); n != name {
					changed = true
					name = n
				}
			}
			switch {
			case name == "from" && (k == 0 || toks[k-1].kind == '\n' || toks[k-1].text == ";"):
				var mod strings.Builder
				for k+1 < len(toks) && (toks[k+1].kind == 'n' && toks[k+1].text != "import" || toks[k+1].text == ".") {
					k++
					mod.WriteString(norm.NFKC.String(toks[k].text))
				}
				fromModule = mod.String()
				names.WriteString("\nfrom " + fromModule + " ")
				continue
			case name == "import" && fromModule != "":
				inImport = true
			case inImport && name != "as" && (k == 0 || toks[k-1].text != "as"):
				names.WriteString("\n" + fromModule + "." + name + "\n")
			}
			names.WriteString(name)
			if k+1 < len(toks) && toks[k+1].text != "." {
				names.WriteByte(' ')
			}
		case 's':
			val := t.text
			for k+1 < len(toks) {
				switch {
				case toks[k+1].kind == 's':
					val += toks[k+1].text
					k++
					continue
				case toks[k+1].text == "+" && k+2 < len(toks) && toks[k+2].kind == 's':
					val += toks[k+2].text
					k += 2
					continue
				}
				break
			}
			strs = append(strs, val)
			names.WriteString(" \"\" ")
		case '\n':
			fromModule, inImport = "", false
			names.WriteByte('\n')
		default:
			if t.text == ";" {
				fromModule, inImport = "", false
			}
			if t.text == "." {
				names.WriteByte('.')
			} else {
				names.WriteString(" " + t.text + " ")
			}
		}
	}
	return names.String(), strs, changed
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
