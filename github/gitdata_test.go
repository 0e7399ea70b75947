package github_test

import (
	"context"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/github"
)

// An implementer's changes become a commit on a branch of testfirst's
// own, then a pull request that closes the issue; the next round's commit
// follows the first on the same branch, and its tree is the base's with
// that round's changes only.
func TestCommitFilesAndOpenPull(t *testing.T) {
	s, _, in := setup(t)
	ctx := context.Background()
	base, err := in.BranchHead(ctx, "octo-org", "widgets", "main")
	if err != nil {
		t.Fatal(err)
	}
	first, err := in.CommitFiles(ctx, "octo-org", "widgets", "testfirst/issue-3", base, "round 1", []github.FileChange{
		{Path: "widgets/__init__.py", Content: []byte("def spin():\n    return 2\n")},
		{Path: "widgets/new.py", Content: []byte("X = 1\n")},
		{Path: "README.md", Deleted: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := in.OpenPull(ctx, "octo-org", "widgets", "testfirst/issue-3", "main", "Spin twice", "Fixes #3")
	if err != nil {
		t.Fatal(err)
	}
	again, err := in.OpenPull(ctx, "octo-org", "widgets", "testfirst/issue-3", "main", "Spin twice", "Fixes #3")
	if err != nil || again != n {
		t.Errorf("opening again: #%d, %v; want the open #%d", again, err, n)
	}
	second, err := in.CommitFiles(ctx, "octo-org", "widgets", "testfirst/issue-3", base, "round 2", []github.FileChange{
		{Path: "widgets/__init__.py", Content: []byte("def spin():\n    return 3\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	prs := s.OpenedPulls("octo-org", "widgets")
	if len(prs) != 1 {
		t.Fatalf("opened pull requests: %+v", prs)
	}
	pr := prs[0]
	if pr.Number != n || pr.Body != "Fixes #3" || pr.HeadRef != "testfirst/issue-3" || pr.BaseRef != "main" || pr.Author != "testfirst[bot]" {
		t.Errorf("pull request: %+v", pr)
	}
	if pr.HeadSHA != second || len(pr.Commits) != 2 || pr.Commits[0] != second || pr.Commits[1] != first {
		t.Errorf("head %s, commits %v; want %s then %s", pr.HeadSHA, pr.Commits, second, first)
	}
	want := map[string]string{"widgets/__init__.py": "def spin():\n    return 3\n", ".github/testfirst.yml": "label: test-first\n", "README.md": "# widgets\n"}
	if len(pr.Files) != len(want) {
		t.Errorf("head tree %v; want %v", pr.Files, want)
	}
	for p, c := range want {
		if pr.Files[p] != c {
			t.Errorf("head tree: %s = %q, want %q", p, pr.Files[p], c)
		}
	}
	if _, err := in.CommitFiles(ctx, "octo-org", "widgets", "testfirst/issue-3", base, "nothing", nil); err == nil || !strings.Contains(err.Error(), "no change") {
		t.Errorf("an empty commit: %v", err)
	}
}
