package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinks(t *testing.T) {
	own := func(n int) IssueRef { return IssueRef{"octo-org", "widgets", n} }
	tests := []struct {
		body string
		want []IssueRef
	}{
		{"Fixes #12", []IssueRef{own(12)}},
		{"fixes #12, closes #13 and RESOLVES #14", []IssueRef{own(12), own(13), own(14)}},
		{"Fix: #7", []IssueRef{own(7)}},
		{"resolves Octo-Org/Widgets#12", []IssueRef{own(12)}},
		{"closes other/repo#3", []IssueRef{{"other", "repo", 3}}},
		{"Fixed https://github.com/octo-org/widgets/issues/21 today", []IssueRef{own(21)}},
		{"fixes #12\nalso fixes #12", []IssueRef{own(12)}},
		{"see #12", nil},
		{"prefixes #12", nil},
		{"fixes #0", nil},
		{"fixes #12abc", nil},
		{"fixes https://github.com/octo-org/widgets/pull/5", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Links(tt.body, "octo-org", "widgets")); diff != "" {
			t.Errorf("Links(%q) (-want +got):\n%s", tt.body, diff)
		}
	}
}

func FuzzLinks(f *testing.F) {
	f.Add("Fixes #12 and closes o/r#3")
	f.Fuzz(func(t *testing.T, body string) {
		for _, r := range Links(body, "o", "r") {
			if r.Number <= 0 || r.Owner == "" || r.Repo == "" {
				t.Fatalf("bad ref %+v from %q", r, body)
			}
		}
	})
}
