package pipeline

import (
	"errors"
	"strings"
	"testing"
)

// KeepApprover: a reviewer's latest decision counts; the author's own
// approval, a reader's, a withdrawn or dismissed one never does.
func TestKeepApprover(t *testing.T) {
	writers := map[string]bool{"rita": true, "sam": true, "alice": true}
	may := func(login string) (bool, error) { return writers[login], nil }
	const authorID = 10
	tests := []struct {
		name    string
		reviews []Review
		want    string
	}{
		{"none", nil, ""},
		{"a writer approves", []Review{{"rita", 1, "APPROVED"}}, "rita"},
		{"then comments: still approved", []Review{{"rita", 1, "APPROVED"}, {"rita", 1, "COMMENTED"}}, "rita"},
		{"then asks for changes", []Review{{"rita", 1, "APPROVED"}, {"rita", 1, "CHANGES_REQUESTED"}}, ""},
		{"dismissed", []Review{{"rita", 1, "APPROVED"}, {"rita", 1, "DISMISSED"}}, ""},
		{"changes then approval", []Review{{"rita", 1, "CHANGES_REQUESTED"}, {"rita", 1, "APPROVED"}}, "rita"},
		{"only comments", []Review{{"rita", 1, "COMMENTED"}}, ""},
		{"the author, by id", []Review{{"alice", authorID, "APPROVED"}}, ""},
		{"the author, renamed: the id still tells", []Review{{"alice-new", authorID, "APPROVED"}}, ""},
		{"a reader approves", []Review{{"mallory", 3, "APPROVED"}}, ""},
		{"a reader and a writer", []Review{{"mallory", 3, "APPROVED"}, {"sam", 4, "APPROVED"}}, "sam"},
	}
	for _, tt := range tests {
		got, ok, err := KeepApprover(tt.reviews, authorID, "alice", may)
		if err != nil || got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: %q %v %v; want %q", tt.name, got, ok, err, tt.want)
		}
	}
	boom := errors.New("permission lookup failed")
	if _, _, err := KeepApprover([]Review{{"rita", 1, "APPROVED"}}, authorID, "alice", func(string) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed lookup: %v", err)
	}
	msg := KeptCommitMessage(7, 2, "sha256:abc", "alice")
	if !strings.Contains(msg, "Refs #7") || !strings.Contains(msg, KeptTrailerLine(7, "sha256:abc")) || !strings.Contains(msg, "version 2") ||
		strings.Contains(strings.ToLower(msg), "fixes #") || strings.Contains(strings.ToLower(msg), "closes #") {
		t.Errorf("commit message:\n%s", msg)
	}
	if body := KeptFollowUpBody(7, 4, 2, "sha256:abc"); len(Links(body, "o", "r")) != 0 {
		t.Errorf("the follow-up's body closes the ticket: %q", body)
	}
}
