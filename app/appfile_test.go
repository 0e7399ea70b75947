package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/github"
)

func registration(t *testing.T) github.AppRegistration {
	return github.AppRegistration{
		ID: 31, Slug: "testfirst-acme", Name: "testfirst-acme", HTMLURL: "https://github.com/apps/testfirst-acme",
		PEM: []byte(rsaKeyPEM(t)), WebhookSecret: "whsec", ClientID: "Iv23liAcme", ClientSecret: "clsec",
	}
}

// TestCredentialFilesSave: every secret in its own 0600 file, the app file
// last, naming them relative to itself; LoadConfig reads them back.
func TestCredentialFilesSave(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var")
	f := NewCredentialFiles(filepath.Join(dir, "github-app.yml"))
	f.now = func() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) }
	reg := registration(t)
	if err := f.Check(); err != nil {
		t.Fatalf("Check on an empty dir: %v", err)
	}
	if err := f.Save(reg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"github-app.pem":        string(reg.PEM),
		"github-webhook-secret": "whsec\n",
		"github-client-secret":  "clsec\n",
		"github-app.yml": "# The GitHub App testfirst-acme (https://github.com/apps/testfirst-acme), registered by testfirst serve on 2025-03-04T05:06:07Z.\n" +
			"# Its secrets are in the files named here, beside this one: never commit them.\n" +
			"github_app_id: 31\ngithub_private_key_file: github-app.pem\nwebhook_secret_file: github-webhook-secret\n" +
			"github_client_id: Iv23liAcme\ngithub_client_secret_file: github-client-secret\n",
	}
	got := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, _ := e.Info()
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		got[e.Name()] = string(data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", info.Mode().Perm())
	}

	// Read from another working directory: paths resolve beside the file.
	t.Chdir(t.TempDir())
	c, err := LoadConfig("", env(map[string]string{"TESTFIRST_GITHUB_APP_FILE": filepath.Join(dir, "github-app.yml")}))
	if err != nil {
		t.Fatal(err)
	}
	wantCfg := DefaultConfig()
	wantCfg.GitHubAppFile = filepath.Join(dir, "github-app.yml")
	wantCfg.GitHubAppID = 31
	wantCfg.GitHubPrivateKeyFile = filepath.Join(dir, "github-app.pem")
	wantCfg.WebhookSecretFile = filepath.Join(dir, "github-webhook-secret")
	wantCfg.GitHubClientID = "Iv23liAcme"
	wantCfg.GitHubClientSecretFile = filepath.Join(dir, "github-client-secret")
	wantCfg.PrivateKey = reg.PEM
	wantCfg.WebhookSecrets = [][]byte{[]byte("whsec")}
	wantCfg.ClientSecret = "clsec"
	if diff := cmp.Diff(wantCfg, c); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}

	// Never again over the same files.
	err = f.Save(registration(t))
	if err == nil || !strings.Contains(err.Error(), "already exist: testfirst never overwrites stored credentials; move them away") {
		t.Errorf("second Save: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "github-app.pem")); string(data) != string(reg.PEM) {
		t.Error("the key was overwritten")
	}
}

// TestCredentialFilesRefuse: bad registrations store nothing; an existing
// file is never replaced, even if it appears after Check.
func TestCredentialFilesRefuse(t *testing.T) {
	tests := []struct {
		name string
		edit func(*github.AppRegistration)
		want string
	}{
		{"no id", func(r *github.AppRegistration) { r.ID = 0 }, "app id 0"},
		{"not a key", func(r *github.AppRegistration) { r.PEM = []byte("hello") }, "the private key GitHub sent: not a PEM file"},
		{"no webhook secret", func(r *github.AppRegistration) { r.WebhookSecret = " " }, "no webhook secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "var")
			reg := registration(t)
			tt.edit(&reg)
			err := NewCredentialFiles(filepath.Join(dir, "github-app.yml")).Save(reg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("stored %d files", len(entries))
			}
		})
	}

	t.Run("file appears after the check", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "github-webhook-secret")
		if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := writeNew(path, []byte("new\n"))
		if err == nil || !strings.Contains(err.Error(), path+" already exists") {
			t.Errorf("writeNew over an existing file: %v", err)
		}
		if data, _ := os.ReadFile(path); string(data) != "old\n" {
			t.Errorf("overwritten: %q", data)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%d files left, want the old one only", len(entries))
		}
	})
}

