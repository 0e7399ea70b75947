package test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// wordstatsIssue is the sample project's issue, with four acceptance
// criteria.
const wordstatsIssue = `Word statistics for a text, for the report page.

## Acceptance criteria
- [ ] frequencies counts words case-insensitively
- [ ] top_words(n) gives the n most frequent words, ties in alphabetical order
- [ ] average_word_length of a text, 0 for a text without words
- [ ] bigrams lists the adjacent word pairs
`

// wordstatsIDs are the sample hidden tests as pytest lists them.
var wordstatsIDs = []string{
	"tests/test_wordstats.py::test_frequencies_counts_words_case_insensitively",
	"tests/test_wordstats.py::test_frequencies_of_empty_text",
	"tests/test_wordstats.py::test_top_words_length[1-1]",
	"tests/test_wordstats.py::test_top_words_length[3-3]",
	"tests/test_wordstats.py::test_top_words_length[10-6]",
	"tests/test_wordstats.py::test_top_words_orders_by_count_then_alphabet",
	"tests/test_wordstats.py::TestAverageWordLength::test_mean_length",
	"tests/test_wordstats.py::TestAverageWordLength::test_text_without_words_is_zero",
	"tests/test_bigrams.py::test_bigrams_of_sentence",
	"tests/test_bigrams.py::test_bigrams_of_single_word_is_empty",
}

