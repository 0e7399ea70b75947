package store

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/tree"
)

// State is where a version stands.
type State string

// Version states. A rejected version is kept for the audit log and never
// graded; a superseded one was followed by a later version.
const (
	StatePending    State = "pending"
	StateApproved   State = "approved"
	StateRejected   State = "rejected"
	StateSuperseded State = "superseded"
)

// File is one file of a version.
type File struct {
	Path string
	Data []byte
}

// Draft is a version as a writer hands it in, before the store adds the
// canary.
type Draft struct {
	Files []File
	// Criteria maps an acceptance criterion id to the ids of the tests that
	// cover it.
	Criteria map[string][]string
	// Reference is an optional patch against the base that must pass every
	// test.
	Reference []byte
	// Author is who wrote the version: a GitHub login or an agent's name.
	Author string
}

// Content is a version exactly as stored: files carrying their canary,
// the criteria map and the reference patch. Only a Reader hands it out.
type Content struct {
	Files     []File
	Criteria  map[string][]string
	Reference []byte
}

// Limits on a draft.
const (
	maxFiles     = 1000
	maxFileBytes = 1 << 20
	maxTotal     = 16 << 20
)

// CanaryMask replaces the canary token in the masked copy.
const CanaryMask = "tfc-masked"

// canaryPrefix starts the line the store adds to every Python file.
const canaryPrefix = "# testfirst-canary: "