// TestLoadConfigAppFile: the app file fills in an app only when nothing
// else names one, and a broken one says how to recover.
func TestLoadConfigAppFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var")
	appFile := filepath.Join(dir, "github-app.yml")
	if err := NewCredentialFiles(appFile).Save(registration(t)); err != nil {
		t.Fatal(err)
	}
	otherKey := writeFile(t, "other.pem", rsaKeyPEM(t))
	otherSecret := writeFile(t, "other-secret", "mine\n")

	c, err := LoadConfig("", env(map[string]string{
		"TESTFIRST_GITHUB_APP_FILE":         appFile,
		"TESTFIRST_GITHUB_APP_ID":           "99",
		"TESTFIRST_GITHUB_PRIVATE_KEY_FILE": otherKey,
		"TESTFIRST_WEBHOOK_SECRET_FILE":     otherSecret,
	}))
	if err != nil || c.GitHubAppID != 99 || c.GitHubPrivateKeyFile != otherKey || c.GitHubClientID != "" {
		t.Errorf("an app named in the environment lost to the app file: id %d key %s client %q, %v", c.GitHubAppID, c.GitHubPrivateKeyFile, c.GitHubClientID, err)
	}
	c, err = LoadConfig("", env(map[string]string{"TESTFIRST_GITHUB_APP_FILE": appFile, "TESTFIRST_WEBHOOK_SECRET_FILE": otherSecret}))
	if err != nil || c.GitHubAppID != 31 || string(c.WebhookSecrets[0]) != "mine" {
		t.Errorf("an explicit webhook secret file should win over the app file's: id %d, %v", c.GitHubAppID, err)
	}
	// Without the file (the default var/github-app.yml in an empty
	// directory) there is no app.
	t.Chdir(t.TempDir())
	if c, err := LoadConfig("", env(nil)); err != nil || c.HasApp() {
		t.Errorf("no app file: HasApp %v, %v", c.HasApp(), err)
	}

	tests := []struct{ name, content, want string }{
		{"unknown key", "github_app_id: 3\nlisten: :80\n", "field listen not found"},
		{"no id", "github_private_key_file: github-app.pem\n", "want github_app_id and github_private_key_file; move it away"},
		{"missing key file", "github_app_id: 3\ngithub_private_key_file: gone.pem\nwebhook_secret_file: github-webhook-secret\n", "gone.pem: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "github-app.yml", tt.content)
			_, err := LoadConfig("", env(map[string]string{"TESTFIRST_GITHUB_APP_FILE": p}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestConfigWebURL: github_url wins; else it derives from the API URL.
func TestConfigWebURL(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{nil, "https://github.com/"},
		{map[string]string{"TESTFIRST_GITHUB_API_URL": "https://ghe.example.com/api/v3/"}, "https://ghe.example.com/"},
		{map[string]string{"TESTFIRST_GITHUB_API_URL": "https://ghe.example.com/api/v3/", "TESTFIRST_GITHUB_URL": "https://git.example.com"}, "https://git.example.com/"},
	}
	for _, tt := range tests {
		c, err := LoadConfig("", env(tt.env))
		if err != nil || c.WebURL() != tt.want {
			t.Errorf("%v: WebURL %q, %v; want %q", tt.env, c.WebURL(), err, tt.want)
		}
	}
	_, err := LoadConfig("", env(map[string]string{"TESTFIRST_GITHUB_URL": "github.com"}))
	if err == nil || !strings.Contains(err.Error(), `github_url "github.com": want GitHub's absolute web address`) {
		t.Errorf("relative github_url: %v", err)
	}
}
