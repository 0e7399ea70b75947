package handlers_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// setupHarness is the setup handler against the fake GitHub, storing in a
// temporary var/ directory.
type setupHarness struct {
	gh         *fakegithub.Server
	h          *handlers.Setup
	appFile    string
	logs       *bytes.Buffer
	registered []github.AppRegistration
}

func newSetupHarness(t *testing.T, cfg handlers.SetupConfig) *setupHarness {
	t.Helper()
	gh := fakegithub.New(t)
	conv, err := github.NewManifestClient(gh.URL())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Events == nil {
		cfg.Events = []string{"check_run", "check_suite", "issue_comment", "issues", "pull_request"}
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = "https://tf.example.com/"
	}
	if cfg.GitHubURL == "" {
		cfg.GitHubURL = "https://github.com/"
	}
	sh := &setupHarness{gh: gh, appFile: filepath.Join(t.TempDir(), "var", "github-app.yml"), logs: &bytes.Buffer{}}
	sh.h, err = handlers.NewSetup(cfg, conv, app.NewCredentialFiles(sh.appFile), slog.New(slog.NewJSONHandler(sh.logs, nil)),
		func(reg github.AppRegistration) { sh.registered = append(sh.registered, reg) })
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func (sh *setupHarness) get(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	sh.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var (
	formAction    = regexp.MustCompile(`<form action="([^"]*)" method="post">`)
	manifestInput = regexp.MustCompile(`<input type="hidden" name="manifest" value="([^"]*)">`)
)

// form reads the registration form: where it posts, the state in that
// address, and the manifest.
func form(t *testing.T, body string) (action, state string, manifest []byte) {
	t.Helper()
	a, m := formAction.FindStringSubmatch(body), manifestInput.FindStringSubmatch(body)
	if a == nil || m == nil {
		t.Fatalf("no manifest form in the page:\n%s", body)
	}
	action = html.UnescapeString(a[1])
	u, err := url.Parse(action)
	if err != nil {
		t.Fatal(err)
	}
	return action, u.Query().Get("state"), []byte(html.UnescapeString(m[1]))
}

// TestSetupPageManifest: GET / posts to GitHub a manifest whose URLs come
// from the public URL, with the permissions and events testfirst needs,
// and GitHub would accept it.
func TestSetupPageManifest(t *testing.T) {
	sh := newSetupHarness(t, handlers.SetupConfig{PublicURL: "https://tf.example.com/"})
	resp, body := sh.get(t, "/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET / = %d\n%s", resp.StatusCode, body)
	}
	action, state, manifest := form(t, body)
	if len(state) < 40 || action != "https://github.com/settings/apps/new?state="+state {
		t.Errorf("form action %q", action)
	}
	var got map[string]any
	if err := json.Unmarshal(manifest, &got); err != nil {
		t.Fatalf("manifest %s: %v", manifest, err)
	}
	want := map[string]any{
		"name":            "testfirst",
		"url":             "https://tf.example.com",
		"description":     "Test-first pipeline: hidden acceptance tests, pull requests graded in a sealed sandbox.",
		"hook_attributes": map[string]any{"url": "https://tf.example.com/webhook", "active": true},
		"redirect_url":    "https://tf.example.com/setup/callback",
		"callback_urls":   []any{"https://tf.example.com/login/callback"},
		"setup_url":       "https://tf.example.com/",
		"public":          false,
		"default_permissions": map[string]any{
			"checks": "write", "issues": "write", "contents": "read", "pull_requests": "read", "metadata": "read",
		},
		"default_events": []any{"check_run", "check_suite", "issue_comment", "issues", "pull_request"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	// A service that runs agents asks to push and open pull requests.
	sh = newSetupHarness(t, handlers.SetupConfig{PublicURL: "https://tf.example.com/", Permissions: github.AgentPermissions()})
	_, body = sh.get(t, "/")
	_, _, manifest = form(t, body)
	var agents struct {
		Permissions map[string]string `json:"default_permissions"`
	}
	if err := json.Unmarshal(manifest, &agents); err != nil || agents.Permissions["contents"] != "write" || agents.Permissions["pull_requests"] != "write" ||
		agents.Permissions["checks"] != "write" {
		t.Errorf("permissions with agents: %v, %v", agents.Permissions, err)
	}
	if _, err := sh.gh.RegisterManifest(manifest); err != nil {
		t.Errorf("GitHub would refuse the manifest: %v", err)
	}
	for k, v := range map[string]string{
		"Content-Type":    "text/html; charset=utf-8",
		"Cache-Control":   "no-store",
		"X-Frame-Options": "DENY",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://github.com") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if strings.Contains(body, "<script") {
		t.Error("the page uses JavaScript")
	}
	if strings.Contains(body, "cannot deliver webhooks") {
		t.Error("a public address was warned about")
	}
	// Each view issues its own state.
	if _, again, _ := form(t, mustBody(sh.get(t, "/"))); again == state {
		t.Error("two views share a state")
	}
}

func mustBody(_ *http.Response, body string) string { return body }

func mustQuery(t *testing.T, target string) url.Values {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestSetupPageTargets: an organization, GitHub Enterprise and a public URL
// GitHub cannot reach.
func TestSetupPageTargets(t *testing.T) {
	tests := []struct {
		name       string
		cfg        handlers.SetupConfig
		query      string
		status     int
		wantAction string // before "?state="
		wantText   string
	}{
		{"personal", handlers.SetupConfig{}, "", 200, "https://github.com/settings/apps/new", "for your personal account"},
		{"organization", handlers.SetupConfig{}, "?org=acme-corp", 200, "https://github.com/organizations/acme-corp/settings/apps/new", "for the organization acme-corp"},
		{"bad organization", handlers.SetupConfig{}, "?org=acme%2F..%2Fx", 400, "https://github.com/settings/apps/new", "a GitHub login is 1 to 39 letters, digits and inner hyphens"},
		{"enterprise", handlers.SetupConfig{GitHubURL: "https://ghe.example.com/"}, "?org=acme", 200, "https://ghe.example.com/organizations/acme/settings/apps/new", "acme"},
		{"localhost", handlers.SetupConfig{PublicURL: "http://localhost:8080"}, "", 200, "https://github.com/settings/apps/new", "GitHub cannot deliver webhooks to\n<code>http://localhost:8080</code>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newSetupHarness(t, tt.cfg)
			resp, body := sh.get(t, "/"+tt.query)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			action, _, _ := form(t, body)
			if before, _, _ := strings.Cut(action, "?state="); before != tt.wantAction {
				t.Errorf("action %q, want %s?state=…", action, tt.wantAction)
			}
			if !strings.Contains(body, tt.wantText) {
				t.Errorf("page lacks %q:\n%s", tt.wantText, body)
			}
		})
	}
}

// register plays the admin: open the page, post the manifest to (fake)
// GitHub, and return GitHub's redirect back.
func (sh *setupHarness) register(t *testing.T) (callback string, reg fakegithub.ManifestApp) {
	t.Helper()
	_, state, manifest := form(t, mustBody(sh.get(t, "/")))
	reg, err := sh.gh.RegisterManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return handlers.SetupCallbackPath + "?" + url.Values{"code": {reg.Code}, "state": {state}}.Encode(), reg
}

// conversions counts the conversion requests GitHub received.
func (sh *setupHarness) conversions() int {
	n := 0
	for _, r := range sh.gh.Requests() {
		if strings.HasPrefix(r.Path, "/app-manifests/") {
			n++
		}
	}
	return n
}

// TestSetupCallbackStores: GitHub's redirect with a good state converts the
// code once and stores every credential in a 0600 file the service's
// configuration then reads; the page says where to install the app.
func TestSetupCallbackStores(t *testing.T) {
	sh := newSetupHarness(t, handlers.SetupConfig{})
	callback, reg := sh.register(t)
	resp, body := sh.get(t, callback)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("callback = %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`href="https://github.com/apps/testfirst/installations/new"`,
		"Registered: next, install the app on your repositories.",
		sh.appFile,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if got := resp.Header.Get("Referrer-Policy"); got != "no-referrer" {
		t.Errorf("Referrer-Policy %q: the code would leak to the install page", got)
	}
	wantReg := []github.AppRegistration{{ID: sh.gh.AppID(), Slug: "testfirst", Name: "testfirst", HTMLURL: "https://github.com/apps/testfirst", ClientID: sh.gh.ClientID()}}
	if diff := cmp.Diff(wantReg, sh.registered); diff != "" {
		t.Errorf("registered (-want +got), without secrets:\n%s", diff)
	}

	dir := filepath.Dir(sh.appFile)
	files := map[string]string{
		"github-app.pem":        string(reg.PrivateKeyPEM),
		"github-webhook-secret": reg.WebhookSecret + "\n",
		"github-client-secret":  reg.ClientSecret + "\n",
	}
	for name, want := range files {
		assertFile(t, filepath.Join(dir, name), want)
	}
	assertFile(t, sh.appFile, "")
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("directory %s: %v, %v; want 0700", dir, info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 4 {
		t.Errorf("%d files in %s, want 4 (no temporary file left)", len(entries), dir)
	}
	// The service's configuration picks the app up.
	cfg, err := app.LoadConfig("", func(k string) string {
		return map[string]string{"TESTFIRST_GITHUB_APP_FILE": sh.appFile}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.GitHubAppID, string(cfg.PrivateKey), cfg.WebhookSecrets, cfg.GitHubClientID, string(cfg.ClientSecret)}
	want := []any{sh.gh.AppID(), string(reg.PrivateKeyPEM), [][]byte{[]byte(reg.WebhookSecret)}, sh.gh.ClientID(), reg.ClientSecret}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config from the app file (-want +got):\n%s", diff)
	}
	// No secret reached the log.
	for _, secret := range []string{reg.WebhookSecret, reg.ClientSecret, "PRIVATE KEY"} {
		if strings.Contains(sh.logs.String(), secret) {
			t.Errorf("a secret was logged: %s", sh.logs.String())
		}
	}

	// Reloading the callback shows the same page; the root page too. A
	// second registration is refused.
	if resp, body := sh.get(t, callback); resp.StatusCode != 200 || !strings.Contains(body, "installations/new") {
		t.Errorf("callback again: %d", resp.StatusCode)
	}
	if resp, body := sh.get(t, "/"); resp.StatusCode != 200 || !strings.Contains(body, "installations/new") {
		t.Errorf("GET / after registering: %d\n%s", resp.StatusCode, body)
	}
	if resp, body := sh.get(t, handlers.SetupCallbackPath+"?code=other&state=x"); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "already registered as testfirst") {
		t.Errorf("second registration: %d\n%s", resp.StatusCode, body)
	}
	if n := sh.conversions(); n != 1 {
		t.Errorf("%d conversions, want 1", n)
	}
	if len(sh.registered) != 1 {
		t.Errorf("registered called %d times", len(sh.registered))
	}
}

// assertFile checks a file is 0600 and, when want is not empty, holds want.
func assertFile(t *testing.T, path, want string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600", path, info.Mode().Perm())
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want != "" && string(got) != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

// TestSetupCallbackRefuses: a redirect that did not start here is a 400
// that says so, and the code is not spent.
func TestSetupCallbackRefuses(t *testing.T) {
	sh := newSetupHarness(t, handlers.SetupConfig{})
	callback, _ := sh.register(t)
	u, _ := url.Parse(callback)
	code, state := u.Query().Get("code"), u.Query().Get("state")
	tests := []struct {
		name, query, want string
	}{
		{"no code", "?state=" + state, "No code from GitHub"},
		{"no state", "?code=" + code, "No state"},
		{"forged state", "?code=" + code + "&state=forged", "Unknown or expired state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := sh.get(t, handlers.SetupCallbackPath+tt.query)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tt.want) || !strings.Contains(body, `<a href="/">Start the registration again</a>`) {
				t.Errorf("%d, want 400 saying %q:\n%s", resp.StatusCode, tt.want, body)
			}
		})
	}
	if n := sh.conversions(); n != 0 {
		t.Errorf("%d conversions for refused redirects", n)
	}
	// The real redirect still works, once; its state is then used up.
	if resp, body := sh.get(t, callback); resp.StatusCode != 200 {
		t.Fatalf("the real redirect: %d\n%s", resp.StatusCode, body)
	}
	sh2 := newSetupHarness(t, handlers.SetupConfig{})
	callback2, _ := sh2.register(t)
	bad := strings.Replace(callback2, "code=", "code=x", 1) // an unknown code spends the state
	sh2.get(t, bad)
	if resp, body := sh2.get(t, callback2); resp.StatusCode != 400 || !strings.Contains(body, "Unknown or expired state") {
		t.Errorf("a state used twice: %d", resp.StatusCode)
	}
}

// TestSetupConversionFails: GitHub refusing or failing the conversion is a
// clear page, and nothing is stored.
func TestSetupConversionFails(t *testing.T) {
	t.Run("unknown code", func(t *testing.T) {
		sh := newSetupHarness(t, handlers.SetupConfig{})
		_, state, _ := form(t, mustBody(sh.get(t, "/")))
		resp, body := sh.get(t, handlers.SetupCallbackPath+"?code=0123abcd&state="+state)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "GitHub does not know this code") || !strings.Contains(body, "converts once, within an hour") {
			t.Errorf("%d:\n%s", resp.StatusCode, body)
		}
		assertNothingStored(t, sh)
	})
	t.Run("GitHub fails", func(t *testing.T) {
		sh := newSetupHarness(t, handlers.SetupConfig{})
		callback, _ := sh.register(t)
		sh.gh.FailNext("POST", "/app-manifests/", http.StatusBadGateway, nil)
		resp, body := sh.get(t, callback)
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "GitHub did not hand over the app&#39;s credentials") || !strings.Contains(body, "GitHub answered 502") {
			t.Errorf("%d:\n%s", resp.StatusCode, body)
		}
		assertNothingStored(t, sh)
		if len(sh.registered) != 0 {
			t.Error("registered after a failure")
		}
		code := mustQuery(t, callback).Get("code")
		if strings.Contains(body, code) || strings.Contains(sh.logs.String(), code) {
			t.Errorf("the unspent code was shown or logged:\n%s", sh.logs.String())
		}
		// The code was not spent: reloading the same link registers.
		if resp, body := sh.get(t, callback); resp.StatusCode != 200 || len(sh.registered) != 1 {
			t.Errorf("retry: %d\n%s", resp.StatusCode, body)
		}
	})
}

func assertNothingStored(t *testing.T, sh *setupHarness) {
	t.Helper()
	if _, err := os.Stat(filepath.Dir(sh.appFile)); err == nil {
		var names []string
		filepath.WalkDir(filepath.Dir(sh.appFile), func(p string, d fs.DirEntry, err error) error {
			if d != nil && !d.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		if len(names) > 0 {
			t.Errorf("stored after a failure: %v", names)
		}
	}
}

// TestSetupNeverOverwrites: with a credential file already there, the page
// says which and the redirect does not spend the code.
func TestSetupNeverOverwrites(t *testing.T) {
	sh := newSetupHarness(t, handlers.SetupConfig{})
	callback, _ := sh.register(t)
	key := filepath.Join(filepath.Dir(sh.appFile), "github-app.pem")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("the old key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/", callback} {
		resp, body := sh.get(t, target)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, key+" already exists: testfirst never overwrites stored credentials; move it away") {
			t.Errorf("GET %s: %d\n%s", target, resp.StatusCode, body)
		}
	}
	if n := sh.conversions(); n != 0 {
		t.Errorf("the code was spent: %d conversions", n)
	}
	if got, _ := os.ReadFile(key); string(got) != "the old key" {
		t.Errorf("the old key was overwritten: %q", got)
	}
	// Once the old key is moved away, the same link registers.
	if err := os.Rename(key, key+".old"); err != nil {
		t.Fatal(err)
	}
	if resp, body := sh.get(t, callback); resp.StatusCode != 200 {
		t.Errorf("after moving the old key away: %d\n%s", resp.StatusCode, body)
	}
}
