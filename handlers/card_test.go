package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// recordingCards is a hand-written Cards: it answers what the test set and
// records the decisions it was asked for.
type recordingCards struct {
	mu       sync.Mutex
	page     *CardPage
	err      error // returned by every method when set
	decideEr error
	calls    []string
}

func (r *recordingCards) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recordingCards) Tickets(ctx context.Context, viewer string) ([]TicketItem, error) {
	r.record("tickets " + viewer)
	return []TicketItem{{Ref: TicketRef{"o", "r", 1}, Title: "T", Waiting: "your review of v1", OnViewer: true}}, r.err
}

func (r *recordingCards) Card(ctx context.Context, viewer string, t TicketRef, k int) (*CardPage, error) {
	r.record("card " + viewer + " " + t.String())
	return r.page, r.err
}

func (r *recordingCards) ConfigProblems(ctx context.Context, viewer string) ([]ConfigProblem, error) {
	return nil, nil
}

func (r *recordingCards) TestsArchive(ctx context.Context, viewer string, t TicketRef, k int) ([]byte, error) {
	r.record("archive " + viewer + " " + t.String())
	return nil, ErrNotFound
}

func (r *recordingCards) Summary(ctx context.Context, viewer string, t TicketRef) (*TicketSummary, error) {
	r.record("summary " + viewer + " " + t.String())
	return nil, ErrNotFound
}

func (r *recordingCards) Approve(ctx context.Context, viewer string, t TicketRef, k int, digest string) (Decided, error) {
	r.record("approve " + viewer + " " + t.String() + " " + digest)
	return DecidedApproved, errors.Join(r.err, r.decideEr)
}

func (r *recordingCards) Reject(ctx context.Context, viewer string, t TicketRef, k int, digest, reason string) (Decided, error) {
	r.record("reject " + viewer + " " + t.String() + " " + reason)
	return DecidedRejected, errors.Join(r.err, r.decideEr)
}

func (r *recordingCards) Grade(ctx context.Context, viewer string, id int64) (*GradePage, error) {
	r.record("grade " + viewer)
	return &GradePage{ID: id, Ticket: TicketInfo{Ref: TicketRef{"o", "r", 1}}}, r.err
}

func (r *recordingCards) Audit(ctx context.Context, viewer string, t TicketRef, f AuditFilter) (*AuditPage, error) {
	r.record("audit " + viewer + " " + t.String() + " " + f.Kind)
	return &AuditPage{Owner: t.Owner, Repo: t.Repo, Ticket: &TicketInfo{Ref: t}}, r.err
}

func (r *recordingCards) RepoAudit(ctx context.Context, viewer, owner, repo string, f AuditFilter) (*AuditPage, error) {
	r.record("repo audit " + viewer + " " + owner + "/" + repo)
	return &AuditPage{Owner: owner, Repo: repo}, r.err
}

func (r *recordingCards) UploadForm(ctx context.Context, viewer string, t TicketRef) (*UploadPage, error) {
	r.record("upload form " + viewer + " " + t.String())
	return &UploadPage{Ticket: TicketInfo{Ref: t}}, r.err
}

func (r *recordingCards) Upload(ctx context.Context, viewer string, t TicketRef, u Upload) (int, error) {
	r.record("upload " + viewer + " " + t.String())
	return 1, r.err
}

func (r *recordingCards) decisions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if strings.HasPrefix(c, "approve") || strings.HasPrefix(c, "reject") {
			out = append(out, c)
		}
	}
	return out
}

// site is the card served over HTTP with a real OAuth client on the fake
// GitHub.
type site struct {
	gh    *fakegithub.Server
	cards *recordingCards
	card  *Card
	srv   *httptest.Server
}

