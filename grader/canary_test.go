package grader

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanaries(t *testing.T) {
	tests := []struct {
		name  string
		files []File
		want  []Canary
	}{
		{
			name:  "no canary",
			files: []File{detectorFile("test_a.py", "def test_a(): pass\n")},
		},
		{
			name: "one per file, indented, tokens sorted and deduplicated",
			files: []File{
				detectorFile("test_b.py", "# testfirst-canary: zzzz-0000_B\nimport x\n"),
				detectorFile("test_a.py", "import x\n    # testfirst-canary: Tok_a-12345678\r\n\t# testfirst-canary: Tok_a-12345678\n# testfirst-canary: AAAAAAAA\n"),
				detectorFile("sub/test_c.py", "x = 1 # testfirst-canary: notAtLineStart\n# testfirst-canary: short\n"),
			},
			want: []Canary{
				{HiddenFile: "test_a.py", Token: "AAAAAAAA"},
				{HiddenFile: "test_a.py", Token: "Tok_a-12345678"},
				{HiddenFile: "test_b.py", Token: "zzzz-0000_B"},
			},
		},
		{
			name: "the same token in two files is kept for each",
			files: []File{
				detectorFile("test_a.py", "# testfirst-canary: shared-token\n"),
				detectorFile("test_b.py", "# testfirst-canary: shared-token\n"),
			},
			want: []Canary{
				{HiddenFile: "test_a.py", Token: "shared-token"},
				{HiddenFile: "test_b.py", Token: "shared-token"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Canaries(detectorTree(t, tt.files...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Canaries() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

var detectorCanaries = []Canary{
	{HiddenFile: "test_a.py", Token: "canary-AAAA1111"},
	{HiddenFile: "test_b.py", Token: "canary-BBBB2222"},
	{HiddenFile: "test_c.py", Token: "canary-AAAA1111"},
}

func TestScanTree(t *testing.T) {
	tests := []struct {
		name  string
		files []File
		want  []CanarySighting
	}{
		{
			name:  "clean",
			files: []File{detectorFile("pkg/mod.py", "x = 'canary-AAAA'\n")},
		},
		{
			name: "content, binary content and symlink targets",
			files: []File{
				detectorFile("pkg/mod.py", "# copied: canary-BBBB2222\n"),
				detectorFile("pkg/blob.bin", "\x00\x01canary-AAAA1111\x00"),
				detectorLink("pkg/link", "../canary-BBBB2222/x"),
				detectorFile("pkg/both.py", "canary-AAAA1111 canary-BBBB2222 canary-AAAA1111"),
			},
			want: []CanarySighting{
				{HiddenFile: "test_a.py", Where: "repo:pkg/blob.bin"},
				{HiddenFile: "test_a.py", Where: "repo:pkg/both.py"},
				{HiddenFile: "test_b.py", Where: "repo:pkg/both.py"},
				{HiddenFile: "test_b.py", Where: "repo:pkg/link"},
				{HiddenFile: "test_b.py", Where: "repo:pkg/mod.py"},
				{HiddenFile: "test_c.py", Where: "repo:pkg/blob.bin"},
				{HiddenFile: "test_c.py", Where: "repo:pkg/both.py"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScanTree(detectorTree(t, tt.files...), detectorCanaries)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ScanTree() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanBytes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		cs   []Canary
		want []CanarySighting
	}{
		{name: "nothing", in: "all good", cs: detectorCanaries},
		{name: "no canaries", in: "canary-AAAA1111"},
		{name: "empty token ignored", in: "anything", cs: []Canary{{HiddenFile: "x.py"}}},
		{
			name: "one token, two files, deduplicated",
			in:   "canary-AAAA1111 and again canary-AAAA1111",
			cs:   append(detectorCanaries, detectorCanaries...),
			want: []CanarySighting{
				{HiddenFile: "test_a.py", Where: "output"},
				{HiddenFile: "test_c.py", Where: "output"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScanBytes("output", []byte(tt.in), tt.cs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ScanBytes() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanaryScannerEverySplit(t *testing.T) {
	cs := []Canary{
		{HiddenFile: "test_long.py", Token: "a-much-longer-canary-token_0123456789"},
		{HiddenFile: "test_short.py", Token: "short-01"},
	}
	for _, c := range cs {
		stream := []byte("runner output before " + c.Token + " and after")
		for split := 0; split <= len(stream); split++ {
			s := NewCanaryScanner(cs)
			mustWrite(t, s, stream[:split])
			mustWrite(t, s, stream[split:])
			if diff := cmp.Diff([]string{c.Token}, s.Seen()); diff != "" {
				t.Errorf("token %q split at %d mismatch (-want +got):\n%s", c.Token, split, diff)
			}
		}
	}
}

func TestCanaryScannerWriteSizes(t *testing.T) {
	cs := []Canary{
		{HiddenFile: "test_a.py", Token: "canary-AAAA1111"},
		{HiddenFile: "test_b.py", Token: "tok-B-0123456789abcdef"},
		{HiddenFile: "test_c.py", Token: "tok-C-never-printed"},
	}
	// Megabytes of output with two tokens buried in it. Tiny writes are
	// covered by TestCanaryScannerRandomChunks.
	var buf bytes.Buffer
	for i := range 100_000 {
		fmt.Fprintf(&buf, "line %d: PASSED tests/test_x.py::test_%d\n", i, i)
		switch i {
		case 12_345:
			buf.WriteString(cs[0].Token)
		case 87_654:
			buf.WriteString("...tok-B-0123456789abcdef...")
		}
	}
	stream := buf.Bytes()
	want := []string{cs[0].Token, cs[1].Token}
	for _, size := range []int{7, 14, 15, 16, 21, 22, 4096, len(stream)} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := NewCanaryScanner(cs)
			for off := 0; off < len(stream); off += size {
				mustWrite(t, s, stream[off:min(off+size, len(stream))])
				if len(s.tail) > s.longest-1 {
					t.Fatalf("tail holds %d bytes, want at most %d", len(s.tail), s.longest-1)
				}
			}
			if diff := cmp.Diff(want, s.Seen()); diff != "" {
				t.Errorf("Seen() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanaryScannerRandomChunks(t *testing.T) {
	cs := []Canary{{HiddenFile: "a.py", Token: "abababab-x"}, {HiddenFile: "b.py", Token: "babababa"}}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var sb strings.Builder
		for range r.IntN(40) {
			sb.WriteString([]string{"a", "b", "-", "x", "ab", "ba"}[r.IntN(6)])
		}
		stream := []byte(sb.String())
		var want []string
		for _, c := range cs {
			if bytes.Contains(stream, []byte(c.Token)) {
				want = append(want, c.Token)
			}
		}
		s := NewCanaryScanner(cs)
		for len(stream) > 0 {
			n := min(r.IntN(5), len(stream))
			mustWrite(t, s, stream[:n])
			stream = stream[n:]
		}
		if diff := cmp.Diff(want, s.Seen()); diff != "" {
			t.Fatalf("stream %q mismatch (-want +got):\n%s", sb.String(), diff)
		}
	}
}

func TestCanaryScannerSightings(t *testing.T) {
	s := NewCanaryScanner(detectorCanaries)
	if _, err := io.Copy(s, strings.NewReader("E   AssertionError: canary-AAAA1111")); err != nil {
		t.Fatal(err)
	}
	want := []CanarySighting{
		{HiddenFile: "test_a.py", Where: "output"},
		{HiddenFile: "test_c.py", Where: "output"},
	}
	if diff := cmp.Diff(want, s.Sightings("output")); diff != "" {
		t.Errorf("Sightings() mismatch (-want +got):\n%s", diff)
	}
}

func TestCanaryScannerNoCanaries(t *testing.T) {
	s := NewCanaryScanner(nil)
	mustWrite(t, s, []byte("anything at all"))
	if got := s.Seen(); got != nil {
		t.Errorf("Seen() = %q, want nil", got)
	}
}

func mustWrite(t *testing.T, w io.Writer, p []byte) {
	t.Helper()
	n, err := w.Write(p)
	if err != nil || n != len(p) {
		t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
	}
}
