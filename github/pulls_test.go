package github_test

import (
	"context"
	"errors"
	"testing"

	"github.com/testfirst-app/testfirst/github"
)

// A commit onto a pull request's branch follows the head it was told to
// follow, as a fast forward, authored by the app's bot; a branch that moved
// on meanwhile is left where its author put it, and the error says so.
// The pull request and its reviews read back as GitHub shows them, merged
// once merged.
func TestCommitOntoPullAndReviews(t *testing.T) {
	s, _, in := setup(t)
	ctx := context.Background()
	head := s.Commit("octo-org", "widgets", "fix-spin", map[string]string{"README.md": "# widgets\n", "widgets/__init__.py": "def spin():\n    return 2\n"})
	s.AddPull("octo-org", "widgets", 5, head, "main", "Fixes #3", "")
	pr, err := in.Pull(ctx, "octo-org", "widgets", 5)
	if err != nil {
		t.Fatal(err)
	}
	if pr.HeadSHA != head || pr.HeadRef != "fix-spin" || pr.HeadRepo != "octo-org/widgets" || pr.Author != "octo-org" || pr.AuthorID == 0 ||
		!pr.Open || pr.Merged {
		t.Errorf("pull request: %+v", pr)
	}
	sha, err := in.CommitOnto(ctx, "octo-org", "widgets", "fix-spin", head, "Keep the tests\n\nRefs #3\n",
		[]github.FileChange{{Path: "tests/test_spin.py", Content: []byte("def test_spin():\n    pass\n")}})
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.CommitOf("octo-org", "widgets", "fix-spin")
	if !ok || c.SHA != sha || c.Parent != head || c.Author != "testfirst[bot]" || c.Message != "Keep the tests\n\nRefs #3\n" ||
		c.Files["tests/test_spin.py"] != "def test_spin():\n    pass\n" || c.Files["widgets/__init__.py"] != "def spin():\n    return 2\n" {
		t.Errorf("the branch's head: %+v", c)
	}
	if got := s.PullHead("octo-org", "widgets", 5); got != sha {
		t.Errorf("the pull request's head %s; want the commit %s", got, sha)
	}
	read, err := in.GitCommit(ctx, "octo-org", "widgets", sha)
	if err != nil || read.Message != c.Message || len(read.Parents) != 1 || read.Parents[0] != head || read.Author != "testfirst[bot]" {
		t.Errorf("GitCommit: %+v, %v", read, err)
	}

	// The author pushed meanwhile: nothing moves.
	moved := s.Commit("octo-org", "widgets", "fix-spin", map[string]string{"README.md": "# widgets, again\n"})
	if _, err := in.CommitOnto(ctx, "octo-org", "widgets", "fix-spin", sha, "Keep the tests", []github.FileChange{{Path: "x.py", Content: []byte("1\n")}}); !errors.Is(err, github.ErrBranchMoved) {
		t.Errorf("onto a moved branch: %v; want ErrBranchMoved", err)
	}
	if c, _ := s.CommitOf("octo-org", "widgets", "fix-spin"); c.SHA != moved {
		t.Errorf("the moved branch is at %s; want the author's %s", c.SHA, moved)
	}

	s.AddReview("octo-org", "widgets", 5, "rita", "CHANGES_REQUESTED", "")
	s.AddReview("octo-org", "widgets", 5, "rita", "APPROVED", "ok")
	rs, err := in.Reviews(ctx, "octo-org", "widgets", 5)
	if err != nil || len(rs) != 2 || rs[0].State != "CHANGES_REQUESTED" || rs[1].State != "APPROVED" || rs[1].Reviewer != "rita" ||
		rs[1].ReviewerID != s.UserID("rita") || rs[1].CommitID != s.PullHead("octo-org", "widgets", 5) {
		t.Errorf("reviews: %+v, %v", rs, err)
	}
	merge := s.MergePull("octo-org", "widgets", 5)
	if pr, err := in.Pull(ctx, "octo-org", "widgets", 5); err != nil || pr.Open || !pr.Merged {
		t.Errorf("merged pull request: %+v, %v", pr, err)
	}
	if h, _ := in.BranchHead(ctx, "octo-org", "widgets", "main"); h != merge {
		t.Errorf("main at %s; want the merge %s", h, merge)
	}
}
