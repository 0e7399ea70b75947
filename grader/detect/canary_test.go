package detect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/tree"
)

func TestCanaries(t *testing.T) {
	tests := []struct {
		name  string
		files []tree.File
		want  []Canary
	}{
		{
			name:  "no canary",
			files: []tree.File{detectorFile("test_a.py", "def test_a(): pass\n")},
		},
		{
			name: "one per file, indented, tokens sorted and deduplicated",
			files: []tree.File{
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
			files: []tree.File{
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
		files []tree.File
		want  []report.CanarySighting
	}{
		{
			name:  "clean",
			files: []tree.File{detectorFile("pkg/mod.py", "x = 'canary-AAAA'\n")},
		},
		{
			name: "content, binary content and symlink targets",
			files: []tree.File{
				detectorFile("pkg/mod.py", "# copied: canary-BBBB2222\n"),
				detectorFile("pkg/blob.bin", "\x00\x01canary-AAAA1111\x00"),
				detectorLink("pkg/link", "../canary-BBBB2222/x"),
				detectorFile("pkg/both.py", "canary-AAAA1111 canary-BBBB2222 canary-AAAA1111"),
			},
			want: []report.CanarySighting{
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
		want []report.CanarySighting
	}{
		{name: "nothing", in: "all good", cs: detectorCanaries},
		{name: "no canaries", in: "canary-AAAA1111"},
		{name: "empty token ignored", in: "anything", cs: []Canary{{HiddenFile: "x.py"}}},
		{
			name: "one token, two files, deduplicated",
			in:   "canary-AAAA1111 and again canary-AAAA1111",
			cs:   append(detectorCanaries, detectorCanaries...),
			want: []report.CanarySighting{
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
