package wrapper

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// recordingSink records what readArchive hands it, one line per call.
type recordingSink struct {
	calls []string
	jobs  []Job
	// fail, when set, is returned by the call whose line starts with it.
	fail string
}

var _ inputSink = (*recordingSink)(nil)

var errSink = errors.New("sink refused")

func (s *recordingSink) record(line string) error {
	s.calls = append(s.calls, line)
	if s.fail != "" && strings.HasPrefix(line, s.fail) {
		return errSink
	}
	return nil
}

func (s *recordingSink) job(j Job) error {
	s.jobs = append(s.jobs, j)
	return s.record("job " + j.Mode)
}

func (s *recordingSink) file(prefix, rel string, mode fs.FileMode, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return s.record(fmt.Sprintf("file %s %s %04o %q", prefix, rel, mode, data))
}

func (s *recordingSink) symlink(rel, target string) error {
	return s.record("symlink " + rel + " -> " + target)
}

// entry is one entry of a test archive.
type entry struct {
	name string
	typ  byte
	mode int64
	data string
	link string
}

func reg(name, data string) entry {
	return entry{name: name, typ: tar.TypeReg, mode: 0o644, data: data}
}
func dir(name string) entry { return entry{name: name, typ: tar.TypeDir, mode: 0o755} }
func link(name, target string) entry {
	return entry{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}

const jobJSON = `{"mode":"pytest","uid_split":true,"test_uid":1000,"canaries":["canaryXtoken0001"]}`

func jobEntry() entry { return reg(JobEntry, jobJSON) }

// archive writes entries as a tar stream.
func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.data)), Format: tar.FormatPAX}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if e.typ == tar.TypeChar || e.typ == tar.TypeBlock {
			hdr.Devmajor, hdr.Devminor = 1, 3
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("write header %s: %v", e.name, err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatalf("write %s: %v", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// oversizedEntry is an archive whose second entry claims more than
// maxEntryBytes; its content is never written.
func oversizedEntry(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: JobEntry, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(jobJSON))}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(jobJSON)); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: "repo/big.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: maxEntryBytes + 1}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadArchive(t *testing.T) {
	bigJob := `{"mode":"pytest","canaries":["` + strings.Repeat("a", maxJobBytes) + `"]}`
	tests := []struct {
		name      string
		input     []byte
		fail      string
		wantCalls []string
		wantErr   string
	}{
		{
			name: "well formed",
			input: archive(t,
				jobEntry(),
				dir("hidden/tests/"),
				reg("hidden/tests/test_x.py", "def test_a(): pass\n"),
				reg("hidden/test_top.py", "def test_t(): pass\n"),
				dir("repo/pkg/"),
				reg("repo/calc.py", "X = 1\n"),
				entry{name: "repo/bin/tool", typ: tar.TypeReg, mode: 0o4755, data: "#!/bin/sh\n"},
				link("repo/alias.py", "calc.py"),
				link("repo/etc", "/etc"),
				reg("repo/pkg/mod.py", ""),
			),
			wantCalls: []string{
				"job pytest",
				`file hidden/ tests/test_x.py 0644 "def test_a(): pass\n"`,
				`file hidden/ test_top.py 0644 "def test_t(): pass\n"`,
				`file repo/ calc.py 0644 "X = 1\n"`,
				`file repo/ bin/tool 0755 "#!/bin/sh\n"`,
				"symlink alias.py -> calc.py",
				"symlink etc -> /etc",
				`file repo/ pkg/mod.py 0644 ""`,
			},
		},
		{
			name:      "job only",
			input:     archive(t, jobEntry()),
			wantCalls: []string{"job pytest"},
		},
		{
			name:      "repo without hidden files",
			input:     archive(t, jobEntry(), reg("repo/a.py", "A")),
			wantCalls: []string{"job pytest", `file repo/ a.py 0644 "A"`},
		},
		{
			name:    "empty input",
			input:   nil,
			wantErr: "input archive has no job.json",
		},
		{
			name:    "empty archive",
			input:   archive(t),
			wantErr: "input archive has no job.json",
		},
		{
			name:    "not an archive",
			input:   []byte("this is not a tar archive\n"),
			wantErr: "read input archive",
		},
		{
			name:      "archive cut short",
			input:     archive(t, jobEntry(), reg("repo/a.py", strings.Repeat("A", 2000)))[:1500],
			wantCalls: []string{"job pytest"},
			wantErr:   "read input archive",
		},
		{
			name:    "job not first",
			input:   archive(t, reg("hidden/test_x.py", "x"), jobEntry()),
			wantErr: `input archive starts with "hidden/test_x.py", want job.json`,
		},
		{
			name:    "job not JSON",
			input:   archive(t, reg(JobEntry, "mode: pytest\n")),
			wantErr: "decode job.json",
		},
		{
			name:    "oversized job.json",
			input:   archive(t, reg(JobEntry, bigJob)),
			wantErr: "job.json",
		},
		{
			name:      "the sink refuses the job",
			input:     archive(t, jobEntry(), reg("repo/a.py", "A")),
			fail:      "job",
			wantCalls: []string{"job pytest"},
			wantErr:   errSink.Error(),
		},
		{
			name:      "the sink refuses a file",
			input:     archive(t, jobEntry(), reg("hidden/test_x.py", "x"), reg("repo/a.py", "A")),
			fail:      "file hidden/",
			wantCalls: []string{"job pytest", `file hidden/ test_x.py 0644 "x"`},
			wantErr:   errSink.Error(),
		},
		{
			name:      "hidden after repo",
			input:     archive(t, jobEntry(), reg("hidden/test_x.py", "x"), reg("repo/a.py", "A"), reg("hidden/test_y.py", "y")),
			wantCalls: []string{"job pytest", `file hidden/ test_x.py 0644 "x"`, `file repo/ a.py 0644 "A"`},
			wantErr:   `input archive entry "hidden/test_y.py" is out of place`,
		},
		{
			name:      "a second job.json",
			input:     archive(t, jobEntry(), jobEntry()),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "job.json" is out of place`,
		},
		{
			name:      "an unknown top directory",
			input:     archive(t, jobEntry(), reg("etc/passwd", "root")),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "etc/passwd" is out of place`,
		},
		{
			name:      "a prefix without its slash",
			input:     archive(t, jobEntry(), reg("hiddenx/test_x.py", "x")),
			wantCalls: []string{"job pytest"},
			wantErr:   "is out of place",
		},
		{
			name:      "absolute path",
			input:     archive(t, jobEntry(), reg("/repo/a.py", "A")),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "/repo/a.py" is out of place`,
		},
		{
			name:      "absolute path after the prefix",
			input:     archive(t, jobEntry(), reg("repo//etc/cron.d/x", "A")),
			wantCalls: []string{"job pytest"},
			wantErr:   "path is not clean and relative",
		},
		{
			name:      "leaves the hidden directory",
			input:     archive(t, jobEntry(), reg("hidden/../x", "x")),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "hidden/../x": path is not clean and relative`,
		},
		{
			name:      "leaves the repo",
			input:     archive(t, jobEntry(), reg("repo/../../etc/passwd", "x")),
			wantCalls: []string{"job pytest"},
			wantErr:   "path is not clean and relative",
		},
		{
			name:      "dot dot inside",
			input:     archive(t, jobEntry(), reg("repo/a/../b.py", "x")),
			wantCalls: []string{"job pytest"},
			wantErr:   "path is not clean and relative",
		},
		{
			name:      "dot segment",
			input:     archive(t, jobEntry(), reg("repo/./b.py", "x")),
			wantCalls: []string{"job pytest"},
			wantErr:   "path is not clean and relative",
		},
		{
			name:      "hidden symlink",
			input:     archive(t, jobEntry(), link("hidden/test_x.py", "/repo/test_x.py")),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "hidden/test_x.py": hidden tests cannot be symlinks`,
		},
		{
			name:      "character device",
			input:     archive(t, jobEntry(), entry{name: "repo/null", typ: tar.TypeChar, mode: 0o666}),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "repo/null" has unsupported type`,
		},
		{
			name:      "block device",
			input:     archive(t, jobEntry(), entry{name: "repo/sda", typ: tar.TypeBlock, mode: 0o660}),
			wantCalls: []string{"job pytest"},
			wantErr:   "has unsupported type",
		},
		{
			name:      "fifo",
			input:     archive(t, jobEntry(), entry{name: "hidden/pipe", typ: tar.TypeFifo, mode: 0o644}),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "hidden/pipe" has unsupported type`,
		},
		{
			name:      "hard link",
			input:     archive(t, jobEntry(), reg("repo/a.py", "A"), entry{name: "repo/b.py", typ: tar.TypeLink, link: "repo/a.py"}),
			wantCalls: []string{"job pytest", `file repo/ a.py 0644 "A"`},
			wantErr:   `input archive entry "repo/b.py" has unsupported type`,
		},
		{
			name:      "oversized entry",
			input:     oversizedEntry(t),
			wantCalls: []string{"job pytest"},
			wantErr:   `input archive entry "repo/big.bin" is larger than`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordingSink{fail: tt.fail}
			err := readArchive(bytes.NewReader(tt.input), sink)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("readArchive: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("readArchive error = %v, want one containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantCalls, sink.calls); diff != "" {
				t.Errorf("sink calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadArchiveJob(t *testing.T) {
	sink := &recordingSink{}
	if err := readArchive(bytes.NewReader(archive(t, jobEntry())), sink); err != nil {
		t.Fatalf("readArchive: %v", err)
	}
	want := []Job{{Mode: ModePytest, UIDSplit: true, TestUID: 1000, Canaries: []string{"canaryXtoken0001"}}}
	if diff := cmp.Diff(want, sink.jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
}

func TestBoundedScannerKeeps(t *testing.T) {
	writes := []string{"hello ", "", "world", "!"}
	tests := []struct {
		limit int64
		want  string
	}{
		{limit: 0, want: ""},
		{limit: 3, want: "hel"},
		{limit: 6, want: "hello "},
		{limit: 8, want: "hello wo"},
		{limit: 12, want: "hello world!"},
		{limit: 1 << 20, want: "hello world!"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			s := newBoundedScanner(tt.limit, nil)
			for _, w := range writes {
				n, err := s.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v, want %d, nil", w, n, err, len(w))
				}
			}
			if string(s.kept) != tt.want || s.total != 12 {
				t.Errorf("kept, total = %q, %d, want %q, 12", s.kept, s.total, tt.want)
			}
		})
	}
}

func TestBoundedScannerDoesNotAliasWrites(t *testing.T) {
	s := newBoundedScanner(100, []string{"canaryXtoken0001"})
	p := []byte("abc")
	s.Write(p)
	copy(p, "xyz")
	s.Write([]byte("def"))
	if string(s.kept) != "abcdef" {
		t.Errorf("kept = %q after the caller reused its buffer, want %q", s.kept, "abcdef")
	}
}

// TestBoundedScannerEverySplit writes a stream holding a token in two
// writes, split at every point, and in three writes, split at every pair of
// points.
func TestBoundedScannerEverySplit(t *testing.T) {
	const token = "canaryXtoken0001"
	const other = "tok-Y2"
	stream := "output before " + token + " and " + other + " after"
	want := []string{token, other}
	if token > other {
		want = []string{other, token}
	}
	for i := 0; i <= len(stream); i++ {
		s := newBoundedScanner(1<<20, []string{token, other})
		s.Write([]byte(stream[:i]))
		s.Write([]byte(stream[i:]))
		if diff := cmp.Diff(want, s.Seen()); diff != "" {
			t.Errorf("split at %d: Seen (-want +got):\n%s", i, diff)
		}
	}
	for i := 0; i <= len(stream); i++ {
		for j := i; j <= len(stream); j++ {
			s := newBoundedScanner(1<<20, []string{token, other})
			s.Write([]byte(stream[:i]))
			s.Write([]byte(stream[i:j]))
			s.Write([]byte(stream[j:]))
			if diff := cmp.Diff(want, s.Seen()); diff != "" {
				t.Errorf("split at %d and %d: Seen (-want +got):\n%s", i, j, diff)
			}
		}
	}
	s := newBoundedScanner(1<<20, []string{token, other})
	for i := range len(stream) {
		s.Write([]byte{stream[i]})
	}
	if diff := cmp.Diff(want, s.Seen()); diff != "" {
		t.Errorf("byte by byte: Seen (-want +got):\n%s", diff)
	}
}

func TestBoundedScannerPastTheLimit(t *testing.T) {
	const token = "canaryXtoken0001"
	s := newBoundedScanner(4, []string{token})
	s.Write([]byte("0123456789"))
	s.Write([]byte(strings.Repeat("x", 5000) + token[:5]))
	s.Write([]byte(token[5:] + "tail"))
	if diff := cmp.Diff([]string{token}, s.Seen()); diff != "" {
		t.Errorf("Seen (-want +got):\n%s", diff)
	}
	if string(s.kept) != "0123" || s.total != int64(10+5000+len(token)+4) {
		t.Errorf("kept, total = %q, %d", s.kept, s.total)
	}
}

func TestBoundedScannerNoMatch(t *testing.T) {
	tests := []struct {
		name   string
		tokens []string
		writes []string
	}{
		{name: "a prefix of the token", tokens: []string{"canaryXtoken0001"}, writes: []string{"canaryXtoken000", "2"}},
		{name: "the token's parts apart", tokens: []string{"canaryXtoken0001"}, writes: []string{"canaryX", " ", "token0001"}},
		{name: "no tokens", writes: []string{"canaryXtoken0001"}},
		{name: "an empty token", tokens: []string{""}, writes: []string{"anything", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newBoundedScanner(1<<20, tt.tokens)
			for _, w := range tt.writes {
				s.Write([]byte(w))
			}
			if diff := cmp.Diff([]string{}, s.Seen(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Seen (-want +got):\n%s", diff)
			}
		})
	}
}