func newSite(t *testing.T) *site {
	t.Helper()
	gh := fakegithub.New(t)
	oauth, err := github.NewOAuthApp(github.OAuthConfig{ClientID: gh.ClientID(), ClientSecret: gh.ClientSecret(), WebURL: gh.WebURL(), APIURL: gh.URL()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	cards := &recordingCards{page: &CardPage{Ticket: TicketInfo{Ref: TicketRef{"o", "r", 1}}}}
	card, err := NewCard(cards, oauth, CardConfig{PublicURL: srv.URL, SessionKey: []byte(strings.Repeat("s", 32)),
		AppName: "testfirst", InstallURL: "https://github.com/apps/testfirst/installations/new"})
	if err != nil {
		t.Fatal(err)
	}
	card.Register(mux)
	gh.SetOAuthCallback(srv.URL + "/login/callback")
	return &site{gh: gh, cards: cards, card: card, srv: srv}
}

// client keeps cookies and stops at the first redirect.
func client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, header ...string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// signIn walks the OAuth flow by hand and returns the final response.
func (s *site) signIn(t *testing.T, c *http.Client, login, next string) *http.Response {
	t.Helper()
	s.gh.SignInWeb(login)
	resp, _ := do(t, c, "GET", s.srv.URL+"/login?next="+url.QueryEscape(next), nil)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("/login: %d", resp.StatusCode)
	}
	resp, _ = do(t, c, "GET", resp.Header.Get("Location"), nil) // GitHub
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", resp.StatusCode)
	}
	resp, _ = do(t, c, "GET", resp.Header.Get("Location"), nil) // back to the card
	return resp
}

