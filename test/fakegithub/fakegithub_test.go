package fakegithub_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	jwt "github.com/golang-jwt/jwt/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

const (
	owner    = "acme"
	repoName = "widgets"
	instID   = 7
	otherID  = 8
)

// testClock is a settable clock for the fake.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture is a fake GitHub with acme/widgets in installation 7 (two commits
// on main) and other/secret in installation 8, plus real clients.
type fixture struct {
	s        *fakegithub.Server
	clock    *testClock
	start    time.Time
	atr      *ghinstallation.AppsTransport
	itr      *ghinstallation.Transport
	app      *github.Client // authenticates as the app (JWT)
	inst     *github.Client // authenticates as installation 7
	firstSHA string
	mainSHA  string
	files    map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := fakegithub.New(t)
	start := time.Now().UTC().Truncate(time.Second)
	clk := &testClock{now: start}
	s.SetClock(clk.Now)
	s.AddInstallation(instID, owner)
	s.AddRepo(instID, owner, repoName, "main")
	s.AddInstallation(otherID, "other")
	s.AddRepo(otherID, "other", "secret", "main")
	s.Commit("other", "secret", "main", map[string]string{"x": "y"})
	first := s.Commit(owner, repoName, "main", map[string]string{"README.md": "hello\n"})
	files := map[string]string{
		"README.md":         "hello\n",
		"src/app.py":        "def add(a, b):\n    return a + b\n",
		"src/pkg/util.py":   "X = 1\n",
		"tests/test_app.py": "from src.app import add\n",
	}
	mainSHA := s.Commit(owner, repoName, "main", files)
	s.AddIssue(owner, repoName, 3, "dev", "Add numbers")
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, s.AppID(), s.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	atr.BaseURL = strings.TrimSuffix(s.URL(), "/")
	itr := ghinstallation.NewFromAppsTransport(atr, instID)
	return &fixture{
		s: s, clock: clk, start: start, atr: atr, itr: itr,
		app:      newClient(t, s, atr),
		inst:     newClient(t, s, itr),
		firstSHA: first,
		mainSHA:  mainSHA,
		files:    files,
	}
}

// newClient is a go-github client on the fake through rt.
func newClient(t *testing.T, s *fakegithub.Server, rt http.RoundTripper) *github.Client {
	t.Helper()
	c := github.NewClient(&http.Client{Transport: rt})
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = u
	return c
}

// freshInst is a new go-github client for installation 7 on the shared
// token transport (go-github remembers rate limits per client).
func (f *fixture) freshInst(t *testing.T) *github.Client { return newClient(t, f.s, f.itr) }