var codingLine = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+`)

// newCanary returns a fresh random token.
func newCanary() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "tfc-" + hex.EncodeToString(b)
}

// validate checks a draft and says what to fix.
func (d *Draft) validate() error {
	if len(d.Files) == 0 {
		return errors.New("a version needs at least one test file")
	}
	if len(d.Files) > maxFiles {
		return fmt.Errorf("a version holds at most %d files, this one has %d", maxFiles, len(d.Files))
	}
	if strings.TrimSpace(d.Author) == "" {
		return errors.New("a version needs an author")
	}
	seen := map[string]bool{}
	total := 0
	hasTest := false
	for _, f := range d.Files {
		p := f.Path
		if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("file %q: paths must be clean and relative", p)
		}
		if seen[p] {
			return fmt.Errorf("file %q appears twice", p)
		}
		seen[p] = true
		if len(f.Data) > maxFileBytes {
			return fmt.Errorf("file %q is larger than %d bytes", p, maxFileBytes)
		}
		total += len(f.Data)
		if strings.HasSuffix(p, ".py") {
			hasTest = true
		}
		// Any file, whatever its extension: the grader reads canaries from
		// every hidden file.
		if loc := detect.CanaryLine.FindIndex(f.Data); loc != nil {
			line := bytes.Count(f.Data[:loc[0]], []byte("\n")) + 1
			return fmt.Errorf("file %q line %d is a canary line (\"# testfirst-canary: …\"): the store adds the canary itself, and the grader reads canaries from every file", p, line)
		}
		if bytes.Contains(f.Data, []byte(canaryPrefix)) {
			return fmt.Errorf("file %q already has a %q line: the store adds the canary itself", p, strings.TrimSpace(canaryPrefix))
		}
		if importedByPytest(p) {
			if e := detect.CheckPythonSyntax(f.Data); e != nil {
				return fmt.Errorf("file %q line %d: %s: Python cannot compile it, so none of its tests could run; nothing was stored: correct the file and try again", p, e.Line, e.Msg)
			}
		}
	}
	if total > maxTotal {
		return fmt.Errorf("a version holds at most %d bytes, this one has %d", maxTotal, total)
	}
	if !hasTest {
		return errors.New("a version needs at least one Python test file")
	}
	for id, tests := range d.Criteria {
		if strings.TrimSpace(id) == "" {
			return errors.New("criteria: an empty criterion id")
		}
		if len(tests) == 0 {
			return fmt.Errorf("criteria: criterion %q maps to no tests", id)
		}
	}
	return d.criteriaNameTests()
}

// importedByPytest reports whether the grader's pytest imports the file at
// p: a test module by pytest's default names, a conftest.py, a package's
// __init__.py. Other Python files may be data a test reads (a linter's
// deliberately broken fixture) and are not checked.
func importedByPytest(p string) bool {
	name := path.Base(p)
	return name == "conftest.py" || name == "__init__.py" || detect.IsTestModule(name)
}

// criteriaNameTests checks that each test id of the criteria map names a
// file of the draft (or a folder holding some) and, after "::", names that
// the file spells out: a mistyped id is refused before a version number is
// used, not found by the base check afterwards. It reads the files as text
// and so accepts any name that occurs in the file; the base check still
// finds an id that collects nothing.
func (d *Draft) criteriaNameTests() error {
	text := map[string]string{}
	for _, f := range d.Files {
		text[f.Path] = string(f.Data)
	}
	var bad []string
	for _, crit := range slices.Sorted(maps.Keys(d.Criteria)) {
		for _, id := range d.Criteria[crit] {
			if why := testIDProblem(id, text); why != "" {
				bad = append(bad, fmt.Sprintf("%s names %q, but %s", crit, id, why))
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("criteria: %s; nothing was stored: correct the test ids (file path::test name, as pytest prints them) and try again", strings.Join(bad, "; "))
	}
	return nil
}

// testIDProblem says why the pytest node id does not name tests among
// files (path to text), or "". Only the module-level name (a function or a
// class) is looked for, in any of the files: a class's methods may come
// from a base class elsewhere, and a name from a star import is taken at
// its word. A parametrized case's brackets may hold anything, "::"
// included, and are cut off first.
func testIDProblem(id string, files map[string]string) string {
	if i := strings.IndexByte(id, '['); i >= 0 {
		id = id[:i]
	}
	parts := strings.Split(id, "::")
	file := strings.TrimSuffix(parts[0], "/")
	body, ok := files[file]
	if !ok {
		for p := range files {
			if strings.HasPrefix(p, file+"/") {
				ok = true
				break
			}
		}
		if !ok || len(parts) > 1 {
			return fmt.Sprintf("no file %s is among the tests", file)
		}
		return ""
	}
	if len(parts) < 2 || !identifier.MatchString(parts[1]) || strings.Contains(body, "import *") {
		return "" // a whole file, a non-ASCII name, or names from a star import
	}
	word := regexp.MustCompile(`\b` + parts[1] + `\b`)
	for _, text := range files {
		if word.MatchString(text) {
			return ""
		}
	}
	return fmt.Sprintf("%s has no %s", file, parts[1])
}

// identifier is a Python identifier (ASCII; a test name outside it is
// taken at its word).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// addCanary puts the canary line at the top of every Python file, after a
// shebang or coding line that must stay first.
func addCanary(files []File, token string) []File {
	out := make([]File, len(files))
	line := []byte(canaryPrefix + token + "\n")
	for i, f := range files {
		out[i] = File{Path: f.Path, Data: f.Data}
		if !strings.HasSuffix(f.Path, ".py") {
			continue
		}
		at := 0
		for n := 0; n < 2; n++ {
			end := bytes.IndexByte(f.Data[at:], '\n')
			if end < 0 {
				break
			}
			first := f.Data[at : at+end]
			if (n == 0 && bytes.HasPrefix(first, []byte("#!"))) || codingLine.Match(first) {
				at += end + 1
				continue
			}
			break
		}
		out[i].Data = slices.Concat(f.Data[:at], line, f.Data[at:])
	}
	return out
}

// mask replaces the token with CanaryMask in every file. An empty token
// masks nothing.
func mask(files []File, token string) []File {
	out := make([]File, len(files))
	for i, f := range files {
		out[i] = File{Path: f.Path, Data: f.Data}
		if token != "" {
			out[i].Data = bytes.ReplaceAll(f.Data, []byte(token), []byte(CanaryMask))
		}
	}
	return out
}

// encoding is the canonical form of a Content: the bytes its digest covers
// and the bytes that are sealed.
const encodingMagic = "testfirst-version-1\n"

// encode writes c canonically: files sorted by path, criteria sorted by id
// with their test ids in the given order, every field length-prefixed.
func (c *Content) encode() []byte {
	var b bytes.Buffer
	b.WriteString(encodingMagic)
	u := func(n int) {
		var x [8]byte
		binary.BigEndian.PutUint64(x[:], uint64(n))
		b.Write(x[:])
	}
	field := func(p []byte) { u(len(p)); b.Write(p) }
	files := slices.Clone(c.Files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	u(len(files))
	for _, f := range files {
		field([]byte(f.Path))
		field(f.Data)
	}
	ids := make([]string, 0, len(c.Criteria))
	for id := range c.Criteria {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	u(len(ids))
	for _, id := range ids {
		field([]byte(id))
		u(len(c.Criteria[id]))
		for _, t := range c.Criteria[id] {
			field([]byte(t))
		}
	}
	field(c.Reference)
	return b.Bytes()
}

// Canary returns the version's canary token: the token that the canary
// lines of its files carry (the store adds exactly one per Python file, all
// with the same token, and refuses drafts that have any of their own). It
// returns "" when no file has a canary line or when the lines disagree.
// The token is kept nowhere else: not in the metadata, and not in anything
// a Writer returns.
func (c *Content) Canary() string {
	token := ""
	for _, f := range c.Files {
		for _, m := range detect.CanaryLine.FindAllSubmatch(f.Data, -1) {
			if token != "" && string(m[1]) != token {
				return ""
			}
			token = string(m[1])
		}
	}
	return token
}

// Digest is sha256 over the canonical encoding, "sha256:<hex>".
func (c *Content) Digest() string {
	sum := sha256.Sum256(c.encode())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// decodeContent reads a canonical encoding back, refusing anything that is
// not exactly one.
func decodeContent(data []byte) (*Content, error) {
	r := bytes.NewReader(data)
	magic := make([]byte, len(encodingMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != encodingMagic {
		return nil, errors.New("not a testfirst version")
	}
	u := func() (int, error) {
		var x [8]byte
		if _, err := io.ReadFull(r, x[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint64(x[:])
		if n > uint64(len(data)) {
			return 0, errors.New("length out of range")
		}
		return int(n), nil
	}
	field := func() ([]byte, error) {
		n, err := u()
		if err != nil {
			return nil, err
		}
		p := make([]byte, n)
		_, err = io.ReadFull(r, p)
		return p, err
	}
	c := &Content{Criteria: map[string][]string{}}
	nf, err := u()
	if err != nil {
		return nil, fmt.Errorf("decode version: %w", err)
	}
	for range nf {
		p, err := field()
		if err != nil {
			return nil, fmt.Errorf("decode version: %w", err)
		}
		d, err := field()
		if err != nil {
			return nil, fmt.Errorf("decode version: %w", err)
		}
		c.Files = append(c.Files, File{Path: string(p), Data: d})
	}
	nc, err := u()
	if err != nil {
		return nil, fmt.Errorf("decode version: %w", err)
	}
	for range nc {
		id, err := field()
		if err != nil {
			return nil, fmt.Errorf("decode version: %w", err)
		}
		nt, err := u()
		if err != nil {
			return nil, fmt.Errorf("decode version: %w", err)
		}
		tests := []string{}
		for range nt {
			t, err := field()
			if err != nil {
				return nil, fmt.Errorf("decode version: %w", err)
			}
			tests = append(tests, string(t))
		}
		c.Criteria[string(id)] = tests
	}
	if c.Reference, err = field(); err != nil {
		return nil, fmt.Errorf("decode version: %w", err)
	}
	if len(c.Reference) == 0 {
		c.Reference = nil
	}
	if r.Len() != 0 {
		return nil, errors.New("decode version: trailing bytes")
	}
	return c, nil
}

// HiddenTree is the version's files as the grader takes them: the hidden
// tests, canaries included, each 0644.
func (c *Content) HiddenTree() (*tree.Tree, error) {
	files := make([]tree.File, 0, len(c.Files))
	for _, f := range c.Files {
		files = append(files, tree.File{Path: f.Path, Mode: 0o644, Data: f.Data})
	}
	return tree.New(files)
}

// Version is what anyone may know about a version: never a test body, and
// never its canary token (the token and the masked card copy together would
// give back the canaried body byte for byte).
type Version struct {
	Ticket Ticket `json:"-"`
	Number int    `json:"number"`
	// Digest binds the version: sha256 over its canonical encoding as
	// stored, canaries included.
	Digest string `json:"digest"`
	State  State  `json:"state"`
	Author string `json:"author"`
	// Created is when the version was stored.
	Created time.Time `json:"created"`
	// Files lists paths and sizes (with the canary line).
	Files        []FileInfo          `json:"files"`
	Criteria     map[string][]string `json:"criteria"`
	HasReference bool                `json:"has_reference"`
	// Decision is the approval or rejection, once there is one.
	Decision *Decision `json:"decision,omitempty"`
}

// FileInfo is a file's path and size.
type FileInfo struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

// Decision is a requester's approval or rejection of one version.
type Decision struct {
	Approved bool      `json:"approved"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	Digest   string    `json:"digest"`
	Reason   string    `json:"reason,omitempty"`
}

