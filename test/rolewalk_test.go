package test

import (
	"io"
	mapkeys "maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// internalMessages are what no page may show a person: an error the
// service did not mean to show, a template's leftovers, Go's formatting
// of a missing value.
var internalMessages = []string{"Something went wrong", "internal error", "There is nothing here", "panic", "<nil>", "%!", "{{", "map[", "0001-01-01"}

// TestFourRolesWalkThePages walks the service in Chromium as each of the
// four people who use it, from where each starts: the repository's admin
// from the app's home, the requester from the card GitHub's comment links,
// the implementer (who can only read the repository) from the waiting and
// then the graded check run's Details, the reviewer (write access) from the
// graded run's Details. On every page each reaches by following links of
// the service, the page answers 200 for them and shows no internal
// message; the tests' zip answers 200 to whoever is offered it.
func TestFourRolesWalkThePages(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", wordstatsIssue)
	for login, role := range map[string]string{"ada": "admin", "alice": "write", "ian": "read", "rev": "write"} {
		gh.SetPermission(pipeOwner, pipeRepo, login, role)
	}
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	deliver := func(event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	deliver("issues", "walk-label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice",
		"issue.title": "Word statistics", "issue.body": wordstatsIssue}))
	p.comment(t, s, 1, "testfirst opened a ticket for #1")
	k, digest := p.push(t, "writer-bot", nil)
	p.comment(t, s, 1, "are ready for review")

	// The implementer's early pull request waits.
	gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	deliver("pull_request", "walk-pr", patchFixture(t, "pull_request/opened.payload.json", map[string]any{
		"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA,
		"pull_request.state": "open", "pull_request.user.login": "ian", "installation.id": 1}))
	waiting := p.run(t, s, p.fixedSHA, "waiting", func(r fakegithub.CheckRun) bool { return r.Status == "queued" })
	walk(t, p, s, "ian", waiting.DetailsURL)

	p.decide(t, s, k, digest, "alice", "")
	graded := p.run(t, s, p.fixedSHA, "graded", func(r fakegithub.CheckRun) bool { return r.Status == "completed" && r.Conclusion == "success" })

	// Signing out ends the session on the service: a copy of its cookie,
	// taken before, signs no one in.
	c := p.signIn(t, s, "rev")
	home, _ := url.Parse(s.url + "/")
	copied := c.Jar.Cookies(home)
	req, _ := http.NewRequest(http.MethodPost, s.url+"/logout", nil)
	req.Header.Set("Origin", s.url)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("sign out: %v %v", resp, err)
	}
	jar, _ := cookiejar.New(nil)
	jar.SetCookies(home, copied)
	other := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	if resp, err := other.Get(s.url + "/"); err != nil {
		t.Fatal(err)
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "Sign in with GitHub") {
			t.Errorf("a copy of a signed-out session's cookie still signs in:\n%s", body)
		}
	}

	// Each reaches what its role needs, and nothing it may not have.
	for _, tt := range []struct {
		login, start string
		reaches      []string
		never        []string
	}{
		{"ada", s.url + "/", []string{"/repos/" + pipeOwner + "/" + pipeRepo + "/audit", "/upload", "/tests.zip"}, nil},
		{"alice", s.url + pipelineTicketPath, []string{"/upload", "/audit", "/grades/", "/tests.zip"}, nil},
		{"ian", graded.DetailsURL, []string{pipelineTicketPath}, []string{"/tests.zip", "/upload", "/audit"}},
		{"rev", graded.DetailsURL, []string{pipelineTicketPath, "/tests.zip", "/audit"}, nil},
	} {
		seen := walk(t, p, s, tt.login, tt.start)
		for _, want := range tt.reaches {
			if !slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, want) }) {
				t.Errorf("%s, from %s, never reaches a page of %s: %v", tt.login, tt.start, want, seen)
			}
		}
		for _, not := range tt.never {
			if slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, not) }) {
				t.Errorf("%s, from %s, is offered %s: %v", tt.login, tt.start, not, seen)
			}
		}
	}
}

// walkMax bounds the pages one role's walk opens.
const walkMax = 40

// walk signs in as login in a browser of its own and opens start, then
// every page of the service s that the pages reached link to, breadth
// first, up to walkMax: each must answer 200 and show no internal message.
// It returns every link of the service it saw.
// A link to a download (tests.zip) is fetched, not opened. Links outside
// the service (GitHub's pages) are not followed.
func walk(t *testing.T, p *pipelineEnv, s *service, login, start string) []string {
	t.Helper()
	browser := browserContext(t)
	p.gh.SignInWeb(login)
	u, err := url.Parse(start)
	if err != nil {
		t.Fatal(err)
	}
	step(t, browser, login+" signs in", chromedp.Navigate(s.url+"/login?next="+url.QueryEscape(u.RequestURI())), chromedp.WaitReady("body"))
	// Downloads are fetched outside the page (its content security policy
	// allows no fetch), by a client signed in as the same person.
	client := p.signIn(t, s, login)
	queue, seen := []string{start}, map[string]bool{start: true}
	opened := 0
	for len(queue) > 0 && opened < walkMax {
		page := queue[0]
		queue = queue[1:]
		if strings.HasSuffix(page, ".zip") {
			resp, err := client.Get(page)
			if err != nil {
				t.Fatalf("%s: GET %s: %v", login, page, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" {
				t.Errorf("%s: %s answers %d %s", login, page, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			continue
		}
		opened++
		t.Logf("%s opens %s", login, page)
		step(t, browser, login+" opens "+page, chromedp.Navigate(page), chromedp.WaitReady("body"))
		status, err := chromedp.Run(browser, chromedp.Evaluate[int](`performance.getEntriesByType("navigation")[0].responseStatus`))
		if err != nil || status != http.StatusOK {
			t.Errorf("%s: %s answers %d, %v", login, page, status, err)
		}
		body := text(t, browser, "body")
		for _, bad := range internalMessages {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %s shows %q:\n%s", login, page, bad, body)
			}
		}
		links, err := chromedp.Run(browser, chromedp.Evaluate[[]string](`[...document.querySelectorAll("a[href]")].map(a => a.href)`))
		if err != nil {
			t.Fatalf("%s: the links of %s: %v", login, page, err)
		}
		for _, l := range links {
			l, _, _ = strings.Cut(l, "#")
			if !strings.HasPrefix(l, s.url+"/") || seen[l] || strings.Contains(l, "/login") || strings.HasPrefix(l, s.url+"/static/") {
				continue
			}
			seen[l] = true
			queue = append(queue, l)
		}
	}
	if opened < 2 {
		t.Errorf("%s's walk from %s opened %d pages: nothing linked on", login, start, opened)
	}
	t.Logf("%s opened %d pages from %s", login, opened, filepath.Base(start))
	return slices.Sorted(mapkeys.Keys(seen))
}