// browserContext starts Debian's Chromium, headless, or skips (fails under
// make test, which installs it).
func browserContext(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("TESTFIRST_REQUIRE_DOCKER") != "" {
			t.Fatal("chromium is not installed: run scripts/ensure-deps.sh (make test does)")
		}
		t.Skip("chromium is not installed: run scripts/ensure-deps.sh")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// freePort returns a port nothing listens on, for a service that must know
// its public URL before it starts.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestCardInBrowser drives the approval card of the real binary in
// Chromium: sign in through the fake GitHub's OAuth, open the card, see
// the masked canary and the uncovered criterion, reject with a reason, see
// an approval posted from another origin refused, and approve the next
// version. Screenshots of the card go to test/screenshots/.
func TestCardInBrowser(t *testing.T) {
	browser := browserContext(t)
	ctx := t.Context()
	shots := filepath.Join(testenv.RepoRoot(), "test", "screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	gh := fakegithub.New(t)
	const owner, repo, branch, requester = "Codertocat", "Hello-World", "master", "alice"
	gh.AddInstallation(1, owner)
	gh.AddRepo(1, owner, repo, branch)
	base, err := grader.LoadTree(filepath.Join(sampleDir, "base"))
	if err != nil {
		t.Fatal(err)
	}
	gh.Commit(owner, repo, branch, files(base))
	gh.AddIssue(owner, repo, 1, requester, wordstatsIssue)
	gh.SetPermission(owner, repo, requester, "write")

	// Keys, store, OAuth client and session key, as a deployment has them.
	dir := t.TempDir()
	bin := buildBinary(t)
	graderID, cardID := filepath.Join(dir, "grader-identity.txt"), filepath.Join(dir, "card-identity.txt")
	out, err := exec.Command(bin, "keys", "init", "--identity", graderID, "--card-identity", cardID).Output()
	if err != nil {
		t.Fatal(err)
	}
	cardR, _ := os.ReadFile(filepath.Join(dir, "card-recipient.txt"))
	for k, v := range map[string]string{
		"TESTFIRST_GRADER_RECIPIENTS": strings.TrimSpace(string(out)), "TESTFIRST_GRADER_IDENTITY_FILE": graderID,
		"TESTFIRST_CARD_RECIPIENTS": strings.TrimSpace(string(cardR)), "TESTFIRST_CARD_IDENTITY_FILE": cardID,
	} {
		t.Setenv(k, v)
	}
	clientSecret, sessionKey := filepath.Join(dir, "client-secret"), filepath.Join(dir, "session-key")
	os.WriteFile(clientSecret, []byte(gh.ClientSecret()+"\n"), 0o600)
	os.WriteFile(sessionKey, []byte(strings.Repeat("0123456789abcdef", 4)+"\n"), 0o600)
	storeURL := "file://" + filepath.Join(dir, "hidden")
	dbPath := filepath.Join(dir, "card.db")
	port := freePort(t)
	public := fmt.Sprintf("http://127.0.0.1:%d", port)
	gh.SetOAuthCallback(public + "/login/callback")
	const secret = "card-secret"
	s := startServe(t, gh, secret,
		"TESTFIRST_STORE_URL="+storeURL,
		"TESTFIRST_DATABASE_URL=sqlite://"+dbPath,
		fmt.Sprintf("TESTFIRST_LISTEN=127.0.0.1:%d", port),
		"TESTFIRST_PUBLIC_URL="+public,
		"TESTFIRST_GITHUB_URL="+gh.WebURL(),
		"TESTFIRST_GITHUB_CLIENT_ID="+gh.ClientID(),
		"TESTFIRST_GITHUB_CLIENT_SECRET_FILE="+clientSecret,
		"TESTFIRST_SESSION_KEY_FILE="+sessionKey,
	)
	if s.url != public {
		t.Fatalf("serve listens on %s, want %s", s.url, public)
	}

	// The label opens the ticket.
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1, "sender.login": requester})
	if code := s.deliver(t, secret, "issues", "d-card-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(s.log(), `"msg":"ticket opened"`); {
		if time.Now().After(deadline) {
			t.Fatalf("no ticket opened:\n%s", s.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	d, err := db.Open(ctx, "sqlite://"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sync := newStoreSync(t, d, bin, storeURL, owner, repo)
	sync.issue(t, "Word statistics", wordstatsIssue)

	// v1 maps three of the four criteria.
	v1 := sync.push(t, map[string][]string{
		"AC1": {wordstatsIDs[0], wordstatsIDs[1]},
		"AC2": wordstatsIDs[2:6],
		"AC4": wordstatsIDs[8:],
	})
	sync.ready(t, 1)

	// Sign in through GitHub and open the card from the ticket list.
	gh.SignInWeb(requester)
	cardPath := "/tickets/" + owner + "/" + repo + "/1"
	step(t, browser, "sign in",
		chromedp.Navigate(public+"/"),
		chromedp.Click(`a.button`),
		chromedp.WaitVisible(`a[href="`+cardPath+`"]`),
	)
	if home := text(t, browser, "main"); !strings.Contains(home, "your review of v1") {
		t.Errorf("the list does not say the review waits on alice:\n%s", home)
	}
	step(t, browser, "open the card", chromedp.Click(`a[href="`+cardPath+`"]`), chromedp.WaitVisible(`#files`))
	page := text(t, browser, "main")
	for _, want := range []string{"1 acceptance criterion has no test", "average_word_length of a text", "tfc-masked",
		"this is all the implementer learns", wordstatsIDs[6], v1, "Approve v1"} {
		if !strings.Contains(page, want) {
			t.Errorf("card v1 lacks %q", want)
		}
	}
	html := outerHTML(t, browser, "html")
	if regexp.MustCompile(`tfc-[0-9a-f]{32}`).MatchString(html) {
		t.Error("the card shows a real canary token")
	}
	if !strings.Contains(html, `class="chroma"`) || !strings.Contains(html, `class="lntd"`) {
		t.Error("the test files are not highlighted with line numbers")
	}
	screenshot(t, browser, filepath.Join(shots, "card-v1.png"))

	// Reject v1 with a reason.
	step(t, browser, "reject v1",
		chromedp.SendKeys(`#reason`, "average_word_length has no test: add one for a text with words and one without."),
		chromedp.Click(`button.reject`),
		chromedp.WaitVisible(`.notice`),
	)
	if page := text(t, browser, "main"); !strings.Contains(page, "Rejected.") || !strings.Contains(page, "average_word_length has no test") {
		t.Errorf("after rejecting:\n%s", page)
	}
	screenshot(t, browser, filepath.Join(shots, "card-v1-rejected.png"))

	// v2 covers every criterion.
	v2 := sync.push(t, map[string][]string{
		"AC1": {wordstatsIDs[0], wordstatsIDs[1]},
		"AC2": wordstatsIDs[2:6],
		"AC3": wordstatsIDs[6:8],
		"AC4": wordstatsIDs[8:],
	})
	sync.ready(t, 2)
	step(t, browser, "open v2", chromedp.Navigate(public+cardPath), chromedp.WaitVisible(`button.approve`))
	page = text(t, browser, "main")
	if strings.Contains(page, "acceptance criterion has no test") || !strings.Contains(page, v2) || !strings.Contains(page, "rejected by alice") {
		t.Errorf("card v2:\n%s", page)
	}
	screenshot(t, browser, filepath.Join(shots, "card-v2.png"))

	// A page on another origin posts an approval with the right digest:
	// the browser sends the session cookie (same site), and the card
	// refuses the cross-origin post.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><form method="post" action="%s%s/versions/2/approve"><input type="hidden" name="digest" value="%s"><button id="go" type="submit">Win a prize</button></form>`, public, cardPath, v2)
	}))
	defer evil.Close()
	step(t, browser, "cross-origin post", chromedp.Navigate(evil.URL), chromedp.Click(`#go`), chromedp.WaitVisible(`p.message`))
	if page := text(t, browser, "main"); !strings.Contains(page, "posted from another site") {
		t.Errorf("cross-origin approval:\n%s", page)
	}
	if st := sync.state(t, 2); st != "pending" {
		t.Fatalf("v2 is %s after a cross-origin post, want pending", st)
	}

	// Approve v2 on its card.
	step(t, browser, "approve v2", chromedp.Navigate(public+cardPath), chromedp.Click(`button.approve`), chromedp.WaitVisible(`.notice`))
	if page := text(t, browser, "main"); !strings.Contains(page, "Approved.") || !strings.Contains(page, "after") {
		t.Errorf("after approving:\n%s", page)
	}
	screenshot(t, browser, filepath.Join(shots, "card-v2-approved.png"))
	if st := sync.state(t, 2); st != "approved" {
		t.Errorf("v2 is %s in the store, want approved", st)
	}
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		v, err := tx.Version(ctx, sync.ticket, 2)
		if err != nil {
			return err
		}
		as, err := tx.Approvals(ctx, v.ID)
		if err != nil {
			return err
		}
		if v.State != "approved" || len(as) != 1 || as[0].ApprovedBy != requester || as[0].Digest != v2 {
			t.Errorf("database: version %+v, approvals %+v", v, as)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
}

// storeSync does what the service's store sync does for the test: push
// versions with the CLI, mirror them into the database with their base
// check, and announce them ready.
type storeSync struct {
	d                *db.DB
	bin, storeURL    string
	ref              string
	ticket           int64
	hidden           string
	ownerName, repoN string
}

func newStoreSync(t *testing.T, d *db.DB, bin, storeURL, owner, repo string) *storeSync {
	t.Helper()
	ctx := t.Context()
	s := &storeSync{d: d, bin: bin, storeURL: storeURL, ref: owner + "/" + repo + "#1", ownerName: owner, repoN: repo, hidden: filepath.Join(t.TempDir(), "tests")}
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		r, err := tx.RepositoryByName(ctx, owner, repo)
		if err != nil {
			return err
		}
		tk, err := tx.TicketByIssue(ctx, r.ID, 1)
		s.ticket = tk.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The sample's hidden tests, without the canary lines the store adds.
	src, err := grader.LoadTree(filepath.Join(sampleDir, "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range src.Files {
		var kept []string
		for _, line := range strings.SplitAfter(string(f.Data), "\n") {
			if !strings.HasPrefix(line, "# testfirst-canary:") {
				kept = append(kept, line)
			}
		}
		p := filepath.Join(s.hidden, f.Path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Join(kept, "")), 0o644)
	}
	return s
}

// issue records the issue's text as last seen.
func (s *storeSync) issue(t *testing.T, title, body string) {
	t.Helper()
	if err := s.d.Tx(t.Context(), func(tx *db.Tx) error { return tx.SetTicketIssue(t.Context(), s.ticket, title, body) }); err != nil {
		t.Fatal(err)
	}
}

// push stores a version with the CLI and returns its digest.
func (s *storeSync) push(t *testing.T, criteria map[string][]string) string {
	t.Helper()
	cf := filepath.Join(t.TempDir(), "criteria.json")
	data, _ := json.Marshal(criteria)
	os.WriteFile(cf, data, 0o644)
	out, err := exec.Command(s.bin, "tests", "push", "--store", s.storeURL, "--ticket", s.ref, "--installation", "1", "--author", "writer-bot",
		"--criteria", cf, "--reference", filepath.Join(sampleDir, "reference.patch"), "--format", "json", s.hidden).Output()
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	var v struct {
		Version int    `json:"version"`
		Digest  string `json:"digest"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v.Digest
}

// ready mirrors version k with the check the grader's base run gives the
// sample (every test fails on base, all pass with the reference patch) and
// announces it.
func (s *storeSync) ready(t *testing.T, k int) {
	t.Helper()
	ctx := t.Context()
	var list []struct {
		Number  int    `json:"number"`
		Digest  string `json:"digest"`
		Author  string `json:"author"`
		State   string `json:"state"`
		Created string `json:"created"`
	}
	out, err := exec.Command(s.bin, "tests", "list", "--store", s.storeURL, "--ticket", s.ref, "--installation", "1", "--format", "json").Output()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("list: %v: %s", err, out)
	}
	check, _ := json.Marshal(map[string]any{
		"tests":     wordstatsIDs,
		"base":      grader.BaseCheck{GuardTests: []string{}, Counts: grader.Counts{Failed: 10, Total: 10}},
		"reference": grader.ReferenceCheck{AllPass: true, Failed: []string{}, Counts: grader.Counts{Passed: 10, Total: 10}},
	})
	for _, v := range list {
		if v.Number != k {
			continue
		}
		if err := s.d.Tx(ctx, func(tx *db.Tx) error {
			row, _, err := tx.MirrorVersion(ctx, db.Version{TicketID: s.ticket, Number: v.Number, Digest: v.Digest, State: v.State, Author: v.Author})
			if err != nil {
				return err
			}
			if err := tx.SetVersionCheck(ctx, row.ID, check, time.Now()); err != nil {
				return err
			}
			return tx.SetVersionReady(ctx, row.ID, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("the store has no v%d: %s", k, out)
}

// state is version k's state in the store.
func (s *storeSync) state(t *testing.T, k int) string {
	t.Helper()
	out, err := exec.Command(s.bin, "tests", "list", "--store", s.storeURL, "--ticket", s.ref, "--installation", "1", "--format", "json").Output()
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var list []struct {
		Number int    `json:"number"`
		State  string `json:"state"`
	}
	json.Unmarshal(out, &list)
	for _, v := range list {
		if v.Number == k {
			return v.State
		}
	}
	return ""
}

// step runs browser actions, failing the test with what was being done.
func step(t *testing.T, browser context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		loc, _ := chromedp.Run(browser, chromedp.Location())
		t.Fatalf("%s: %v (at %s)", what, err, loc)
	}
}

// text is the visible text of the first element sel matches.
func text(t *testing.T, browser context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(browser, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func outerHTML(t *testing.T, browser context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(browser, chromedp.OuterHTML(sel))
	if err != nil {
		t.Fatalf("html of %s: %v", sel, err)
	}
	return s
}

// screenshot saves the whole page as a PNG for a person to look at.
func screenshot(t *testing.T, browser context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
