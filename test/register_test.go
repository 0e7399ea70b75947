package test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

var (
	formAction    = regexp.MustCompile(`<form action="([^"]*)" method="post">`)
	manifestInput = regexp.MustCompile(`<input type="hidden" name="manifest" value="([^"]*)">`)
)

// TestServeRegistersApp drives the real binary with no credentials: its
// page registers the app from a manifest on (fake) GitHub, GitHub's
// redirect stores the credentials, and the same process then serves as the
// app: it proves the new key with GET /app, accepts a delivery signed with
// the new webhook secret and runs its job with an installation token.
func TestServeRegistersApp(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(957387, "Codertocat")
	gh.AddRepo(957387, "Codertocat", "Hello-World", "main")
	dir := t.TempDir()
	s := runServe(t, dir,
		"TESTFIRST_GITHUB_API_URL="+gh.URL(),
		"TESTFIRST_PUBLIC_URL=https://tf.example.test",
	)

	// The page: a form that posts the manifest to GitHub with a state.
	code, page := s.get(t, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d\n%s", code, page)
	}
	a, m := formAction.FindStringSubmatch(page), manifestInput.FindStringSubmatch(page)
	if a == nil || m == nil {
		t.Fatalf("no manifest form:\n%s", page)
	}
	action, err := url.Parse(html.UnescapeString(a[1]))
	if err != nil {
		t.Fatal(err)
	}
	state := action.Query().Get("state")
	// With a test API URL, GitHub's web side is the same server.
	if want := strings.TrimSuffix(gh.URL(), "/") + "/settings/apps/new"; strings.TrimSuffix(action.String(), "?"+action.RawQuery) != want || state == "" {
		t.Errorf("form posts to %s, want %s?state=…", action, want)
	}
	manifest := []byte(html.UnescapeString(m[1]))
	var mf struct {
		URL  string `json:"url"`
		Hook struct {
			URL string `json:"url"`
		} `json:"hook_attributes"`
		RedirectURL string `json:"redirect_url"`
	}
	if err := json.Unmarshal(manifest, &mf); err != nil {
		t.Fatal(err)
	}
	if mf.URL != "https://tf.example.test" || mf.Hook.URL != "https://tf.example.test/webhook" || mf.RedirectURL != "https://tf.example.test/setup/callback" {
		t.Errorf("manifest URLs %+v do not come from TESTFIRST_PUBLIC_URL", mf)
	}

	// The admin confirms on GitHub; GitHub redirects back with the code.
	reg, err := gh.RegisterManifest(manifest)
	if err != nil {
		t.Fatalf("GitHub would refuse the manifest: %v", err)
	}
	code, page = s.get(t, "/setup/callback?"+url.Values{"code": {reg.Code}, "state": {state}}.Encode())
	if code != http.StatusOK || !strings.Contains(page, "https://github.com/apps/testfirst/installations/new") {
		t.Fatalf("callback = %d\n%s", code, page)
	}

	// The same process serves again, as the app, on the same address.
	select {
	case addr := <-s.listening:
		if "http://"+addr != s.url {
			t.Errorf("serving again on %s, was %s", addr, s.url)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen again after registering:\n%s", s.log())
	}
	if !strings.Contains(s.log(), `"msg":"github app","app":"testfirst","id":424242`) {
		t.Errorf("serve did not prove the app:\n%s", s.log())
	}
	// GET /app was signed with the key GitHub handed over.
	key, err := jwt.ParseRSAPrivateKeyFromPEM(reg.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	proven := false
	for _, r := range gh.Requests() {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.Path != "/app" || r.Status != http.StatusOK || !ok {
			continue
		}
		if _, err := jwt.Parse(raw, func(*jwt.Token) (any, error) { return &key.PublicKey, nil }); err == nil {
			proven = true
		}
	}
	if !proven {
		t.Error("no GET /app signed with the registered key answered 200")
	}
	if code, page := s.get(t, "/"); code != http.StatusOK || !strings.Contains(page, "https://github.com/apps/testfirst/installations/new") {
		t.Errorf("GET / as the app = %d\n%s", code, page)
	}
	// The admin reloads GitHub's redirect: it explains, rather than 404.
	code, page = s.get(t, "/setup/callback?"+url.Values{"code": {reg.Code}, "state": {state}}.Encode())
	if code != http.StatusOK || !strings.Contains(page, "one-time redirect") || !strings.Contains(page, "https://github.com/apps/testfirst/installations/new") {
		t.Errorf("the callback reloaded as the app = %d\n%s", code, page)
	}
	if strings.Contains(page, "testfirst then labels") || !strings.Contains(page, "people label issues") {
		t.Errorf("the page does not say who labels issues:\n%s", page)
	}

	// The stored files, 0600.
	for _, name := range []string{"github-app.yml", "github-app.pem", "github-webhook-secret", "github-client-secret"} {
		info, err := os.Stat(filepath.Join(dir, "var", name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("var/%s: %v, %v; want a 0600 file", name, info, err)
		}
	}
	for _, secret := range []string{reg.WebhookSecret, reg.ClientSecret, "PRIVATE KEY"} {
		if strings.Contains(s.log(), secret) {
			t.Errorf("a secret reached the log")
		}
	}

	// A delivery signed with the new secret is accepted and its job runs
	// with an installation token minted with the new key.
	body, err := os.ReadFile(filepath.Join(fixtures, "installation", "created.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code := s.deliver(t, "wrong", "installation", "d-reg-0", body); code != http.StatusUnauthorized {
		t.Errorf("a delivery with another secret answered %d, want 401", code)
	}
	if code := s.deliver(t, reg.WebhookSecret, "installation", "d-reg-1", body); code != http.StatusAccepted {
		t.Fatalf("a delivery signed with the new secret answered %d, want 202", code)
	}
	want := "lane:pair,test-first,test-first:approved"
	deadline := time.Now().Add(30 * time.Second)
	for strings.Join(gh.RepoLabels("Codertocat", "Hello-World"), ",") != want {
		if time.Now().After(deadline) {
			t.Fatalf("labels %v, want %s", gh.RepoLabels("Codertocat", "Hello-World"), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