// token mints an installation token through the app client.
func (f *fixture) token(t *testing.T, id int64) string {
	t.Helper()
	tok, _, err := f.app.Apps.CreateInstallationToken(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tok.GetToken()
}

// raw sends a request with an Authorization header value ("" for none).
func (f *fixture) raw(t *testing.T, method, path, auth, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.s.URL()+strings.TrimPrefix(path, "/"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// apiErr is what a go-github error says: status, message, field errors.
type apiErr struct {
	Status  int
	Message string
	Errors  []github.Error
}

func errOf(t *testing.T, err error) apiErr {
	t.Helper()
	var er *github.ErrorResponse
	if !errors.As(err, &er) {
		t.Fatalf("error %v (%T) is not a *github.ErrorResponse", err, err)
	}
	return apiErr{Status: er.Response.StatusCode, Message: er.Message, Errors: er.Errors}
}

// claimsSigner signs fixed claims, ignoring what ghinstallation asks for.
type claimsSigner struct {
	key    *rsa.PrivateKey
	claims jwt.MapClaims
}

func (c claimsSigner) Sign(jwt.Claims) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodRS256, c.claims).SignedString(c.key)
}

func TestAppAuth(t *testing.T) {
	f := newFixture(t)
	appKey, err := jwt.ParseRSAPrivateKeyFromPEM(f.s.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	appID := strconv.FormatInt(f.s.AppID(), 10)
	tests := []struct {
		name    string
		key     *rsa.PrivateKey
		claims  jwt.MapClaims
		wantErr apiErr // zero: accepted
	}{
		{"iss as string", appKey, jwt.MapClaims{"iss": appID, "iat": now - 60, "exp": now + 540}, apiErr{}},
		{"iss as number", appKey, jwt.MapClaims{"iss": f.s.AppID(), "iat": now - 60, "exp": now + 540}, apiErr{}},
		{"iss as client id", appKey, jwt.MapClaims{"iss": f.s.ClientID(), "iat": now - 60, "exp": now + 540}, apiErr{}},
		{"exp ten minutes ahead, iat backdated", appKey, jwt.MapClaims{"iss": appID, "iat": now - 60, "exp": now + 590}, apiErr{}},
		{"wrong key", otherKey, jwt.MapClaims{"iss": appID, "iat": now - 60, "exp": now + 540}, apiErr{Status: 401, Message: "A JSON web token could not be decoded"}},
		{"wrong iss", appKey, jwt.MapClaims{"iss": "99", "iat": now - 60, "exp": now + 540}, apiErr{Status: 401, Message: "A JSON web token could not be decoded"}},
		{"expired", appKey, jwt.MapClaims{"iss": appID, "iat": now - 700, "exp": now - 100}, apiErr{Status: 401, Message: "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"}},
		{"exp too far", appKey, jwt.MapClaims{"iss": appID, "iat": now - 60, "exp": now + 1200}, apiErr{Status: 401, Message: "'Expiration time' claim ('exp') is too far in the future"}},
		{"iat in the future", appKey, jwt.MapClaims{"iss": appID, "iat": now + 120, "exp": now + 300}, apiErr{Status: 401, Message: "'Issued at' claim ('iat') must be an Integer representing a time in the past"}},
		{"fractional iat", appKey, jwt.MapClaims{"iss": appID, "iat": float64(now-60) + 0.5, "exp": now + 300}, apiErr{Status: 401, Message: "'Issued at' claim ('iat') must be an Integer representing a time in the past"}},
		{"missing iat", appKey, jwt.MapClaims{"iss": appID, "exp": now + 300}, apiErr{Status: 401, Message: "'Issued at' claim ('iat') must be an Integer representing a time in the past"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			atr, err := ghinstallation.NewAppsTransportWithOptions(http.DefaultTransport, f.s.AppID(), ghinstallation.WithSigner(claimsSigner{tt.key, tt.claims}))
			if err != nil {
				t.Fatal(err)
			}
			app, _, err := newClient(t, f.s, atr).Apps.Get(context.Background(), "")
			if tt.wantErr.Status == 0 {
				if err != nil {
					t.Fatalf("Apps.Get: %v", err)
				}
				if app.GetID() != f.s.AppID() || app.GetSlug() != f.s.AppSlug() {
					t.Errorf("app = %d/%s, want %d/%s", app.GetID(), app.GetSlug(), f.s.AppID(), f.s.AppSlug())
				}
				return
			}
			if diff := cmp.Diff(tt.wantErr, errOf(t, err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("ghinstallation transport", func(t *testing.T) {
		app, _, err := f.app.Apps.Get(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{f.s.AppID(), "testfirst", "testfirst-app"}, []any{app.GetID(), app.GetSlug(), app.GetOwner().GetLogin()}); diff != "" {
			t.Errorf("app (-want +got):\n%s", diff)
		}
		in, _, err := f.app.Apps.GetInstallation(context.Background(), instID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{int64(instID), owner, f.s.AppID(), "selected"}, []any{in.GetID(), in.GetAccount().GetLogin(), in.GetAppID(), in.GetRepositorySelection()}); diff != "" {
			t.Errorf("installation (-want +got):\n%s", diff)
		}
		if _, _, err := f.app.Apps.GetInstallation(context.Background(), 404); errOf(t, err).Status != 404 {
			t.Errorf("unknown installation: %v, want 404", err)
		}
		in, _, err = f.app.Apps.FindRepositoryInstallation(context.Background(), owner, repoName)
		if err != nil || in.GetID() != instID {
			t.Errorf("FindRepositoryInstallation = %v, %v; want %d", in.GetID(), err, instID)
		}
	})

	t.Run("not a JWT", func(t *testing.T) {
		tests := []struct {
			name, auth string
			want       int
		}{
			{"no credentials", "", 401},
			{"installation token", "token " + f.token(t, instID), 401},
			{"garbage bearer", "Bearer a.b.c", 401},
		}
		for _, tt := range tests {
			resp, body := f.raw(t, "GET", "app", tt.auth, "")
			if resp.StatusCode != tt.want {
				t.Errorf("%s: status %d, want %d (%s)", tt.name, resp.StatusCode, tt.want, body)
			}
		}
	})
}

func TestInstallationTokens(t *testing.T) {
	ctx := context.Background()
	t.Run("minted once and reused", func(t *testing.T) {
		f := newFixture(t)
		for range 3 {
			if _, _, err := f.inst.Repositories.Get(ctx, owner, repoName); err != nil {
				t.Fatal(err)
			}
		}
		var mints int
		tokens := map[string]bool{}
		for _, r := range f.s.Requests() {
			if r.Method == "POST" && r.Path == "/app/installations/7/access_tokens" {
				mints++
				if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
					t.Errorf("access token request authorized with %q, want a Bearer JWT", r.Header.Get("Authorization"))
				}
			}
			if strings.HasPrefix(r.Path, "/repos/") {
				tokens[r.Header.Get("Authorization")] = true
			}
		}
		if mints != 1 || len(tokens) != 1 {
			t.Errorf("minted %d tokens, used %d distinct; want 1 and 1", mints, len(tokens))
		}
	})

	t.Run("token shape and lifetime", func(t *testing.T) {
		f := newFixture(t)
		tok, resp, err := f.app.Apps.CreateInstallationToken(ctx, instID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(tok.GetToken(), "ghs_") || len(tok.GetToken()) != 40 {
			t.Errorf("token %q status %d; want 201 and ghs_ + 36 chars", tok.GetToken(), resp.StatusCode)
		}
		if !tok.GetExpiresAt().Time.Equal(f.start.Add(time.Hour)) {
			t.Errorf("expires_at %v, want %v", tok.GetExpiresAt().Time, f.start.Add(time.Hour))
		}
		if got := tok.GetPermissions().GetChecks(); got != "write" {
			t.Errorf("checks permission %q, want write", got)
		}
		if _, _, err := f.app.Apps.CreateInstallationToken(ctx, 999, nil); errOf(t, err).Status != 404 {
			t.Errorf("unknown installation: %v, want 404", err)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		tests := []struct {
			name   string
			expire func(f *fixture)
		}{
			{"ExpireTokens", func(f *fixture) { f.s.ExpireTokens() }},
			{"clock past an hour", func(f *fixture) { f.clock.Advance(61 * time.Minute) }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f := newFixture(t)
				if _, _, err := f.inst.Repositories.Get(ctx, owner, repoName); err != nil {
					t.Fatal(err)
				}
				tt.expire(f)
				_, _, err := f.inst.Repositories.Get(ctx, owner, repoName)
				if diff := cmp.Diff(apiErr{Status: 401, Message: "Bad credentials"}, errOf(t, err)); diff != "" {
					t.Errorf("expired token (-want +got):\n%s", diff)
				}
				itr := ghinstallation.NewFromAppsTransport(f.atr, instID)
				if _, _, err := newClient(t, f.s, itr).Repositories.Get(ctx, owner, repoName); err != nil {
					t.Errorf("fresh token after expiry: %v", err)
				}
			})
		}
	})

	t.Run("revoke", func(t *testing.T) {
		f := newFixture(t)
		if _, err := f.inst.Apps.RevokeInstallationToken(ctx); err != nil {
			t.Fatal(err)
		}
		_, _, err := f.inst.Repositories.Get(ctx, owner, repoName)
		if got := errOf(t, err).Status; got != 401 {
			t.Errorf("revoked token: status %d, want 401", got)
		}
	})

	t.Run("scoped to repositories", func(t *testing.T) {
		f := newFixture(t)
		f.s.AddRepo(instID, owner, "gadgets", "main")
		tok, _, err := f.app.Apps.CreateInstallationToken(ctx, instID, &github.InstallationTokenOptions{Repositories: []string{"gadgets"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(tok.Repositories) != 1 || tok.Repositories[0].GetFullName() != "acme/gadgets" {
			t.Errorf("token repositories = %v, want acme/gadgets", tok.Repositories)
		}
		resp, _ := f.raw(t, "GET", "repos/acme/widgets", "token "+tok.GetToken(), "")
		if resp.StatusCode != 404 {
			t.Errorf("scoped token on another repo: %d, want 404", resp.StatusCode)
		}
		resp, _ = f.raw(t, "GET", "repos/acme/gadgets", "Bearer "+tok.GetToken(), "")
		if resp.StatusCode != 200 {
			t.Errorf("scoped token (Bearer) on its repo: %d, want 200", resp.StatusCode)
		}
		_, _, err = f.app.Apps.CreateInstallationToken(ctx, instID, &github.InstallationTokenOptions{Repositories: []string{"secret"}})
		if got := errOf(t, err).Status; got != 422 {
			t.Errorf("token for a repo outside the installation: %d, want 422", got)
		}
		repos, _, err := f.inst.Apps.ListRepos(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range repos.Repositories {
			names = append(names, r.GetFullName())
		}
		if diff := cmp.Diff([]string{"acme/gadgets", "acme/widgets"}, names); diff != "" {
			t.Errorf("installation repositories (-want +got):\n%s", diff)
		}
	})
}

func TestRepoAccess(t *testing.T) {
	f := newFixture(t)
	tok := f.token(t, instID)
	jwtClient := func() string {
		req, _ := http.NewRequest("GET", f.s.URL()+"app", nil)
		var auth string
		rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			auth = r.Header.Get("Authorization")
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}}, nil
		})
		atr, err := ghinstallation.NewAppsTransport(rt, f.s.AppID(), f.s.PrivateKeyPEM())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := atr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		return auth
	}()
	tests := []struct {
		name, path, auth string
		want             apiErr
	}{
		{"ok", "repos/acme/widgets", "token " + tok, apiErr{}},
		{"owner and name are case-insensitive", "repos/ACME/Widgets", "token " + tok, apiErr{}},
		{"repo of another installation", "repos/other/secret", "token " + tok, apiErr{Status: 404, Message: "Not Found"}},
		{"unknown repo", "repos/acme/nothing", "token " + tok, apiErr{Status: 404, Message: "Not Found"}},
		{"no credentials", "repos/acme/widgets", "", apiErr{Status: 404, Message: "Not Found"}},
		{"unknown token", "repos/acme/widgets", "token ghs_000000000000000000000000000000000000", apiErr{Status: 401, Message: "Bad credentials"}},
		{"app JWT", "repos/acme/widgets", jwtClient, apiErr{Status: 403, Message: "Resource not accessible by integration"}},
		{"unknown route", "repos/acme/widgets/nope", "token " + tok, apiErr{Status: 404, Message: "Not Found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.raw(t, "GET", tt.path, tt.auth, "")
			var got apiErr
			if resp.StatusCode >= 400 {
				var e struct{ Message string }
				if err := json.Unmarshal(body, &e); err != nil {
					t.Fatalf("error body %q: %v", body, err)
				}
				got = apiErr{Status: resp.StatusCode, Message: e.Message}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestErrorBodyAndHeaders(t *testing.T) {
	f := newFixture(t)
	resp, body := f.raw(t, "GET", "no/such/route", "token "+f.token(t, instID), "")
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unknown route body (-want +got):\n%s", diff)
	}
	if resp.StatusCode != 404 || resp.Header.Get("X-GitHub-Request-Id") == "" {
		t.Errorf("status %d request id %q", resp.StatusCode, resp.Header.Get("X-GitHub-Request-Id"))
	}

	ctx := context.Background()
	_, r1, err := f.inst.Repositories.Get(ctx, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	_, r2, err := f.inst.Repositories.Get(ctx, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Rate.Limit != 5000 || r2.Rate.Remaining != r1.Rate.Remaining-1 || !r1.Rate.Reset.Time.Equal(f.start.Add(time.Hour)) {
		t.Errorf("rate %+v then %+v; want limit 5000, one used per call, reset in an hour", r1.Rate, r2.Rate)
	}
	if r1.Header.Get("X-GitHub-Request-Id") == r2.Header.Get("X-GitHub-Request-Id") {
		t.Errorf("request ids repeat: %q", r1.Header.Get("X-GitHub-Request-Id"))
	}
}

func TestRepoBranchRefContents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	repo, _, err := f.inst.Repositories.Get(ctx, owner, repoName)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"acme/widgets", "main", true}, []any{repo.GetFullName(), repo.GetDefaultBranch(), repo.GetPrivate()}); diff != "" {
		t.Errorf("repo (-want +got):\n%s", diff)
	}

	br, _, err := f.inst.Repositories.GetBranch(ctx, owner, repoName, "main", 0)
	if err != nil {
		t.Fatal(err)
	}
	if br.GetCommit().GetSHA() != f.mainSHA {
		t.Errorf("branch sha %s, want %s", br.GetCommit().GetSHA(), f.mainSHA)
	}
	// go-github's GetBranch reports any non-200 as a plain error.
	if _, resp, err := f.inst.Repositories.GetBranch(ctx, owner, repoName, "nope", 0); err == nil || resp.StatusCode != 404 {
		t.Errorf("missing branch: %v", err)
	}
	if resp, body := f.raw(t, "GET", "repos/acme/widgets/branches/nope", "token "+f.token(t, instID), ""); resp.StatusCode != 404 || !strings.Contains(string(body), `"message":"Branch not found"`) {
		t.Errorf("missing branch: %d %s", resp.StatusCode, body)
	}

	ref, _, err := f.inst.Git.GetRef(ctx, owner, repoName, "heads/main")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"refs/heads/main", "commit", f.mainSHA}, []string{ref.GetRef(), ref.GetObject().GetType(), ref.GetObject().GetSHA()}); diff != "" {
		t.Errorf("ref (-want +got):\n%s", diff)
	}
	if _, _, err := f.inst.Git.GetRef(ctx, owner, repoName, "heads/nope"); errOf(t, err).Status != 404 {
		t.Errorf("missing ref: %v", err)
	}

	tests := []struct {
		name, path, ref string
		want            string // file content
		wantStatus      int
	}{
		{"file at default branch", "src/app.py", "", f.files["src/app.py"], 200},
		{"file at branch", "src/pkg/util.py", "main", f.files["src/pkg/util.py"], 200},
		{"file at old sha", "README.md", f.firstSHA, "hello\n", 200},
		{"file at short sha", "README.md", f.mainSHA[:7], "hello\n", 200},
		{"file missing at old sha", "src/app.py", f.firstSHA, "", 404},
		{"missing file", "nope.txt", "", "", 404},
		{"unknown ref", "README.md", "nope", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _, resp, err := f.inst.Repositories.GetContents(ctx, owner, repoName, tt.path, &github.RepositoryContentGetOptions{Ref: tt.ref})
			if tt.wantStatus != 200 {
				if got := errOf(t, err).Status; got != tt.wantStatus {
					t.Errorf("status %d, want %d", got, tt.wantStatus)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := file.GetContent()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || got != tt.want || file.GetEncoding() != "base64" || file.GetPath() != tt.path {
				t.Errorf("got %d %q (%s, %s), want %q", resp.StatusCode, got, file.GetEncoding(), file.GetPath(), tt.want)
			}
		})
	}

	t.Run("blob sha is git's", func(t *testing.T) {
		file, _, _, err := f.inst.Repositories.GetContents(ctx, owner, repoName, "README.md", nil)
		if err != nil {
			t.Fatal(err)
		}
		// git hash-object of "hello\n".
		if got := file.GetSHA(); got != "ce013625030ba8dba906f756967f9e9ca394464a" {
			t.Errorf("blob sha %s", got)
		}
	})

	t.Run("directory", func(t *testing.T) {
		_, dir, _, err := f.inst.Repositories.GetContents(ctx, owner, repoName, "src", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range dir {
			got = append(got, e.GetType()+" "+e.GetPath())
		}
		if diff := cmp.Diff([]string{"file src/app.py", "dir src/pkg"}, got); diff != "" {
			t.Errorf("listing (-want +got):\n%s", diff)
		}
	})

	t.Run("download", func(t *testing.T) {
		rc, _, err := f.inst.Repositories.DownloadContents(ctx, owner, repoName, "src/app.py", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		if string(b) != f.files["src/app.py"] {
			t.Errorf("downloaded %q", b)
		}
	})
}

// untar reads a gzip tarball: the pax global comment and every entry
// (directories as "<dir>").
func untar(t *testing.T, body []byte) (string, map[string]string) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var comment string
	entries := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return comment, entries
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader:
			comment = h.PAXRecords["comment"]
		case tar.TypeDir:
			entries[h.Name] = "<dir>"
		default:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			entries[h.Name] = string(b)
		}
	}
}

func TestTarball(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tests := []struct {
		name, ref string
		sha       string
		want      map[string]string
	}{
		{"default branch", "", f.mainSHA, nil},
		{"branch", "main", f.mainSHA, nil},
		{"sha", f.firstSHA, f.firstSHA, map[string]string{"README.md": "hello\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link, resp, err := f.inst.Repositories.GetArchiveLink(ctx, owner, repoName, github.Tarball, &github.RepositoryContentGetOptions{Ref: tt.ref}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusFound {
				t.Errorf("status %d, want 302", resp.StatusCode)
			}
			dl, err := http.Get(link.String())
			if err != nil {
				t.Fatal(err)
			}
			defer dl.Body.Close()
			body, _ := io.ReadAll(dl.Body)
			if dl.StatusCode != 200 {
				t.Fatalf("download %s: %d %s", link, dl.StatusCode, body)
			}
			comment, entries := untar(t, body)
			top := "acme-widgets-" + tt.sha[:7] + "/"
			files := tt.want
			if files == nil {
				files = f.files
			}
			want := map[string]string{top: "<dir>"}
			for p, c := range files {
				want[top+p] = c
				for d := p; strings.Contains(d, "/"); {
					d = d[:strings.LastIndex(d, "/")]
					want[top+d+"/"] = "<dir>"
				}
			}
			if diff := cmp.Diff(want, entries); diff != "" {
				t.Errorf("tarball entries (-want +got):\n%s", diff)
			}
			if comment != tt.sha {
				t.Errorf("pax comment %q, want %s", comment, tt.sha)
			}
		})
	}

	t.Run("unknown ref", func(t *testing.T) {
		_, resp, err := f.inst.Repositories.GetArchiveLink(ctx, owner, repoName, github.Tarball, &github.RepositoryContentGetOptions{Ref: "nope"}, 0)
		if err == nil || resp == nil || resp.StatusCode != 404 {
			t.Errorf("unknown ref: %v", err)
		}
	})

	t.Run("link needs its token and expires", func(t *testing.T) {
		link, _, err := f.inst.Repositories.GetArchiveLink(ctx, owner, repoName, github.Tarball, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		bare := *link
		bare.RawQuery = ""
		f.clock.Advance(6 * time.Minute)
		for _, u := range []string{bare.String(), link.String()} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 404 {
				t.Errorf("GET %s: %d, want 404", u, resp.StatusCode)
			}
		}
	})
}

func TestCheckRuns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	feature := f.s.Commit(owner, repoName, "feature", map[string]string{"README.md": "hello\n", "src/app.py": "fixed\n"})
	f.s.AddPull(owner, repoName, 5, feature, "main", "Fixes #3", "")
	f.s.AddRepo(0, "forker", repoName, "main")
	forkSHA := f.s.Commit("forker", repoName, "patch", map[string]string{"src/app.py": "forked\n"})
	f.s.AddPull(owner, repoName, 6, forkSHA, "main", "Fixes #3", "forker/widgets")

	created, resp, err := f.inst.Checks.CreateCheckRun(ctx, owner, repoName, github.CreateCheckRunOptions{
		Name:       "testfirst",
		HeadSHA:    feature,
		Status:     github.String("in_progress"),
		ExternalID: github.String("grade-1"),
		DetailsURL: github.String("https://testfirst.example/grades/1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated || created.GetStatus() != "in_progress" || created.Conclusion != nil || created.CompletedAt != nil {
		t.Errorf("created %d %s %v %v", resp.StatusCode, created.GetStatus(), created.Conclusion, created.CompletedAt)
	}
	if len(created.PullRequests) != 1 || created.PullRequests[0].GetNumber() != 5 {
		t.Errorf("pull_requests %v, want #5", created.PullRequests)
	}

	f.clock.Advance(time.Minute)
	summary := "12 passed, 2 failed\n\n| criterion | result |"
	updated, _, err := f.inst.Checks.UpdateCheckRun(ctx, owner, repoName, created.GetID(), github.UpdateCheckRunOptions{
		Status:     github.String("completed"),
		Conclusion: github.String("failure"),
		Output: &github.CheckRunOutput{
			Title:   github.String("12/14 hidden tests passed · trust: isolated"),
			Summary: github.String(summary),
			Text:    github.String("failing: t1, t2"),
			Annotations: []*github.CheckRunAnnotation{{
				Path: github.String("src/app.py"), StartLine: github.Int(1), EndLine: github.Int(2),
				AnnotationLevel: github.String("warning"), Message: github.String("touched"),
			}},
		},
		Actions: []*github.CheckRunAction{{Label: "Regrade", Description: "Grade this pull request again", Identifier: "regrade"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetName() != "testfirst" || updated.GetOutput().GetAnnotationsCount() != 1 {
		t.Errorf("update kept name %q, annotations %d", updated.GetName(), updated.GetOutput().GetAnnotationsCount())
	}
	got, _, err := f.inst.Checks.GetCheckRun(ctx, owner, repoName, created.GetID())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(
		[]any{"completed", "failure", f.start.Add(time.Minute), "12/14 hidden tests passed · trust: isolated", summary, "failing: t1, t2", f.s.AppID()},
		[]any{got.GetStatus(), got.GetConclusion(), got.GetCompletedAt().Time, got.GetOutput().GetTitle(), got.GetOutput().GetSummary(), got.GetOutput().GetText(), got.GetApp().GetID()},
	); diff != "" {
		t.Errorf("GetCheckRun (-want +got):\n%s", diff)
	}

	// A conclusion alone completes the run; the details URL defaults to the app's homepage.
	second, _, err := f.inst.Checks.CreateCheckRun(ctx, owner, repoName, github.CreateCheckRunOptions{
		Name: "testfirst", HeadSHA: feature, Conclusion: github.String("success"),
		Output: &github.CheckRunOutput{Title: github.String("14/14"), Summary: github.String("all passed")},
	})
	if err != nil {
		t.Fatal(err)
	}
	forkRun, _, err := f.inst.Checks.CreateCheckRun(ctx, owner, repoName, github.CreateCheckRunOptions{Name: "testfirst", HeadSHA: forkSHA})
	if err != nil {
		t.Fatal(err)
	}
	if forkRun.GetStatus() != "queued" || len(forkRun.PullRequests) != 0 {
		t.Errorf("fork run: status %q, pull_requests %v; want queued and none (GitHub leaves forks out)", forkRun.GetStatus(), forkRun.PullRequests)
	}

	wantRuns := []fakegithub.CheckRun{
		{
			ID: created.GetID(), Name: "testfirst", HeadSHA: feature, Status: "completed", Conclusion: "failure",
			Title: "12/14 hidden tests passed · trust: isolated", Summary: summary, Text: "failing: t1, t2",
			DetailsURL: "https://testfirst.example/grades/1", ExternalID: "grade-1",
			Actions:     []fakegithub.CheckRunAction{{Label: "Regrade", Description: "Grade this pull request again", Identifier: "regrade"}},
			Annotations: []fakegithub.Annotation{{Path: "src/app.py", StartLine: 1, EndLine: 2, Level: "warning", Message: "touched"}},
			StartedAt:   f.start, CompletedAt: f.start.Add(time.Minute),
		},
		{
			ID: second.GetID(), Name: "testfirst", HeadSHA: feature, Status: "completed", Conclusion: "success",
			Title: "14/14", Summary: "all passed", DetailsURL: "https://testfirst.example",
			StartedAt: f.start.Add(time.Minute), CompletedAt: f.start.Add(time.Minute),
		},
		{
			ID: forkRun.GetID(), Name: "testfirst", HeadSHA: forkSHA, Status: "queued",
			DetailsURL: "https://testfirst.example", StartedAt: f.start.Add(time.Minute),
		},
	}
	if diff := cmp.Diff(wantRuns, f.s.CheckRuns(owner, repoName)); diff != "" {
		t.Errorf("CheckRuns (-want +got):\n%s", diff)
	}

	listTests := []struct {
		name, ref string
		opts      *github.ListCheckRunsOptions
		want      []int64
	}{
		{"latest per name", feature, nil, []int64{second.GetID()}},
		{"by branch", "feature", nil, []int64{second.GetID()}},
		{"all", feature, &github.ListCheckRunsOptions{Filter: github.String("all")}, []int64{second.GetID(), created.GetID()}},
		{"by status", feature, &github.ListCheckRunsOptions{Filter: github.String("all"), Status: github.String("queued")}, nil},
		{"other name", feature, &github.ListCheckRunsOptions{CheckName: github.String("lint")}, nil},
		{"fork head", forkSHA, nil, []int64{forkRun.GetID()}},
	}
	for _, tt := range listTests {
		t.Run("list "+tt.name, func(t *testing.T) {
			res, _, err := f.inst.Checks.ListCheckRunsForRef(ctx, owner, repoName, tt.ref, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, cr := range res.CheckRuns {
				ids = append(ids, cr.GetID())
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" || res.GetTotal() != len(tt.want) {
				t.Errorf("ids (-want +got):\n%s total %d", diff, res.GetTotal())
			}
		})
	}

	if _, _, err := f.inst.Checks.GetCheckRun(ctx, owner, repoName, 1); errOf(t, err).Status != 404 {
		t.Errorf("unknown check run: %v", err)
	}
	if _, _, err := f.inst.Checks.UpdateCheckRun(ctx, owner, repoName, 1, github.UpdateCheckRunOptions{Status: github.String("in_progress")}); errOf(t, err).Status != 404 {
		t.Errorf("update unknown check run: %v", err)
	}
}

func TestCheckRunValidation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ok := func(o github.CreateCheckRunOptions) github.CreateCheckRunOptions {
		if o.Name == "" {
			o.Name = "testfirst"
		}
		if o.HeadSHA == "" {
			o.HeadSHA = f.mainSHA
		}
		return o
	}
	out := func(title, summary string) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary)}
	}
	action := func(label, desc, id string) []*github.CheckRunAction {
		return []*github.CheckRunAction{{Label: label, Description: desc, Identifier: id}}
	}
	tests := []struct {
		name string
		opts github.CreateCheckRunOptions
		want apiErr
	}{
		{"missing name", github.CreateCheckRunOptions{HeadSHA: f.mainSHA}, apiErr{Status: 422, Message: "Invalid request.\n\n\"name\" wasn't supplied."}},
		{"missing head_sha", github.CreateCheckRunOptions{Name: "testfirst"}, apiErr{Status: 422, Message: "Invalid request.\n\n\"head_sha\" wasn't supplied."}},
		{"unknown head_sha", ok(github.CreateCheckRunOptions{HeadSHA: strings.Repeat("a", 40)}), apiErr{Status: 422, Message: "No commit found for SHA: " + strings.Repeat("a", 40)}},
		{"completed without conclusion", ok(github.CreateCheckRunOptions{Status: github.String("completed")}), apiErr{Status: 422, Message: "Invalid request.\n\n\"conclusion\" wasn't supplied."}},
		{"unknown status", ok(github.CreateCheckRunOptions{Status: github.String("done")}), apiErr{Status: 422, Message: "Invalid request.\n\nFor 'properties/status', \"done\" is not one of [\"queued\", \"in_progress\", \"completed\", \"waiting\", \"requested\", \"pending\"]."}},
		{"actions-only status", ok(github.CreateCheckRunOptions{Status: github.String("waiting")}), apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "CheckRun", Code: "custom", Field: "status", Message: "status waiting can only be set by GitHub Actions"}}}},
		{"unknown conclusion", ok(github.CreateCheckRunOptions{Conclusion: github.String("passed")}), apiErr{Status: 422, Message: "Invalid request.\n\nFor 'properties/conclusion', \"passed\" is not one of [\"action_required\", \"cancelled\", \"failure\", \"neutral\", \"success\", \"skipped\", \"stale\", \"timed_out\"]."}},
		{"stale conclusion", ok(github.CreateCheckRunOptions{Conclusion: github.String("stale")}), apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "CheckRun", Code: "custom", Field: "conclusion", Message: "conclusion stale can only be set by GitHub"}}}},
		{"output without title", ok(github.CreateCheckRunOptions{Output: &github.CheckRunOutput{Summary: github.String("s")}}), apiErr{Status: 422, Message: "Invalid request.\n\n\"title\" wasn't supplied."}},
		{"output without summary", ok(github.CreateCheckRunOptions{Output: &github.CheckRunOutput{Title: github.String("t")}}), apiErr{Status: 422, Message: "Invalid request.\n\n\"summary\" wasn't supplied."}},
		{"summary of 65535 characters", ok(github.CreateCheckRunOptions{Output: out("t", strings.Repeat("a", 65535))}), apiErr{}},
		{"summary too long", ok(github.CreateCheckRunOptions{Output: out("t", strings.Repeat("a", 65536))}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 65535 characters are allowed; 65536 were supplied."}},
		{"summary over 65535 bytes", ok(github.CreateCheckRunOptions{Output: out("t", strings.Repeat("é", 40000))}), apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "CheckRun", Code: "custom", Field: "summary", Message: "summary exceeds a maximum bytesize of 65535"}}}},
		{"text too long", ok(github.CreateCheckRunOptions{Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String("s"), Text: github.String(strings.Repeat("a", 70000))}}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 65535 characters are allowed; 70000 were supplied."}},
		{"bad annotation level", ok(github.CreateCheckRunOptions{Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String("s"), Annotations: []*github.CheckRunAnnotation{{Path: github.String("a"), StartLine: github.Int(1), EndLine: github.Int(1), AnnotationLevel: github.String("error"), Message: github.String("m")}}}}), apiErr{Status: 422, Message: "Invalid request.\n\nFor 'properties/annotation_level', \"error\" is not one of [\"notice\", \"warning\", \"failure\"]."}},
		{"three actions at their limits", ok(github.CreateCheckRunOptions{Actions: append(append(action(strings.Repeat("l", 20), strings.Repeat("d", 40), strings.Repeat("i", 20)), action("b", "b", "b")...), action("c", "c", "c")...)}), apiErr{}},
		{"four actions", ok(github.CreateCheckRunOptions{Actions: append(append(append(action("a", "a", "a"), action("b", "b", "b")...), action("c", "c", "c")...), action("d", "d", "d")...)}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 3 items are allowed; 4 were supplied."}},
		{"label over 20", ok(github.CreateCheckRunOptions{Actions: action(strings.Repeat("l", 21), "d", "i")}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 20 characters are allowed; 21 were supplied."}},
		{"description over 40", ok(github.CreateCheckRunOptions{Actions: action("l", strings.Repeat("d", 41), "i")}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 40 characters are allowed; 41 were supplied."}},
		{"identifier over 20", ok(github.CreateCheckRunOptions{Actions: action("l", "d", strings.Repeat("i", 21))}), apiErr{Status: 422, Message: "Invalid request.\n\nOnly 20 characters are allowed; 21 were supplied."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(f.s.CheckRuns(owner, repoName))
			_, _, err := f.inst.Checks.CreateCheckRun(ctx, owner, repoName, tt.opts)
			after := len(f.s.CheckRuns(owner, repoName))
			if tt.want.Status == 0 {
				if err != nil || after != before+1 {
					t.Errorf("create: %v (runs %d → %d)", err, before, after)
				}
				return
			}
			if diff := cmp.Diff(tt.want, errOf(t, err)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if after != before {
				t.Errorf("a rejected run was stored")
			}
		})
	}

	t.Run("update validates too", func(t *testing.T) {
		run, _, err := f.inst.Checks.CreateCheckRun(ctx, owner, repoName, ok(github.CreateCheckRunOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = f.inst.Checks.UpdateCheckRun(ctx, owner, repoName, run.GetID(), github.UpdateCheckRunOptions{
			Actions: append(append(append(action("a", "a", "a"), action("b", "b", "b")...), action("c", "c", "c")...), action("d", "d", "d")...),
		})
		if got := errOf(t, err); got.Status != 422 {
			t.Errorf("update with 4 actions: %+v", got)
		}
		_, _, err = f.inst.Checks.UpdateCheckRun(ctx, owner, repoName, run.GetID(), github.UpdateCheckRunOptions{Status: github.String("completed")})
		if got := errOf(t, err); got.Status != 422 {
			t.Errorf("update to completed without conclusion: %+v", got)
		}
	})

	t.Run("malformed JSON", func(t *testing.T) {
		resp, body := f.raw(t, "POST", "repos/acme/widgets/check-runs", "token "+f.token(t, instID), `{"name":`)
		if resp.StatusCode != 400 || !strings.Contains(string(body), "Problems parsing JSON") {
			t.Errorf("%d %s", resp.StatusCode, body)
		}
	})
}

func TestComments(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.s.AddPull(owner, repoName, 5, f.mainSHA, "main", "Fixes #3", "")

	c1, resp, err := f.inst.Issues.CreateComment(ctx, owner, repoName, 3, &github.IssueComment{Body: github.String("tests v1 ready for review")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{201, "testfirst[bot]", "Bot", "tests v1 ready for review"}, []any{resp.StatusCode, c1.GetUser().GetLogin(), c1.GetUser().GetType(), c1.GetBody()}); diff != "" {
		t.Errorf("created comment (-want +got):\n%s", diff)
	}
	f.clock.Advance(time.Minute)
	c2, _, err := f.inst.Issues.CreateComment(ctx, owner, repoName, 3, &github.IssueComment{Body: github.String("approved")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.inst.Issues.CreateComment(ctx, owner, repoName, 5, &github.IssueComment{Body: github.String("grading")}); err != nil {
		t.Errorf("comment on a pull request: %v", err)
	}
	f.clock.Advance(time.Minute)
	edited, _, err := f.inst.Issues.EditComment(ctx, owner, repoName, c2.GetID(), &github.IssueComment{Body: github.String("approved v1")})
	if err != nil || edited.GetBody() != "approved v1" {
		t.Fatalf("edit: %v %q", err, edited.GetBody())
	}

	page1, resp, err := f.inst.Issues.ListComments(ctx, owner, repoName, 3, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page1) != 1 || page1[0].GetID() != c1.GetID() || resp.NextPage != 2 || resp.LastPage != 2 {
		t.Errorf("page 1: %d comments, next %d last %d", len(page1), resp.NextPage, resp.LastPage)
	}
	page2, resp, err := f.inst.Issues.ListComments(ctx, owner, repoName, 3, &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 1, Page: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page2) != 1 || page2[0].GetID() != c2.GetID() || resp.NextPage != 0 {
		t.Errorf("page 2: %d comments, next %d", len(page2), resp.NextPage)
	}

	want := []fakegithub.Comment{
		{ID: c1.GetID(), Body: "tests v1 ready for review", User: "testfirst[bot]", CreatedAt: f.start, UpdatedAt: f.start},
		{ID: c2.GetID(), Body: "approved v1", User: "testfirst[bot]", CreatedAt: f.start.Add(time.Minute), UpdatedAt: f.start.Add(2 * time.Minute)},
	}
	if diff := cmp.Diff(want, f.s.Comments(owner, repoName, 3)); diff != "" {
		t.Errorf("Comments (-want +got):\n%s", diff)
	}

	errTests := []struct {
		name   string
		number int
		body   *string
		want   apiErr
	}{
		{"unknown issue", 99, github.String("x"), apiErr{Status: 404, Message: "Not Found"}},
		{"blank body", 3, github.String("  "), apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "IssueComment", Code: "unprocessable", Field: "data", Message: "Body cannot be blank"}}}},
		{"missing body", 3, nil, apiErr{Status: 422, Message: "Invalid request.\n\n\"body\" wasn't supplied."}},
		{"body too long", 3, github.String(strings.Repeat("x", 65537)), apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "IssueComment", Code: "unprocessable", Field: "data", Message: "Body is too long (maximum is 65536 characters)"}}}},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := f.inst.Issues.CreateComment(ctx, owner, repoName, tt.number, &github.IssueComment{Body: tt.body})
			if diff := cmp.Diff(tt.want, errOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	l, resp, err := f.inst.Issues.CreateLabel(ctx, owner, repoName, &github.Label{Name: github.String("test-first"), Color: github.String("0e8a16"), Description: github.String("hidden tests first")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{201, "test-first", "0e8a16", "hidden tests first"}, []any{resp.StatusCode, l.GetName(), l.GetColor(), l.GetDescription()}); diff != "" {
		t.Errorf("created label (-want +got):\n%s", diff)
	}

	createTests := []struct {
		name  string
		label *github.Label
		want  apiErr
	}{
		{"already exists, any case", &github.Label{Name: github.String("Test-First")}, apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "Label", Code: "already_exists", Field: "name"}}}},
		{"bad color", &github.Label{Name: github.String("x"), Color: github.String("green")}, apiErr{Status: 422, Message: "Validation Failed", Errors: []github.Error{{Resource: "Label", Code: "invalid", Field: "color"}}}},
		{"missing name", &github.Label{Color: github.String("ffffff")}, apiErr{Status: 422, Message: "Invalid request.\n\n\"name\" wasn't supplied."}},
	}
	for _, tt := range createTests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := f.inst.Issues.CreateLabel(ctx, owner, repoName, tt.label)
			if diff := cmp.Diff(tt.want, errOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	got, _, err := f.inst.Issues.GetLabel(ctx, owner, repoName, "TEST-FIRST")
	if err != nil || got.GetName() != "test-first" {
		t.Errorf("GetLabel ignoring case: %v %q", err, got.GetName())
	}
	if _, _, err := f.inst.Issues.GetLabel(ctx, owner, repoName, "nope"); errOf(t, err).Status != 404 {
		t.Errorf("missing label: %v", err)
	}

	added, resp, err := f.inst.Issues.AddLabelsToIssue(ctx, owner, repoName, 3, []string{"test-first", "lane:pair", "needs review"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range added {
		names = append(names, l.GetName()+"#"+l.GetColor())
	}
	if diff := cmp.Diff([]string{"lane:pair#ededed", "needs review#ededed", "test-first#0e8a16"}, names); diff != "" || resp.StatusCode != 200 {
		t.Errorf("added labels (-want +got):\n%s status %d", diff, resp.StatusCode)
	}
	if _, _, err := f.inst.Issues.AddLabelsToIssue(ctx, owner, repoName, 99, []string{"x"}); errOf(t, err).Status != 404 {
		t.Errorf("labels on unknown issue: %v", err)
	}

	if _, err := f.inst.Issues.RemoveLabelForIssue(ctx, owner, repoName, 3, "needs review"); err != nil {
		t.Errorf("remove: %v", err)
	}
	_, err = f.inst.Issues.RemoveLabelForIssue(ctx, owner, repoName, 3, "needs review")
	if diff := cmp.Diff(apiErr{Status: 404, Message: "Label does not exist"}, errOf(t, err)); diff != "" {
		t.Errorf("remove again (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"lane:pair", "test-first"}, f.s.IssueLabels(owner, repoName, 3)); diff != "" {
		t.Errorf("IssueLabels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"lane:pair", "needs review", "test-first"}, f.s.RepoLabels(owner, repoName)); diff != "" {
		t.Errorf("RepoLabels (-want +got):\n%s", diff)
	}
	is, _, err := f.inst.Issues.Get(ctx, owner, repoName, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{3, "dev", "Add numbers", 2, false}, []any{is.GetNumber(), is.GetUser().GetLogin(), is.GetBody(), len(is.Labels), is.IsPullRequest()}); diff != "" {
		t.Errorf("issue (-want +got):\n%s", diff)
	}

	f.s.LabelIssue(owner, repoName, 3, "extra")
	if diff := cmp.Diff([]string{"extra", "lane:pair", "test-first"}, f.s.IssueLabels(owner, repoName, 3)); diff != "" {
		t.Errorf("after LabelIssue (-want +got):\n%s", diff)
	}

	// Closing, reopening and editing, as a person does on GitHub.
	state := func() []any {
		t.Helper()
		is, _, err := f.inst.Issues.Get(ctx, owner, repoName, 3)
		if err != nil {
			t.Fatal(err)
		}
		return []any{is.GetState(), is.ClosedAt != nil, is.GetTitle(), is.GetBody()}
	}
	f.s.CloseIssue(owner, repoName, 3)
	if diff := cmp.Diff([]any{"closed", true, "Issue #3", "Add numbers"}, state()); diff != "" {
		t.Errorf("after CloseIssue (-want +got):\n%s", diff)
	}
	f.s.ReopenIssue(owner, repoName, 3)
	f.s.EditIssue(owner, repoName, 3, "Add numbers, rounded", "- [ ] rounds")
	if diff := cmp.Diff([]any{"open", false, "Add numbers, rounded", "- [ ] rounds"}, state()); diff != "" {
		t.Errorf("after ReopenIssue and EditIssue (-want +got):\n%s", diff)
	}
}

func TestPulls(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	feature := f.s.Commit(owner, repoName, "feature", map[string]string{"README.md": "hello\n"})
	f.s.AddPull(owner, repoName, 5, feature, "main", "Fixes #3", "")
	f.s.AddRepo(0, "forker", repoName, "main")
	forkSHA := f.s.Commit("forker", repoName, "patch", map[string]string{"src/app.py": "forked\n"})
	f.s.AddPull(owner, repoName, 6, forkSHA, "main", "Fixes acme/widgets#3", "forker/widgets")

	tests := []struct {
		number int
		want   []any
	}{
		{5, []any{"Fixes #3", feature, "feature", "acme/widgets", false, "main", f.mainSHA, "acme"}},
		{6, []any{"Fixes acme/widgets#3", forkSHA, "patch", "forker/widgets", true, "main", f.mainSHA, "forker"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.number), func(t *testing.T) {
			pr, _, err := f.inst.PullRequests.Get(ctx, owner, repoName, tt.number)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{pr.GetBody(), pr.GetHead().GetSHA(), pr.GetHead().GetRef(), pr.GetHead().GetRepo().GetFullName(), pr.GetHead().GetRepo().GetFork(), pr.GetBase().GetRef(), pr.GetBase().GetSHA(), pr.GetUser().GetLogin()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pull (-want +got):\n%s", diff)
			}
			is, _, err := f.inst.Issues.Get(ctx, owner, repoName, tt.number)
			if err != nil || !is.IsPullRequest() {
				t.Errorf("issue side of the pull: %v, is pull %v", err, is.IsPullRequest())
			}
		})
	}

	// The fork's head is reachable through the base repository, like refs/pull/6/head.
	file, _, _, err := f.inst.Repositories.GetContents(ctx, owner, repoName, "src/app.py", &github.RepositoryContentGetOptions{Ref: forkSHA})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := file.GetContent(); c != "forked\n" {
		t.Errorf("fork head content %q", c)
	}
	if _, _, err := f.inst.PullRequests.Get(ctx, owner, repoName, 3); errOf(t, err).Status != 404 {
		t.Errorf("an issue is not a pull: %v", err)
	}
}

func TestPermission(t *testing.T) {
	f := newFixture(t)
	for _, role := range []string{"admin", "maintain", "write", "triage", "read", "none"} {
		f.s.SetPermission(owner, repoName, "user-"+role, role)
	}
	tests := []struct {
		login, permission, role string
		push                    bool
		wantStatus              int
	}{
		{"user-admin", "admin", "admin", true, 200},
		{"user-maintain", "write", "maintain", true, 200},
		{"user-write", "write", "write", true, 200},
		{"user-triage", "read", "triage", false, 200},
		{"user-read", "read", "read", false, 200},
		{"user-none", "none", "none", false, 200},
		{"dev", "none", "none", false, 200}, // issue author without a role
		{"ghost", "", "", false, 404},
	}
	for _, tt := range tests {
		t.Run(tt.login, func(t *testing.T) {
			lvl, _, err := f.inst.Repositories.GetPermissionLevel(context.Background(), owner, repoName, tt.login)
			if tt.wantStatus != 200 {
				if got := errOf(t, err).Status; got != tt.wantStatus {
					t.Errorf("status %d, want %d", got, tt.wantStatus)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []any{lvl.GetPermission(), lvl.GetRoleName(), lvl.GetUser().GetLogin(), lvl.GetUser().GetPermissions()["push"]}
			if diff := cmp.Diff([]any{tt.permission, tt.role, tt.login, tt.push}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	// A renamed account keeps its id and role under the new login; the
	// old login names no one until claimed, then another account.
	id := f.s.UserID("user-write")
	f.s.RenameLogin("user-write", "user-renamed")
	lvl, _, err := f.inst.Repositories.GetPermissionLevel(context.Background(), owner, repoName, "user-renamed")
	if err != nil || lvl.GetRoleName() != "write" || lvl.GetUser().GetID() != id {
		t.Errorf("renamed: %v, role %q, id %d, want write and %d", err, lvl.GetRoleName(), lvl.GetUser().GetID(), id)
	}
	if _, _, err := f.inst.Repositories.GetPermissionLevel(context.Background(), owner, repoName, "user-write"); errOf(t, err).Status != 404 {
		t.Errorf("the freed login: %v, want 404", err)
	}
	if claimed := f.s.ClaimLogin("user-write"); claimed == id {
		t.Errorf("the claimed login kept the renamed account's id %d", id)
	}
}

func TestDeliveries(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var ids []int64
	for i := range 5 {
		ids = append(ids, f.s.AddDelivery(fakegithub.Delivery{
			GUID: "guid-" + strconv.Itoa(i), Event: "issues", Action: "labeled",
			Status: "OK", StatusCode: 200, InstallationID: instID, Duration: 0.25,
			DeliveredAt:    f.start.Add(time.Duration(i) * time.Minute),
			RequestHeaders: map[string]string{"X-GitHub-Event": "issues"},
			RequestPayload: json.RawMessage(`{"action":"labeled"}`),
		}))
	}

	var got []int64
	var pages int
	opts := &github.ListCursorOptions{PerPage: 2}
	for {
		list, resp, err := f.app.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, d := range list {
			got = append(got, d.GetID())
		}
		if resp.Cursor == "" {
			break
		}
		opts.Cursor = resp.Cursor
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if diff := cmp.Diff(want, got); diff != "" || pages != 3 {
		t.Errorf("deliveries newest first over %d pages (-want +got):\n%s", pages, diff)
	}

	d, _, err := f.app.Apps.GetHookDelivery(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"guid-1", "issues", "labeled", 200, `{"action":"labeled"}`, "issues"},
		[]any{d.GetGUID(), d.GetEvent(), d.GetAction(), d.GetStatusCode(), string(*d.Request.RawPayload), d.Request.Headers["X-GitHub-Event"]}); diff != "" {
		t.Errorf("delivery (-want +got):\n%s", diff)
	}

	_, resp, err := f.app.Apps.RedeliverHookDelivery(ctx, ids[2])
	var accepted *github.AcceptedError
	if !errors.As(err, &accepted) || resp.StatusCode != http.StatusAccepted {
		t.Errorf("redeliver: %v, want 202 (go-github's AcceptedError)", err)
	}
	if _, _, err := f.app.Apps.RedeliverHookDelivery(ctx, 1); errOf(t, err).Status != 404 {
		t.Errorf("redeliver unknown: %v", err)
	}
	if _, _, err := f.inst.Apps.ListHookDeliveries(ctx, nil); errOf(t, err).Status != 401 {
		t.Errorf("deliveries with an installation token: %v, want 401", err)
	}
	if diff := cmp.Diff([]int64{ids[2]}, f.s.Redeliveries()); diff != "" {
		t.Errorf("Redeliveries (-want +got):\n%s", diff)
	}
}

func TestFailNext(t *testing.T) {
	ctx := context.Background()
	reset := time.Now().Add(time.Minute).Truncate(time.Second)
	tests := []struct {
		name   string
		status int
		header http.Header
		check  func(t *testing.T, err error, resp *github.Response)
	}{
		{"502", http.StatusBadGateway, nil, func(t *testing.T, err error, _ *github.Response) {
			if diff := cmp.Diff(apiErr{Status: 502, Message: "Server Error"}, errOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{"403 primary rate limit", http.StatusForbidden, http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(reset.Unix(), 10)}}, func(t *testing.T, err error, _ *github.Response) {
			var rl *github.RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("%v (%T), want *github.RateLimitError", err, err)
			}
			if rl.Rate.Remaining != 0 || !rl.Rate.Reset.Time.Equal(reset) || rl.Message != "API rate limit exceeded for installation ID 7." {
				t.Errorf("rate %+v message %q", rl.Rate, rl.Message)
			}
		}},
		{"403 secondary rate limit", http.StatusForbidden, http.Header{"Retry-After": {"30"}}, func(t *testing.T, err error, _ *github.Response) {
			var ab *github.AbuseRateLimitError
			if !errors.As(err, &ab) {
				t.Fatalf("%v (%T), want *github.AbuseRateLimitError", err, err)
			}
			if ab.RetryAfter == nil || *ab.RetryAfter != 30*time.Second {
				t.Errorf("retry after %v", ab.RetryAfter)
			}
		}},
		{"429 with retry-after", http.StatusTooManyRequests, http.Header{"Retry-After": {"7"}}, func(t *testing.T, err error, resp *github.Response) {
			got := errOf(t, err)
			if got.Status != 429 || !strings.Contains(got.Message, "secondary rate limit") || resp.Header.Get("Retry-After") != "7" {
				t.Errorf("%+v retry-after %q", got, resp.Header.Get("Retry-After"))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if _, _, err := f.inst.Repositories.Get(ctx, owner, repoName); err != nil { // mint the token first
				t.Fatal(err)
			}
			f.s.FailNext("GET", "/repos/acme/widgets", tt.status, tt.header)
			_, resp, err := f.freshInst(t).Repositories.Get(ctx, owner, repoName)
			if err == nil {
				t.Fatal("no error")
			}
			tt.check(t, err, resp)
			if resp.Header.Get("X-GitHub-Request-Id") == "" || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("fault headers %v", resp.Header)
			}
			if _, _, err := f.freshInst(t).Repositories.Get(ctx, owner, repoName); err != nil {
				t.Errorf("after the fault: %v", err)
			}
			reqs := f.s.Requests()
			var statuses []int
			for _, r := range reqs[len(reqs)-2:] {
				statuses = append(statuses, r.Status)
			}
			if diff := cmp.Diff([]int{tt.status, 200}, statuses); diff != "" {
				t.Errorf("recorded statuses (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("access token endpoint", func(t *testing.T) {
		f := newFixture(t)
		f.s.FailNext("POST", "/app/installations/", http.StatusBadGateway, nil)
		_, _, err := f.inst.Repositories.Get(ctx, owner, repoName)
		var he *ghinstallation.HTTPError
		if !errors.As(err, &he) || he.Response.StatusCode != 502 {
			t.Fatalf("%v (%T), want ghinstallation's HTTPError with 502", err, err)
		}
		if _, _, err := f.inst.Repositories.Get(ctx, owner, repoName); err != nil {
			t.Errorf("after the fault: %v", err)
		}
	})

	t.Run("matches method and prefix only", func(t *testing.T) {
		f := newFixture(t)
		f.s.FailNext("POST", "/repos/acme/widgets/issues", http.StatusInternalServerError, nil)
		if _, _, err := f.inst.Issues.Get(ctx, owner, repoName, 3); err != nil {
			t.Errorf("GET should pass: %v", err)
		}
		_, _, err := f.inst.Issues.CreateComment(ctx, owner, repoName, 3, &github.IssueComment{Body: github.String("x")})
		if got := errOf(t, err).Status; got != 500 {
			t.Errorf("POST status %d, want 500", got)
		}
		if got := f.s.Comments(owner, repoName, 3); len(got) != 0 {
			t.Errorf("a failed request stored a comment: %v", got)
		}
	})
}

func TestRequestsRecorded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.inst.Issues.CreateComment(ctx, owner, repoName, 3, &github.IssueComment{Body: github.String("hello")}); err != nil {
		t.Fatal(err)
	}
	f.raw(t, "GET", "nope?x=1", "", "")

	type rec struct {
		Method, Path string
		Query        url.Values
		Status       int
		Auth         string
		Body         map[string]any
	}
	var got []rec
	for _, r := range f.s.Requests() {
		auth, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		var body map[string]any
		if len(r.Body) > 0 {
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("body %q: %v", r.Body, err)
			}
		}
		got = append(got, rec{r.Method, r.Path, r.Query, r.Status, auth, body})
	}
	want := []rec{
		{"POST", "/app/installations/7/access_tokens", url.Values{}, 201, "Bearer", nil},
		{"POST", "/repos/acme/widgets/issues/3/comments", url.Values{}, 201, "token", map[string]any{"body": "hello"}},
		{"GET", "/nope", url.Values{"x": {"1"}}, 404, "", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Requests (-want +got):\n%s", diff)
	}
}

func TestPrimaryRateLimitExhausted(t *testing.T) {
	f := newFixture(t)
	auth := "token " + f.token(t, instID)
	var last *http.Response
	for range 5000 {
		last, _ = f.raw(t, "GET", "repos/acme/widgets", auth, "")
	}
	if last.StatusCode != 200 || last.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("5000th call: %d remaining %q", last.StatusCode, last.Header.Get("X-RateLimit-Remaining"))
	}
	_, _, err := f.freshInst(t).Repositories.Get(context.Background(), owner, repoName)
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || rl.Rate.Limit != 5000 || rl.Message != "API rate limit exceeded for installation ID 7." {
		t.Fatalf("5001st call: %v (%T)", err, err)
	}
	// A new window opens when the fake clock passes the reset.
	f.clock.Advance(time.Hour)
	if resp, _ := f.raw(t, "GET", "repos/acme/widgets", auth, ""); resp.StatusCode != 401 {
		t.Errorf("the token expired with the hour too: got %d, want 401", resp.StatusCode)
	}
	if _, resp, err := newClient(t, f.s, ghinstallation.NewFromAppsTransport(f.atr, instID)).Repositories.Get(context.Background(), owner, repoName); err != nil || resp.Rate.Remaining != 4999 {
		t.Errorf("after reset: %v, remaining %d", err, resp.Rate.Remaining)
	}
}

// testManifest is a manifest as testfirst's setup page posts it.
const testManifest = `{
  "name": "testfirst-acme",
  "url": "https://tf.example.com",
  "hook_attributes": {"url": "https://tf.example.com/webhook", "active": true},
  "redirect_url": "https://tf.example.com/setup/callback",
  "callback_urls": ["https://tf.example.com/oauth/callback"],
  "setup_url": "https://tf.example.com/",
  "public": false,
  "default_permissions": {"checks": "write", "issues": "write", "contents": "read", "pull_requests": "read", "metadata": "read"},
  "default_events": ["issues", "issue_comment", "pull_request", "check_run", "check_suite"]
}`

// TestManifestConversion: a registered manifest's code converts once into
// the app's id, a real RSA key that the fake's JWT auth then accepts, and
// the webhook and client secrets; GET /app shows what the manifest asked.
func TestManifestConversion(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	reg, err := f.s.RegisterManifest([]byte(testManifest))
	if err != nil {
		t.Fatal(err)
	}
	anon := newClient(t, f.s, http.DefaultTransport)
	cfg, resp, err := anon.Apps.CompleteAppManifest(ctx, reg.Code)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("status %d, want 201", resp.StatusCode)
	}
	got := []any{cfg.GetID(), cfg.GetSlug(), cfg.GetName(), cfg.GetHTMLURL(), cfg.GetExternalURL(), cfg.GetClientID(), cfg.GetClientSecret(), cfg.GetWebhookSecret(), cfg.GetPEM()}
	want := []any{f.s.AppID(), f.s.AppSlug(), "testfirst-acme", "https://github.com/apps/testfirst", "https://tf.example.com", f.s.ClientID(), reg.ClientSecret, reg.WebhookSecret, string(reg.PrivateKeyPEM)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conversion (-want +got):\n%s", diff)
	}
	if reg.WebhookSecret == "" || reg.ClientSecret == "" || reg.WebhookSecret == reg.ClientSecret {
		t.Errorf("secrets %q, %q: want two fresh ones", reg.WebhookSecret, reg.ClientSecret)
	}

	// The converted key signs the app's JWTs; the original key still does
	// (an app may have several keys).
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, cfg.GetID(), []byte(cfg.GetPEM()))
	if err != nil {
		t.Fatalf("the PEM is not an RSA key ghinstallation takes: %v", err)
	}
	atr.BaseURL = strings.TrimSuffix(f.s.URL(), "/")
	app, _, err := newClient(t, f.s, atr).Apps.Get(ctx, "")
	if err != nil {
		t.Fatalf("GET /app with the converted key: %v", err)
	}
	wantApp := []any{f.s.AppID(), "testfirst-acme", map[string]string{"checks": "write", "contents": "read", "issues": "write", "metadata": "read", "pull_requests": "read"}, []string{"check_run", "check_suite", "issue_comment", "issues", "pull_request"}}
	gotApp := []any{app.GetID(), app.GetName(), map[string]string{"checks": app.GetPermissions().GetChecks(), "contents": app.GetPermissions().GetContents(), "issues": app.GetPermissions().GetIssues(), "metadata": app.GetPermissions().GetMetadata(), "pull_requests": app.GetPermissions().GetPullRequests()}, app.Events}
	if diff := cmp.Diff(wantApp, gotApp); diff != "" {
		t.Errorf("GET /app after registration (-want +got):\n%s", diff)
	}
	if _, _, err := f.app.Apps.Get(ctx, ""); err != nil {
		t.Errorf("the original key stopped working: %v", err)
	}

	// A code converts once; an unknown one is GitHub's 404.
	for _, code := range []string{reg.Code, "0123456789abcdef"} {
		_, _, err := anon.Apps.CompleteAppManifest(ctx, code)
		if diff := cmp.Diff(apiErr{Status: 404, Message: "Not Found"}, errOf(t, err)); diff != "" {
			t.Errorf("code %s again (-want +got):\n%s", code, diff)
		}
	}
	// A code is good for an hour of GitHub's clock.
	late, err := f.s.RegisterManifest([]byte(testManifest))
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	if _, _, err := anon.Apps.CompleteAppManifest(ctx, late.Code); errOf(t, err).Status != 404 {
		t.Errorf("an hour-old code: %v, want 404", err)
	}
	// The endpoint takes no credentials, but a bad one is still refused.
	if resp, _ := f.raw(t, "POST", "app-manifests/x/conversions", "token nope", ""); resp.StatusCode != 401 {
		t.Errorf("bad credentials: %d, want 401", resp.StatusCode)
	}
	var posts []int
	for _, r := range f.s.Requests() {
		if strings.HasPrefix(r.Path, "/app-manifests/") {
			posts = append(posts, r.Status)
		}
	}
	if diff := cmp.Diff([]int{201, 404, 404, 404, 401}, posts); diff != "" {
		t.Errorf("recorded conversions (-want +got):\n%s", diff)
	}
}

// TestRegisterManifestRefuses: what GitHub's "new app" page refuses, the
// fake refuses, saying why.
func TestRegisterManifestRefuses(t *testing.T) {
	s := fakegithub.New(t)
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(testManifest), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, manifest, want string
	}{
		{"not JSON", "manifest", "not a JSON object"},
		{"no url", edit(func(m map[string]any) { delete(m, "url") }), "url is required"},
		{"relative hook", edit(func(m map[string]any) { m["hook_attributes"] = map[string]any{"url": "/webhook"} }), `hook_attributes.url "/webhook" is not an absolute`},
		{"long name", edit(func(m map[string]any) { m["name"] = strings.Repeat("x", 35) }), "longer than 34"},
		{"unknown permission", edit(func(m map[string]any) { m["default_permissions"].(map[string]any)["everything"] = "write" }), `unknown permission "everything"`},
		{"bad level", edit(func(m map[string]any) { m["default_permissions"].(map[string]any)["metadata"] = "write" }), `metadata may be [read], not "write"`},
		{"event without permission", edit(func(m map[string]any) { delete(m["default_permissions"].(map[string]any), "checks") }), "check_run needs the checks permission"},
		{"installation event", edit(func(m map[string]any) { m["default_events"] = []string{"installation"} }), "installation is sent to every app"},
		{"unknown event", edit(func(m map[string]any) { m["default_events"] = []string{"issue"} }), `unknown event "issue"`},
		{"events without hook", edit(func(m map[string]any) {
			m["hook_attributes"] = map[string]any{"url": "https://x.example", "active": false}
		}), "need an active webhook"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.RegisterManifest([]byte(tt.manifest))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
