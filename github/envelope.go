package github

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// maxJSONDepth is how deeply arrays and objects may nest, as in
// encoding/json.
const maxJSONDepth = 10000

// envelope is what intake reads of a payload: the action and
// installation, and the identifying number or id of each object an event
// must carry, so a body can be checked against the event it is sent as
// (see checkShape). A pointer stays nil when its member is absent or null.
type envelope struct {
	Action       string `json:"action"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Number      *int64    `json:"number"`
	Issue       *numbered `json:"issue"`
	PullRequest *numbered `json:"pull_request"`
	Repository  *withID   `json:"repository"`
	Comment     *withID   `json:"comment"`
	CheckRun    *withID   `json:"check_run"`
	CheckSuite  *withID   `json:"check_suite"`
}

type numbered struct {
	Number int64 `json:"number"`
}

type withID struct {
	ID int64 `json:"id"`
}

// envelopeObjects are the envelope's object members, each with the one
// member of it the envelope reads.
var envelopeObjects = []struct{ key, member string }{
	{"installation", "id"}, {"issue", "number"}, {"pull_request", "number"}, {"repository", "id"},
	{"comment", "id"}, {"check_run", "id"}, {"check_suite", "id"},
}

// readEnvelope decodes into env the members of body it has (its top-level
// "action" and "number", and the one member of each of envelopeObjects)
// exactly as json.Unmarshal(body, env) would, errors included, in
// about a fifth of the time: json.Unmarshal scans the whole body twice
// with its byte-at-a-time state machine (once to validate, once to skip
// the fields it does not want), which was a fifth of the intake's CPU.
//
// readEnvelope checks in one pass that body is valid JSON (what json.Valid
// accepts) and notes the top-level members that may set a field, and of
// each object of envelopeObjects the members that may set the one it reads. encoding/json
// matches keys case-insensitively and after unescaping, so a member whose
// key has an escape or a non-ASCII byte is kept whole as well. Then
// json.Unmarshal decodes an object of just those members, in their order,
// which has the same outcome as decoding the whole body: the members left
// out set no field and, being valid JSON, cause no error.
func readEnvelope(body []byte, env *envelope) error {
	s := jsonScan{b: body}
	s.space()
	if s.peek() != '{' {
		// Not an object: let encoding/json say why (or accept null).
		if !s.value(0) || !s.end() {
			return s.syntaxError()
		}
		return json.Unmarshal(body, env)
	}
	members, ok := s.object(0, isEnvelopeObject)
	if !ok || !s.end() {
		return s.syntaxError()
	}
	var kept []byte
members:
	for _, m := range members {
		if undecided(m.key) || bytes.EqualFold(m.key, []byte("action")) || bytes.EqualFold(m.key, []byte("number")) {
			kept = appendMember(kept, m.raw)
			continue
		}
		for _, o := range envelopeObjects {
			if bytes.EqualFold(m.key, []byte(o.key)) {
				kept = appendMember(kept, m.raw[:len(m.raw)-len(m.value)])
				kept = append(kept, keepMembers(m, o.member)...)
				continue members
			}
		}
	}
	if kept == nil {
		return nil
	}
	return json.Unmarshal(append(kept, '}'), env)
}

// appendMember appends one member to the object being built in kept.
func appendMember(kept, member []byte) []byte {
	if kept == nil {
		kept = append(kept, '{')
	} else {
		kept = append(kept, ',')
	}
	return append(kept, member...)
}

// keepMembers returns m's value, valid JSON, with only the members that
// may set field name when it is an object (walked as nested: see object),
// else the value itself.
func keepMembers(m member, name string) []byte {
	if m.value[0] != '{' {
		return m.value
	}
	var kept []byte
	for _, sm := range m.sub {
		if undecided(sm.key) || bytes.EqualFold(sm.key, []byte(name)) {
			kept = appendMember(kept, sm.raw)
		}
	}
	if kept == nil {
		return []byte("{}")
	}
	return append(kept, '}')
}

// isEnvelopeObject reports whether a top-level key (as written) is one of
// envelopeObjects, or may be one after unescaping.
func isEnvelopeObject(key []byte) bool {
	if undecided(key) {
		return true
	}
	for _, o := range envelopeObjects {
		if bytes.EqualFold(key, []byte(o.key)) {
			return true
		}
	}
	return false
}

// undecided reports whether only a full decode can tell which field the
// raw key (as written, between its quotes) sets: it holds an escape, or a
// non-ASCII byte that case folding may map to ASCII.
func undecided(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return true
		}
	}
	return false
}

// member is one member of an object as written: raw is `"key": value`.
// sub holds the members of an object value walked as nested (see object).
type member struct {
	raw, key, value []byte
	sub             []member
}

// object walks the object at s.i, inside depth enclosing arrays and
// objects, and returns its members. An object value whose key nested
// accepts is walked as an object too, its members kept in sub, so it is
// not walked a second time to pick them; nested may be nil.
func (s *jsonScan) object(depth int, nested func(key []byte) bool) ([]member, bool) {
	members := make([]member, 0, 16)
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		return nil, true
	}
	for {
		start := s.i
		if s.peek() != '"' || !s.str() {
			return nil, false
		}
		key := s.b[start+1 : s.i-1]
		s.space()
		if s.peek() != ':' {
			return nil, false
		}
		s.i++
		s.space()
		valueStart := s.i
		var sub []member
		if nested != nil && s.peek() == '{' && nested(key) {
			var ok bool
			if depth+1 >= maxJSONDepth {
				return nil, false
			}
			if sub, ok = s.object(depth+1, nil); !ok {
				return nil, false
			}
		} else if !s.value(depth + 1) {
			return nil, false
		}
		members = append(members, member{raw: s.b[start:s.i], key: key, value: s.b[valueStart:s.i], sub: sub})
		s.space()
		switch s.peek() {
		case '}':
			s.i++
			return members, true
		case ',':
			s.i++
			s.space()
		default:
			return nil, false
		}
	}
}

// jsonScan walks JSON text, accepting exactly what json.Valid accepts.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// end skips trailing space and reports whether nothing else follows.
func (s *jsonScan) end() bool {
	s.space()
	return s.i == len(s.b)
}

func (s *jsonScan) syntaxError() error {
	if s.i >= len(s.b) {
		return fmt.Errorf("invalid JSON: unexpected end of input after %d bytes", len(s.b))
	}
	return fmt.Errorf("invalid JSON at byte %d", s.i)
}

// value skips one value starting at s.i inside depth enclosing arrays and
// objects. It walks nested values with a stack of its own, not recursion,
// so no input can exhaust the goroutine stack.
func (s *jsonScan) value(depth int) bool {
	var open [64]byte
	stack := open[:0] // the closing bracket of each open array or object
	for {
		// A value starts here.
		switch c := s.peek(); {
		case c == '{' || c == '[':
			if depth+len(stack) >= maxJSONDepth {
				return false
			}
			s.i++
			s.space()
			closing := byte('}')
			if c == '[' {
				closing = ']'
			}
			if s.peek() == closing {
				s.i++
				break // an empty one is a whole value
			}
			stack = append(stack, closing)
			if closing == '}' && !s.key() {
				return false
			}
			continue
		case c == '"':
			if !s.str() {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if !s.number() {
				return false
			}
		case c == 't':
			if !s.literal("true") {
				return false
			}
		case c == 'f':
			if !s.literal("false") {
				return false
			}
		case c == 'n':
			if !s.literal("null") {
				return false
			}
		default:
			return false
		}
		// A value ended: close what it ends, or go on to the next one.
		for {
			if len(stack) == 0 {
				return true
			}
			s.space()
			closing := stack[len(stack)-1]
			c := s.peek()
			if c == closing {
				s.i++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				return false
			}
			s.i++
			s.space()
			if closing == '}' && !s.key() {
				return false
			}
			break
		}
	}
}

// key skips an object key, its colon and the space up to its value.
func (s *jsonScan) key() bool {
	if s.peek() != '"' || !s.str() {
		return false
	}
	s.space()
	if s.peek() != ':' {
		return false
	}
	s.i++
	s.space()
	return true
}

// plainInString marks the bytes a string may hold unescaped, other than
// the closing quote: all but control characters, '"' and '\\'.
var plainInString = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str skips a string starting at its opening quote.
func (s *jsonScan) str() bool {
	s.i++
	for s.i < len(s.b) {
		for s.i < len(s.b) && plainInString[s.b[s.i]] {
			s.i++
		}
		if s.i == len(s.b) {
			return false
		}
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			s.i--
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if s.i >= len(s.b) || !isHex(s.b[s.i]) {
						return false
					}
					s.i++
				}
			default:
				s.i--
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jsonScan) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits skips one or more digits and reports whether there was one.
func (s *jsonScan) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *jsonScan) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}