func cookieNamed(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestSignIn(t *testing.T) {
	s := newSite(t)
	c := client()
	resp, _ := do(t, c, "GET", s.srv.URL+"/login?next=/tickets/o/r/1", nil)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	st := cookieNamed(resp, signInCookie)
	if resp.StatusCode != http.StatusFound || loc.Query().Get("client_id") != s.gh.ClientID() || loc.Query().Get("state") == "" ||
		loc.Query().Get("redirect_uri") != s.srv.URL+"/login/callback" {
		t.Fatalf("/login: %d to %v", resp.StatusCode, loc)
	}
	if st == nil || !st.HttpOnly || st.SameSite != http.SameSiteLaxMode || st.Path != "/login" || st.Secure {
		t.Errorf("sign-in cookie %+v", st)
	}

	resp = s.signIn(t, c, "octocat", "/tickets/o/r/1")
	sess := cookieNamed(resp, sessionCookie)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/tickets/o/r/1" {
		t.Fatalf("callback: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/" || sess.Secure {
		t.Errorf("session cookie %+v", sess)
	}
	if _, body := do(t, c, "GET", s.srv.URL+"/", nil); !strings.Contains(body, "Signed in as <strong>octocat</strong>") || !strings.Contains(body, "your review of v1") {
		t.Errorf("home after sign-in:\n%s", body)
	}

	// Sign out takes a same-origin POST.
	if resp, _ := do(t, c, "POST", s.srv.URL+"/logout", url.Values{}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site logout: %d", resp.StatusCode)
	}
	copied := *sess // what someone who saw the cookie keeps
	resp, _ = do(t, c, "POST", s.srv.URL+"/logout", url.Values{}, "Origin", s.srv.URL, "Sec-Fetch-Site", "same-origin")
	if ck := cookieNamed(resp, sessionCookie); resp.StatusCode != http.StatusSeeOther || ck == nil || ck.MaxAge >= 0 {
		t.Errorf("logout: %d, cookie %+v", resp.StatusCode, ck)
	}
	// The signed-out session is over on the server too: a copy of its
	// cookie signs no one in.
	other := client()
	u, _ := url.Parse(s.srv.URL)
	other.Jar.SetCookies(u, []*http.Cookie{{Name: copied.Name, Value: copied.Value, Path: "/"}})
	if _, body := do(t, other, "GET", s.srv.URL+"/", nil); !strings.Contains(body, "Sign in with GitHub") {
		t.Error("a copy of the session's cookie still signs in after logout")
	}
	if _, body := do(t, c, "GET", s.srv.URL+"/", nil); !strings.Contains(body, "Sign in with GitHub") {
		t.Error("still signed in after logout")
	} else if !strings.Contains(body, `href="https://github.com/apps/testfirst/installations/new"`) {
		t.Error("the home page with the card on lost the app's Install link")
	}
}

func TestSignInRefusals(t *testing.T) {
	s := newSite(t)
	s.gh.SignInWeb("octocat")

	// A callback whose state is not the one we sent, or without our
	// cookie, is refused before the code is used.
	c := client()
	resp, _ := do(t, c, "GET", s.srv.URL+"/login", nil)
	resp, _ = do(t, c, "GET", resp.Header.Get("Location"), nil)
	back, _ := url.Parse(resp.Header.Get("Location"))
	q := back.Query()
	q.Set("state", "forged")
	if resp, body := do(t, c, "GET", s.srv.URL+"/login/callback?"+q.Encode(), nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not started here") {
		t.Errorf("forged state: %d", resp.StatusCode)
	}
	if resp, _ := do(t, client(), "GET", back.String(), nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("callback without the sign-in cookie: %d", resp.StatusCode)
	}
	// GitHub's refusal is shown.
	resp, _ = do(t, c, "GET", s.srv.URL+"/login", nil)
	state, _ := url.Parse(resp.Header.Get("Location"))
	e := url.Values{"state": {state.Query().Get("state")}, "error": {"access_denied"}, "error_description": {"The user has denied your application access."}}
	if resp, body := do(t, c, "GET", s.srv.URL+"/login/callback?"+e.Encode(), nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "access_denied") {
		t.Errorf("GitHub's error: %d", resp.StatusCode)
	}
	// A code GitHub refuses.
	resp, _ = do(t, c, "GET", s.srv.URL+"/login", nil)
	state, _ = url.Parse(resp.Header.Get("Location"))
	bad := url.Values{"state": {state.Query().Get("state")}, "code": {"made-up"}}
	if resp, _ := do(t, c, "GET", s.srv.URL+"/login/callback?"+bad.Encode(), nil); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("bad code: %d", resp.StatusCode)
	}

	// next cannot send the browser off the site.
	// Browsers drop tabs and newlines from a URL and read a backslash as
	// a slash, so each of these is "//evil.example/…" to them.
	for _, next := range []string{"//evil.example/x", "https://evil.example", "/\\evil.example", "javascript:alert(1)",
		"/\t/evil.example/phish", "/\n/evil.example", "/ /evil.example", "/\\/evil.example", "/%09/evil.example", "/tickets/../\t/evil.example",
		"/nowhere", "/static/../../evil"} {
		if resp := s.signIn(t, client(), "octocat", next); resp.Header.Get("Location") != "/" {
			t.Errorf("next %q: to %q, want /", next, resp.Header.Get("Location"))
		}
	}
	// The service's own pages are kept, with their query.
	for _, next := range []string{"/", "/tickets/o/r/1", "/tickets/o/r/1/versions/2", "/grades/7", "/repos/o/r/audit", "/tickets/o/r/1/audit?kind=version."} {
		if resp := s.signIn(t, client(), "octocat", next); resp.Header.Get("Location") != next {
			t.Errorf("next %q: to %q, want it kept", next, resp.Header.Get("Location"))
		}
	}
}

func TestSessionCookie(t *testing.T) {
	s := newSite(t)
	resp := s.signIn(t, client(), "octocat", "/")
	good := cookieNamed(resp, sessionCookie)
	viewer := func(ck *http.Cookie) string {
		req := httptest.NewRequest("GET", "/", nil)
		if ck != nil {
			req.AddCookie(ck)
		}
		return s.card.viewer(req)
	}
	if v := viewer(good); v != "octocat" {
		t.Fatalf("viewer %q", v)
	}
	p, m, _ := strings.Cut(good.Value, ".")
	forged := *good
	forged.Value = strings.Replace(p, "o", "p", 1) + "." + m
	other := *good
	other.Name = signInCookie
	tests := []struct {
		name string
		ck   *http.Cookie
	}{
		{"none", nil},
		{"forged payload", &forged},
		{"no signature", &http.Cookie{Name: sessionCookie, Value: p}},
		{"garbage", &http.Cookie{Name: sessionCookie, Value: "x.y"}},
	}
	for _, tt := range tests {
		if v := viewer(tt.ck); v != "" {
			t.Errorf("%s: signed in as %q", tt.name, v)
		}
	}
	// A value signed for another cookie does not pass as a session.
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: other.Value})
	var sg signIn
	if s.card.cookies.get(req, signInCookie, &sg) == nil {
		t.Error("a session value read as a sign-in cookie")
	}
	// Expired.
	s.card.cookies.now = func() time.Time { return time.Now().Add(DefaultSessionTTL + time.Minute) }
	if v := viewer(good); v != "" {
		t.Errorf("expired session still signed in as %q", v)
	}
}