// Card is the masked copy of a version for the approval card: the files
// with the canary replaced by CanaryMask, so a copy pasted from the card
// does not carry the token.
type Card struct {
	Files    []File              `json:"files"`
	Criteria map[string][]string `json:"criteria"`
	// Reference is the reference patch, if any; patches carry no canary.
	Reference []byte `json:"reference,omitempty"`
}

// Kept returns the version's files as the writer handed them in and the
// requester approved them: the card's files without the canary line the
// store added to each Python file (a draft may hold no canary line of its
// own, so the line is the store's wherever it stands). It refuses a card
// whose lines are not exactly the store's masked ones: what it returns,
// canaried again and masked, is the card byte for byte.
func (c *Card) Kept() ([]File, error) {
	masked := []byte(canaryPrefix + CanaryMask + "\n")
	out := make([]File, len(c.Files))
	for i, f := range c.Files {
		out[i] = File{Path: f.Path, Data: bytes.Replace(f.Data, masked, nil, 1)}
	}
	again := addCanary(out, CanaryMask)
	for i, f := range c.Files {
		if !bytes.Equal(again[i].Data, f.Data) {
			return nil, fmt.Errorf("file %q of the card is not a masked copy the store made: its canary line is missing or moved", f.Path)
		}
		if detect.CanaryLine.Match(out[i].Data) || bytes.Contains(out[i].Data, []byte(canaryPrefix)) {
			return nil, fmt.Errorf("file %q of the card still holds a canary line once the store's is removed", f.Path)
		}
	}
	return out, nil
}
