package card

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/internal/testkit"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// The card fixture's repository and people. dev labelled the issue; ada
// administers the repository, max maintains it, wes may write to it, sam
// may only read; ghost is unknown to GitHub.
const (
	cardInst  = 7
	cardOwner = "octo-org"
	cardRepo  = "widgets"
	requester = "dev"
)

var cardPeople = map[string]string{"dev": "write", "ada": "admin", "max": "maintain", "wes": "write", "sam": "read"}

// issueBody lists three acceptance criteria, one of them in a task list,
// and a code block whose list is not one.
const issueBody = `Totals should be right.

## Acceptance criteria
1. Sums of whole numbers are exact
2. Sums round half to even
- [ ] An empty list sums to zero

` + "```" + `
1. not a criterion
` + "```\n"

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// hookCalls records the decision hook's calls.
type hookCalls struct {
	mu  sync.Mutex
	ids []int64
}

func (h *hookCalls) call(_ context.Context, id int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = append(h.ids, id)
	return nil
}

func (h *hookCalls) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.ids)
}

// cardFixture is the card served over HTTP against the fake GitHub, a
// real SQLite database and a real store: what serve wires, with the test
// playing the store sync (mirroring versions, their base check and
// readiness into the database).
type cardFixture struct {
	gh     *fakegithub.Server
	db     *db.DB
	store  *store.Writer
	reader *store.Reader
	svc    *Service
	srv    *httptest.Server
	reg    *prometheus.Registry
	hooks  *hookCalls
	clock  *fakeClock
	tk     db.Ticket
	st     store.Ticket
}

func newCardFixture(t *testing.T, repoConfig string) *cardFixture {
	t.Helper()
	ctx := t.Context()
	gh := fakegithub.New(t)
	gh.AddInstallation(cardInst, cardOwner)
	gh.AddRepo(cardInst, cardOwner, cardRepo, "main")
	files := map[string]string{"README.md": "# widgets\n"}
	if repoConfig != "" {
		files[".github/testfirst.yml"] = repoConfig
	}
	gh.Commit(cardOwner, cardRepo, "main", files)
	gh.AddIssue(cardOwner, cardRepo, 1, requester, issueBody)
	for login, role := range cardPeople {
		gh.SetPermission(cardOwner, cardRepo, login, role)
	}
	clients := testkit.Clients(t, gh)
	d := testkit.DB(t)
	f := &cardFixture{gh: gh, db: d, hooks: &hookCalls{}, clock: &fakeClock{t: time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)}, reg: prometheus.NewRegistry()}
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.UpsertRepository(ctx, db.Repository{ID: 500, InstallationID: cardInst, Owner: cardOwner, Name: cardRepo, DefaultBranch: "main"}); err != nil {
			return err
		}
		var err error
		f.tk, _, err = tx.OpenTicket(ctx, db.Ticket{RepositoryID: 500, IssueNumber: 1, Requester: requester, RequesterID: gh.UserID(requester), BaseSHA: "b1", State: pipeline.TicketWriting, Label: "test-first", Title: "Totals", Body: issueBody})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.st = store.Ticket{Installation: cardInst, Owner: cardOwner, Repo: cardRepo, Issue: 1}

	f.store, f.reader = testkit.Store(t)

	f.svc = NewService(d, f.store, clients, f.hooks.call, WithClock(f.clock.now), WithMetrics(f.reg), WithGitHubURL(gh.WebURL()))
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	oauth, err := github.NewOAuthApp(github.OAuthConfig{ClientID: gh.ClientID(), ClientSecret: gh.ClientSecret(), WebURL: gh.WebURL(), APIURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	card, err := handlers.NewCard(f.svc, oauth, handlers.CardConfig{PublicURL: f.srv.URL, SessionKey: []byte(strings.Repeat("k", 32)), Log: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	card.Register(mux)
	return f
}

// hiddenFiles are a version's test files; the store adds the canary.
var hiddenFiles = []store.File{
	{Path: "tests/hidden/test_totals.py", Data: []byte("from widgets import total\n\n\ndef test_whole():\n    assert total([1, 2]) == 3\n\n\ndef test_empty():\n    assert total([]) == 0\n\n\ndef test_existing():\n    assert total([0]) == 0\n\n\n# test_gone: taken out until totals round (the card flags a criterion naming it)\n")},
}

// push stores a version by the writer bot.
func (f *cardFixture) push(t *testing.T, criteria map[string][]string) store.Version {
	t.Helper()
	v, err := f.store.Push(t.Context(), f.st, store.Draft{Files: hiddenFiles, Criteria: criteria, Author: "writer-bot"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// defaultCheck is a base check: three tests, one passing on base.
var defaultCheck = pipeline.VersionCheck{
	Tests: []string{"tests/hidden/test_totals.py::test_whole", "tests/hidden/test_totals.py::test_empty", "tests/hidden/test_totals.py::test_existing"},
	Base: report.BaseCheck{GuardTests: []string{"tests/hidden/test_totals.py::test_existing"}, Counts: report.Counts{Passed: 1, Failed: 2, Total: 3},
		Context: []string{"tests/__init__.py", "tests/helpers.py"}, ContextLeftOut: []string{"tests/data/huge.bin"}},
	Reference: nil,
}

// sync plays the store sync for version v: mirrored, checked and, when
// ready, announced ready now.
func (f *cardFixture) sync(t *testing.T, v store.Version, check *pipeline.VersionCheck, ready bool) {
	t.Helper()
	ctx := t.Context()
	if err := f.db.Tx(ctx, func(tx *db.Tx) error {
		row, _, err := tx.MirrorVersion(ctx, db.Version{TicketID: f.tk.ID, Number: v.Number, Digest: v.Digest, State: pipeline.VersionState(v.State), Author: v.Author, CreatedAt: v.Created})
		if err != nil {
			return err
		}
		if check != nil {
			data, _ := json.Marshal(check)
			if err := tx.SetVersionCheck(ctx, row.ID, data, f.clock.now()); err != nil {
				return err
			}
		}
		if ready {
			return tx.SetVersionReady(ctx, row.ID, f.clock.now())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// browser is a cookie-keeping HTTP client. It follows redirects only
// while signing in, through the card's /login and GitHub's pages.
type browser struct {
	f     *cardFixture
	login string
	c     *http.Client
}

// signIn signs login in through the fake GitHub's OAuth web flow; "" is a
// browser that never signed in.
func (f *cardFixture) signIn(t *testing.T, login string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{f: f, login: login, c: &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Host == strings.TrimPrefix(f.srv.URL, "http://") && !strings.HasPrefix(req.URL.Path, "/login") {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
	stop := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if login == "" {
		b.c.CheckRedirect = stop
		return b
	}
	f.gh.SignInWeb(login)
	resp, err := b.c.Get(f.srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign in as %s: %d to %q", login, resp.StatusCode, resp.Header.Get("Location"))
	}
	b.c.CheckRedirect = stop
	return b
}

// get fetches a path of the card.
func (b *browser) get(t *testing.T, path string) (int, string, *http.Response) {
	t.Helper()
	resp, err := b.c.Get(b.f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp
}

// post submits a form as the card's own page does (same origin).
func (b *browser) post(t *testing.T, path string, form url.Values, header ...string) (int, string, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