func TestSecureCookiesOverHTTPS(t *testing.T) {
	c, err := NewCard(&recordingCards{}, nil, CardConfig{PublicURL: "https://tf.example", SessionKey: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	c.cookies.set(w, sessionCookie, "/", &session{Login: "x", Expires: time.Now().Add(time.Hour).Unix()}, time.Now().Add(time.Hour))
	if ck := w.Result().Cookies()[0]; !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie %+v", ck)
	}
	for _, cfg := range []CardConfig{{PublicURL: "tf.example", SessionKey: []byte(strings.Repeat("s", 32))}, {PublicURL: "https://tf.example", SessionKey: []byte("short")}} {
		if _, err := NewCard(&recordingCards{}, nil, cfg); err == nil {
			t.Errorf("NewCard(%+v) accepted", cfg)
		}
	}
}

func TestCardForms(t *testing.T) {
	s := newSite(t)
	c := client()
	s.signIn(t, c, "octocat", "/")
	post := func(path string, form url.Values) (*http.Response, string) {
		return do(t, c, "POST", s.srv.URL+path, form, "Origin", s.srv.URL, "Sec-Fetch-Site", "same-origin")
	}
	resp, _ := post("/tickets/o/r/1/versions/2/approve", url.Values{"digest": {"sha256:aa"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/tickets/o/r/1/versions/2?decided=approved" {
		t.Errorf("approve: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// No reason, or one too long: refused without asking the app.
	if resp, body := post("/tickets/o/r/1/versions/2/reject", url.Values{"digest": {"sha256:aa"}, "reason": {" \n "}}); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "needs a reason") {
		t.Errorf("empty reason: %d", resp.StatusCode)
	}
	if resp, _ := post("/tickets/o/r/1/versions/2/reject", url.Values{"digest": {"sha256:aa"}, "reason": {strings.Repeat("x", maxReason+1)}}); resp.StatusCode != http.StatusConflict {
		t.Errorf("long reason: %d", resp.StatusCode)
	}
	post("/tickets/o/r/1/versions/2/reject", url.Values{"digest": {"sha256:aa"}, "reason": {"  needs rounding  "}})
	want := []string{"approve octocat o/r#1 sha256:aa", "reject octocat o/r#1 needs rounding"}
	if got := s.cards.decisions(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("decisions %q, want %q", got, want)
	}

	// Paths that cannot name a ticket never reach the app.
	for _, p := range []string{"/tickets/-bad/r/1", "/tickets/o/r/0", "/tickets/o/r/x/versions/1", "/tickets/o/r/1/versions/0", "/grades/abc", "/static/other.css"} {
		if resp, _ := do(t, c, "GET", s.srv.URL+p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
	}

	// A refusal is shown on the card with 409; not found is 404; anything
	// else is 500 without its detail.
	s.cards.decideEr = Refusef("v3 was pushed meanwhile")
	if resp, body := post("/tickets/o/r/1/versions/2/approve", url.Values{"digest": {"d"}}); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "v3 was pushed meanwhile") {
		t.Errorf("refusal: %d", resp.StatusCode)
	}
	s.cards.decideEr = nil
	s.cards.err = ErrNotFound
	if resp, _ := do(t, c, "GET", s.srv.URL+"/tickets/o/r/1", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("not found: %d", resp.StatusCode)
	}
	s.cards.err = errors.New("database password is hunter2")
	if resp, body := do(t, c, "GET", s.srv.URL+"/grades/1", nil); resp.StatusCode != http.StatusInternalServerError || strings.Contains(body, "hunter2") {
		t.Errorf("failure: %d", resp.StatusCode)
	}
}
