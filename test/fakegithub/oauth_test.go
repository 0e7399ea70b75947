package fakegithub_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorize opens the authorize page with the given query.
func authorize(t *testing.T, f *fixture, q url.Values) *http.Response {
	t.Helper()
	resp, err := noRedirect.Get(f.s.WebURL() + "login/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// exchange posts to access_token and decodes the JSON answer.
func exchange(t *testing.T, f *fixture, form url.Values) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.s.WebURL()+"login/oauth/access_token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("access_token answered %d", resp.StatusCode)
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOAuthWebFlow(t *testing.T) {
	f := newFixture(t)
	const app = "https://testfirst.example/login/callback"
	q := url.Values{"client_id": {f.s.ClientID()}, "redirect_uri": {app}, "state": {"st-1"}}

	// Unknown client: GitHub's 404 page. Nobody signed in: the sign-in
	// page, no code.
	if resp := authorize(t, f, url.Values{"client_id": {"Iv1.nope"}, "redirect_uri": {app}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown client: %d, want 404", resp.StatusCode)
	}
	if resp := authorize(t, f, q); resp.StatusCode != http.StatusOK || resp.Header.Get("Location") != "" {
		t.Errorf("signed out: %d to %q, want the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Signed in: straight back to the app with a code and the state.
	f.s.SignInWeb("Alice")
	resp := authorize(t, f, q)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || loc.Host != "testfirst.example" || loc.Path != "/login/callback" || loc.Query().Get("state") != "st-1" {
		t.Fatalf("authorize: %d to %v, want a redirect to the callback with the state", resp.StatusCode, loc)
	}
	code := loc.Query().Get("code")

	good := url.Values{"client_id": {f.s.ClientID()}, "client_secret": {f.s.ClientSecret()}, "code": {code}, "redirect_uri": {app}}
	wrongSecret := url.Values{"client_id": {f.s.ClientID()}, "client_secret": {"guess"}, "code": {code}}
	if m := exchange(t, f, wrongSecret); m["error"] != "incorrect_client_credentials" {
		t.Errorf("wrong secret: %v", m)
	}
	otherRedirect := url.Values{"client_id": {f.s.ClientID()}, "client_secret": {f.s.ClientSecret()}, "code": {code}, "redirect_uri": {"https://evil.example/cb"}}
	if m := exchange(t, f, otherRedirect); m["error"] != "redirect_uri_mismatch" {
		t.Errorf("other redirect_uri: %v", m)
	}
	m := exchange(t, f, good)
	tok, _ := m["access_token"].(string)
	if !strings.HasPrefix(tok, "ghu_") || m["token_type"] != "bearer" || m["expires_in"] != float64(8*3600) {
		t.Fatalf("token answer %v", m)
	}
	// A code works once.
	if m := exchange(t, f, good); m["error"] != "bad_verification_code" {
		t.Errorf("second use of the code: %v", m)
	}

	// The token says who the user is, and reaches nothing else.
	r, body := f.raw(t, "GET", "/user", "Bearer "+tok, "")
	var u struct {
		Login string `json:"login"`
		ID    int64  `json:"id"`
	}
	if err := json.Unmarshal(body, &u); err != nil || r.StatusCode != 200 || u.Login != "Alice" || u.ID == 0 {
		t.Errorf("GET /user: %d %s", r.StatusCode, body)
	}
	if r, _ := f.raw(t, "GET", "/repos/"+owner+"/"+repoName, "token "+tok, ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("user token on a repository: %d, want 403", r.StatusCode)
	}
	if r, _ := f.raw(t, "GET", "/installation/repositories", "token "+tok, ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("user token on an installation route: %d, want 403", r.StatusCode)
	}
	if r, _ := f.raw(t, "GET", "/user", "token "+f.token(t, instID), ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("installation token on /user: %d, want 403", r.StatusCode)
	}
	if r, _ := f.raw(t, "GET", "/user", "", ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous /user: %d, want 401", r.StatusCode)
	}

	// Codes expire after ten minutes, user tokens after eight hours.
	late := authorize(t, f, q)
	lateLoc, _ := url.Parse(late.Header.Get("Location"))
	f.clock.Advance(11 * time.Minute)
	expired := url.Values{"client_id": {f.s.ClientID()}, "client_secret": {f.s.ClientSecret()}, "code": {lateLoc.Query().Get("code")}}
	if m := exchange(t, f, expired); m["error"] != "bad_verification_code" {
		t.Errorf("expired code: %v", m)
	}
	f.clock.Advance(8 * time.Hour)
	if r, _ := f.raw(t, "GET", "/user", "Bearer "+tok, ""); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired user token: %d, want 401", r.StatusCode)
	}

	// Every step is recorded.
	var paths []string
	for _, r := range f.s.Requests() {
		if strings.HasPrefix(r.Path, "/login/") || r.Path == "/user" {
			paths = append(paths, r.Method+" "+r.Path)
		}
	}
	if len(paths) < 10 || paths[0] != "GET /login/oauth/authorize" {
		t.Errorf("recorded %v", paths)
	}
}

func TestOAuthCallbackAndFormAnswer(t *testing.T) {
	f := newFixture(t)
	f.s.SignInWeb("bob")
	f.s.SetOAuthCallback("https://testfirst.example/login")
	tests := []struct {
		redirect string
		wantHost string
		wantErr  string
	}{
		{"https://testfirst.example/login/callback", "testfirst.example", ""},
		{"https://testfirst.example/login", "testfirst.example", ""},
		{"", "testfirst.example", ""}, // the registered callback
		{"https://testfirst.example/elsewhere", "testfirst.example", "redirect_uri_mismatch"},
		{"https://evil.example/login/callback", "testfirst.example", "redirect_uri_mismatch"},
		{"http://testfirst.example/login/callback", "testfirst.example", "redirect_uri_mismatch"},
	}
	for _, tt := range tests {
		q := url.Values{"client_id": {f.s.ClientID()}, "state": {"s"}}
		if tt.redirect != "" {
			q.Set("redirect_uri", tt.redirect)
		}
		resp := authorize(t, f, q)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		got := []string{loc.Host, loc.Query().Get("error"), loc.Query().Get("state")}
		if diff := cmp.Diff([]string{tt.wantHost, tt.wantErr, "s"}, got); diff != "" || resp.StatusCode != http.StatusFound {
			t.Errorf("redirect_uri %q: %d (-want +got):\n%s", tt.redirect, resp.StatusCode, diff)
		}
		if tt.wantErr == "" && loc.Query().Get("code") == "" {
			t.Errorf("redirect_uri %q: no code", tt.redirect)
		}
	}

	// Without Accept: application/json the answer is a form.
	resp := authorize(t, f, url.Values{"client_id": {f.s.ClientID()}})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	form := url.Values{"client_id": {f.s.ClientID()}, "client_secret": {f.s.ClientSecret()}, "code": {loc.Query().Get("code")}}
	r, err := http.PostForm(f.s.WebURL()+"login/oauth/access_token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(r.Body)
	vals, err := url.ParseQuery(string(body))
	if err != nil || !strings.HasPrefix(vals.Get("access_token"), "ghu_") || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		t.Errorf("form answer %s (%s)", body, r.Header.Get("Content-Type"))
	}

	// Injected faults reach the web flow too.
	f.s.FailNext("POST", "/login/oauth/access_token", http.StatusBadGateway, nil)
	if r, err := http.PostForm(f.s.WebURL()+"login/oauth/access_token", form); err != nil || r.StatusCode != http.StatusBadGateway {
		t.Errorf("fault: %v %v", r.StatusCode, err)
	}
}
