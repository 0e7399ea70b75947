package github_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

const installation = 77

// setup starts the fake GitHub with one installation on octo-org/widgets
// and returns the app's clients and the installation's.
func setup(t *testing.T) (*fakegithub.Server, *github.Clients, *github.Installation) {
	t.Helper()
	s := fakegithub.New(t)
	s.AddInstallation(installation, "octo-org")
	s.AddRepo(installation, "octo-org", "widgets", "main")
	s.Commit("octo-org", "widgets", "main", map[string]string{
		"README.md":             "# widgets\n",
		"widgets/__init__.py":   "def spin():\n    return 1\n",
		".github/testfirst.yml": "label: test-first\n",
	})
	c, err := github.NewClients(github.AppConfig{AppID: s.AppID(), PrivateKey: s.PrivateKeyPEM(), BaseURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	in, err := c.Installation(installation)
	if err != nil {
		t.Fatal(err)
	}
	return s, c, in
}

func TestAppProvesCredentials(t *testing.T) {
	s, c, _ := setup(t)
	app, err := c.App(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if app.ID != s.AppID() || app.Slug != s.AppSlug() {
		t.Errorf("app = %+v", app)
	}
	// Another key for the same id is refused, and says so.
	wrong, err := github.NewClients(github.AppConfig{AppID: s.AppID(), PrivateKey: fakegithub.New(t).PrivateKeyPEM(), BaseURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.App(context.Background())
	var apiErr *github.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Retryable {
		t.Errorf("wrong key: %v, want a permanent 401", err)
	}
	if _, err := github.NewClients(github.AppConfig{AppID: 1, PrivateKey: []byte("not a key")}); err == nil || !strings.Contains(err.Error(), "PEM") {
		t.Errorf("bad key accepted: %v", err)
	}
}

func TestRepositoryContentsAndTarball(t *testing.T) {
	s, _, in := setup(t)
	ctx := context.Background()
	repo, err := in.Repository(ctx, "octo-org", "widgets")
	if err != nil || repo.DefaultBranch != "main" {
		t.Fatalf("repository: %+v, %v", repo, err)
	}
	head, err := in.BranchHead(ctx, "octo-org", "widgets", "main")
	if err != nil || len(head) != 40 {
		t.Fatalf("branch head %q, %v", head, err)
	}
	cfg, err := in.File(ctx, "octo-org", "widgets", head, ".github/testfirst.yml")
	if err != nil || string(cfg) != "label: test-first\n" {
		t.Errorf("file: %q, %v", cfg, err)
	}
	if _, err := in.File(ctx, "octo-org", "widgets", head, "missing.yml"); !errors.Is(err, github.ErrNotFound) {
		t.Errorf("missing file: %v, want ErrNotFound", err)
	}
	rc, err := in.Tarball(ctx, "octo-org", "widgets", head)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	entries, err := github.ExtractTarball(rc)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		paths = append(paths, e.Path)
	}
	if diff := cmp.Diff([]string{".github/testfirst.yml", "README.md", "widgets/__init__.py"}, paths); diff != "" {
		t.Errorf("tarball paths (-want +got):\n%s", diff)
	}
	// The archive download carries no installation token of ours.
	for _, r := range s.Requests() {
		if strings.Contains(r.Path, "archive") || strings.Contains(r.Path, "codeload") {
			if r.Header.Get("Authorization") != "" {
				t.Errorf("archive download %s sent Authorization", r.Path)
			}
		}
	}
}

func TestCheckRunsCommentsLabels(t *testing.T) {
	s, _, in := setup(t)
	ctx := context.Background()
	head, _ := in.BranchHead(ctx, "octo-org", "widgets", "main")
	id, err := in.CreateCheckRun(ctx, "octo-org", "widgets", checkrun.Run{Name: "testfirst", HeadSHA: head, Status: checkrun.StatusInProgress, Title: "grading", Summary: "grading against v1"})
	if err != nil {
		t.Fatal(err)
	}
	err = in.UpdateCheckRun(ctx, "octo-org", "widgets", id, checkrun.Run{Name: "testfirst", Status: checkrun.StatusCompleted, Conclusion: checkrun.ConclusionFailure,
		Title: "12/14 hidden tests passed · trust: isolated", Summary: "counts", DetailsURL: "https://tf.example.com/grades/1",
		Actions: []checkrun.Action{{Label: "Regrade", Description: "Grade this head again", Identifier: "regrade"}}})
	if err != nil {
		t.Fatal(err)
	}
	runs := s.CheckRuns("octo-org", "widgets")
	if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "failure" || runs[0].Title != "12/14 hidden tests passed · trust: isolated" || len(runs[0].Actions) != 1 {
		t.Errorf("check runs = %+v", runs)
	}
	// Read back by name on the head, with the external id that ties a run
	// to its grade.
	other, err := in.CreateCheckRun(ctx, "octo-org", "widgets", checkrun.Run{Name: "testfirst", HeadSHA: head, Status: checkrun.StatusInProgress, ExternalID: "7"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.CreateCheckRun(ctx, "octo-org", "widgets", checkrun.Run{Name: "lint", HeadSHA: head, Status: checkrun.StatusInProgress}); err != nil {
		t.Fatal(err)
	}
	refs, err := in.CheckRunsFor(ctx, "octo-org", "widgets", head, "testfirst")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]github.CheckRunRef{id: {ID: id, Name: "testfirst", Status: "completed", Conclusion: "failure", Title: "12/14 hidden tests passed · trust: isolated"},
		other: {ID: other, Name: "testfirst", ExternalID: "7", Status: "in_progress"}}
	if len(refs) != 2 || refs[0] != want[refs[0].ID] || refs[1] != want[refs[1].ID] {
		t.Errorf("CheckRunsFor = %+v; want %+v", refs, want)
	}
	// Without a name, every run on the head, the other app's "lint" too.
	if all, err := in.CheckRunsFor(ctx, "octo-org", "widgets", head, ""); err != nil || len(all) != 3 {
		t.Errorf("CheckRunsFor without a name = %+v, %v; want all 3 runs", all, err)
	}
	// GitHub refuses an over-long summary; the error is permanent.
	err = in.UpdateCheckRun(ctx, "octo-org", "widgets", id, checkrun.Run{Name: "testfirst", Summary: strings.Repeat("x", checkrun.MaxSummary+1), Title: "t"})
	if ok, _ := github.IsRetryable(err); err == nil || ok {
		t.Errorf("over-long summary: %v, want a permanent error", err)
	}

	s.AddIssue("octo-org", "widgets", 12, "alice", "Add spin speed\n- [ ] spins")
	if _, err := in.CreateComment(ctx, "octo-org", "widgets", 12, "tests v1 ready for review"); err != nil {
		t.Fatal(err)
	}
	if got := s.Comments("octo-org", "widgets", 12); len(got) != 1 {
		t.Errorf("comments = %+v", got)
	}
	for range 2 { // the second time the label exists already
		if err := in.EnsureLabel(ctx, "octo-org", "widgets", github.Label{Name: "test-first:approved", Color: "0e8a16", Description: "hidden tests approved"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.AddLabels(ctx, "octo-org", "widgets", 12, "test-first:approved"); err != nil {
		t.Fatal(err)
	}
	if err := in.RemoveLabel(ctx, "octo-org", "widgets", 12, "lane:pair"); err != nil {
		t.Errorf("removing an absent label: %v", err)
	}
	if diff := cmp.Diff([]string{"test-first:approved"}, s.IssueLabels("octo-org", "widgets", 12)); diff != "" {
		t.Errorf("issue labels (-want +got):\n%s", diff)
	}
	s.SetPermission("octo-org", "widgets", "alice", "maintain")
	if p, err := in.Permission(ctx, "octo-org", "widgets", "alice"); err != nil || p != "maintain" {
		t.Errorf("permission = %q, %v", p, err)
	}
}

// TestErrorsAreClassified: server errors and rate limits are retryable
// with GitHub's advice; a repository outside the installation is a
// permanent not-found.
func TestErrorsAreClassified(t *testing.T) {
	s, c, in := setup(t)
	ctx := context.Background()
	s.FailNextN(github.DefaultRetryAttempts, "GET", "/repos/octo-org/widgets", http.StatusBadGateway, nil)
	_, err := in.Repository(ctx, "octo-org", "widgets")
	if ok, _ := github.IsRetryable(err); !ok {
		t.Errorf("502 through every attempt: %v, want retryable", err)
	}
	s.FailNext("GET", "/repos/octo-org/widgets", http.StatusTooManyRequests, http.Header{"Retry-After": {"42"}})
	_, err = in.Repository(ctx, "octo-org", "widgets")
	if ok, after := github.IsRetryable(err); !ok || after != 42*time.Second {
		t.Errorf("429: %v (%v), want retryable after 42s", err, after)
	}
	reset := time.Now().Add(90 * time.Second).Unix()
	s.FailNext("GET", "/repos/octo-org/widgets", http.StatusForbidden, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset, 10)}})
	fresh, _ := c.Installation(installation)
	_, err = fresh.Repository(ctx, "octo-org", "widgets")
	if ok, after := github.IsRetryable(err); !ok || after < 60*time.Second {
		t.Errorf("403 rate limit: %v (%v), want retryable after about 90s", err, after)
	}
	s.AddRepo(0, "someone", "fork", "main")
	other, _ := github.NewClients(github.AppConfig{AppID: s.AppID(), PrivateKey: s.PrivateKeyPEM(), BaseURL: s.URL()})
	oin, _ := other.Installation(installation)
	_, err = oin.Repository(ctx, "someone", "fork")
	if ok, _ := github.IsRetryable(err); ok || !errors.Is(err, github.ErrNotFound) {
		t.Errorf("repository outside the installation: %v, want permanent not found", err)
	}
}

// TestInstallationTokenReused: one token per installation, not one per
// call.
func TestInstallationTokenReused(t *testing.T) {
	s, c, in := setup(t)
	ctx := context.Background()
	for range 5 {
		if _, err := in.Repository(ctx, "octo-org", "widgets"); err != nil {
			t.Fatal(err)
		}
	}
	again, _ := c.Installation(installation)
	if again != in {
		t.Error("Installation made a second client for the same installation")
	}
	mints := 0
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/access_tokens") {
			mints++
		}
	}
	if mints != 1 {
		t.Errorf("%d installation tokens minted for 5 calls, want 1", mints)
	}
}
