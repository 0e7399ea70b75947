package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// manifest is the manifest testfirst registers, for the public URL base.
func manifest(base string) github.Manifest {
	return github.Manifest{
		Name:               "testfirst",
		URL:                base,
		HookAttributes:     github.HookAttributes{URL: base + "/webhook", Active: true},
		RedirectURL:        base + "/setup/callback",
		Public:             false,
		DefaultPermissions: github.AppPermissions(),
		DefaultEvents:      []string{"check_run", "check_suite", "issue_comment", "issues", "pull_request"},
	}
}

func TestConvertManifest(t *testing.T) {
	s := fakegithub.New(t)
	ctx := context.Background()
	body, err := json.Marshal(manifest("https://tf.example.com"))
	if err != nil {
		t.Fatal(err)
	}
	registered, err := s.RegisterManifest(body)
	if err != nil {
		t.Fatalf("GitHub would refuse the manifest: %v", err)
	}
	c, err := github.NewManifestClient(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.ConvertManifest(ctx, registered.Code)
	if err != nil {
		t.Fatal(err)
	}
	want := github.AppRegistration{
		ID: s.AppID(), Slug: s.AppSlug(), Name: "testfirst", HTMLURL: "https://github.com/apps/testfirst",
		PEM: registered.PrivateKeyPEM, WebhookSecret: registered.WebhookSecret,
		ClientID: s.ClientID(), ClientSecret: registered.ClientSecret,
	}
	if diff := cmp.Diff(want, reg); diff != "" {
		t.Errorf("registration (-want +got):\n%s", diff)
	}
	if got := reg.InstallURL(); got != "https://github.com/apps/testfirst/installations/new" {
		t.Errorf("install URL %q", got)
	}
	// The key GitHub handed over proves itself.
	clients, err := github.NewClients(github.AppConfig{AppID: reg.ID, PrivateKey: reg.PEM, BaseURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if app, err := clients.App(ctx); err != nil || app.HTMLURL != reg.HTMLURL {
		t.Errorf("GET /app with the converted key: %+v, %v", app, err)
	}
	// The conversion went out without credentials.
	for _, r := range s.Requests() {
		if strings.HasPrefix(r.Path, "/app-manifests/") && r.Header.Get("Authorization") != "" {
			t.Errorf("conversion sent Authorization %q", r.Header.Get("Authorization"))
		}
	}

	// Used codes are GitHub's 404, reported as unknown and permanent.
	_, err = c.ConvertManifest(ctx, registered.Code)
	var apiErr *github.APIError
	if !github.IsUnknownCode(err) || !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || apiErr.Retryable {
		t.Errorf("used code: %v, want a permanent 404", err)
	}
	// The code is a credential until converted: errors never show it.
	again, err := s.RegisterManifest(body)
	if err != nil {
		t.Fatal(err)
	}
	s.FailNext("POST", "/app-manifests/", http.StatusBadGateway, nil)
	_, err = c.ConvertManifest(ctx, again.Code)
	if retry, _ := github.IsRetryable(err); err == nil || !retry || strings.Contains(err.Error(), again.Code) || !strings.Contains(err.Error(), "[code]") {
		t.Errorf("502: %v, want a retryable error without the code", err)
	}
	if _, err := c.ConvertManifest(ctx, again.Code); err != nil {
		t.Errorf("the code after a 502: %v", err)
	}
	// A code that would change the request path is refused before asking.
	before := len(s.Requests())
	for _, code := range []string{"", "../app", "a?b", "a/b", "a b"} {
		if _, err := c.ConvertManifest(ctx, code); err == nil || !strings.Contains(err.Error(), "is not a manifest code") {
			t.Errorf("code %q: %v", code, err)
		}
	}
	if after := len(s.Requests()); after != before {
		t.Errorf("malformed codes reached GitHub: %d requests", after-before)
	}
}

// TestAppPermissionsNoMembers: testfirst reads no organization
// membership. (That its events are the ones it handles is
// jobs.TestEventsCoverHandled.)
func TestAppPermissionsNoMembers(t *testing.T) {
	if _, ok := github.AppPermissions()["members"]; ok {
		t.Error("members permission requested: testfirst reads no organization membership")
	}
}

func TestWebURL(t *testing.T) {
	tests := []struct{ api, want string }{
		{"https://api.github.com/", "https://github.com/"},
		{"https://api.github.com", "https://github.com/"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/"},
		{"https://example.com/github/api/v3/", "https://example.com/github/"},
		{"https://api.octocorp.ghe.com/", "https://octocorp.ghe.com/"},
		{"http://127.0.0.1:8123/", "http://127.0.0.1:8123/"},
	}
	for _, tt := range tests {
		got, err := github.WebURL(tt.api)
		if err != nil || got != tt.want {
			t.Errorf("WebURL(%q) = %q, %v; want %q", tt.api, got, err, tt.want)
		}
	}
	if _, err := github.WebURL("api.github.com"); err == nil {
		t.Error("a relative API URL was accepted")
	}
}

func TestManifestFormURL(t *testing.T) {
	tests := []struct{ web, org, want string }{
		{"https://github.com/", "", "https://github.com/settings/apps/new?state=s+1"},
		{"https://ghe.example.com", "acme-corp", "https://ghe.example.com/organizations/acme-corp/settings/apps/new?state=s+1"},
	}
	for _, tt := range tests {
		got, err := github.ManifestFormURL(tt.web, tt.org, "s 1")
		if err != nil || got != tt.want {
			t.Errorf("ManifestFormURL(%q, %q) = %q, %v; want %q", tt.web, tt.org, got, err, tt.want)
		}
	}
	for _, org := range []string{"-acme", "acme/../x", "a?b", strings.Repeat("a", 40), "acme-"} {
		if _, err := github.ManifestFormURL("https://github.com/", org, "s"); err == nil || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("org %q: %v", org, err)
		}
	}
}
