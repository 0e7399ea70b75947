package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	gh "github.com/google/go-github/v66/github"
)

// Manifest is a GitHub App manifest: what the app-manifest flow registers.
// A person posts it (as the form field "manifest") to GitHub's "new app"
// page, names the app there and confirms; GitHub then redirects to
// RedirectURL with a one-time code that ConvertManifest turns into the
// app's credentials.
type Manifest struct {
	Name           string         `json:"name,omitempty"`
	URL            string         `json:"url"`
	HookAttributes HookAttributes `json:"hook_attributes"`
	RedirectURL    string         `json:"redirect_url"`
	// CallbackURLs are where GitHub sends a user after an OAuth login.
	CallbackURLs []string `json:"callback_urls,omitempty"`
	// SetupURL is where GitHub sends a person after they install the app.
	SetupURL           string            `json:"setup_url,omitempty"`
	Description        string            `json:"description,omitempty"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// HookAttributes is a manifest's webhook.
type HookAttributes struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// AppPermissions are the repository permissions testfirst's calls need:
//
//   - checks write: create and update the grade's check run; check_run and
//     check_suite events;
//   - issues write: comments and labels on the ticket's issue; issues and
//     issue_comment events;
//   - contents read: the repository config, branch heads and tarballs;
//   - pull_requests read: pull_request events;
//   - metadata read: repositories and collaborator permissions (every app
//     has it).
//
// No organization permission is needed (members read is not).
func AppPermissions() map[string]string {
	return map[string]string{
		"checks":        "write",
		"contents":      "read",
		"issues":        "write",
		"metadata":      "read",
		"pull_requests": "read",
	}
}

// WebURL derives GitHub's web address from its REST API address:
// https://api.github.com/ is https://github.com/, GitHub Enterprise
// Server's https://HOST/api/v3/ is https://HOST/, GHE.com's
// https://api.SUB.ghe.com/ is https://SUB.ghe.com/. Any other API address
// (a test server) is taken to serve both at its root.
func WebURL(apiURL string) (string, error) {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("derive GitHub's web address from %q: not an absolute http(s) URL", apiURL)
	}
	path := strings.TrimSuffix(u.Path, "/")
	host := u.Host
	switch {
	case strings.HasSuffix(path, "/api/v3"):
		path = strings.TrimSuffix(path, "/api/v3")
	case strings.HasPrefix(host, "api."):
		host = strings.TrimPrefix(host, "api.")
		path = ""
	default:
		path = ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: host, Path: path + "/"}).String(), nil
}

// orgLogin is what GitHub accepts as an organization login.
var orgLogin = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$`)

// CheckOrg says what is wrong with an organization login, or nil.
func CheckOrg(org string) error {
	if !orgLogin.MatchString(org) {
		return fmt.Errorf("organization %q: a GitHub login is 1 to 39 letters, digits and inner hyphens", org)
	}
	return nil
}

// ManifestFormURL is where a manifest is posted: the "new app" page of a
// personal account (org empty) or of an organization, on GitHub's web
// address webURL, carrying state for the redirect to return.
func ManifestFormURL(webURL, org, state string) (string, error) {
	if !strings.HasSuffix(webURL, "/") {
		webURL += "/"
	}
	path := "settings/apps/new"
	if org != "" {
		if err := CheckOrg(org); err != nil {
			return "", err
		}
		path = "organizations/" + org + "/settings/apps/new"
	}
	return webURL + path + "?" + url.Values{"state": {state}}.Encode(), nil
}

// AppRegistration is what GitHub hands over once for an app registered
// from a manifest. PEM, WebhookSecret and ClientSecret are secrets.
type AppRegistration struct {
	ID      int64
	Slug    string
	Name    string
	HTMLURL string
	// PEM is the app's private key.
	PEM           []byte
	WebhookSecret string
	ClientID      string
	ClientSecret  string
}

// InstallURL is where a person installs the app on their repositories.
func (r AppRegistration) InstallURL() string { return InstallURL(r.HTMLURL) }

// InstallURL is the installation page of the app at htmlURL
// (https://github.com/apps/SLUG).
func InstallURL(htmlURL string) string {
	return strings.TrimSuffix(htmlURL, "/") + "/installations/new"
}

// manifestCode is what a manifest code looks like: GitHub's are hex; any
// character that could change the request path is refused.
var manifestCode = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// manifestTimeout bounds one conversion.
const manifestTimeout = 30 * time.Second

// ManifestClient converts manifest codes. It needs no credentials: the
// code is the credential.
type ManifestClient struct {
	gh  *gh.Client
	now func() time.Time
}

// NewManifestClient returns a client of the REST API at baseURL
// (DefaultBaseURL when empty).
func NewManifestClient(baseURL string) (*ManifestClient, error) {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	c, err := newClient(&http.Client{Timeout: manifestTimeout}, baseURL)
	if err != nil {
		return nil, err
	}
	return &ManifestClient{gh: c, now: time.Now}, nil
}

// ConvertManifest exchanges the code GitHub's redirect carried for the
// app's id, private key, webhook secret and OAuth client (POST
// /app-manifests/{code}/conversions). A code converts once, within an hour
// of the registration: an unknown, used or expired code is an *APIError
// wrapping ErrNotFound.
func (c *ManifestClient) ConvertManifest(ctx context.Context, code string) (AppRegistration, error) {
	if !manifestCode.MatchString(code) {
		return AppRegistration{}, fmt.Errorf("convert app manifest: %q is not a manifest code (letters, digits, '-' and '_')", code)
	}
	cfg, resp, err := c.gh.Apps.CompleteAppManifest(ctx, code)
	if err := classify("convert app manifest", resp, err, c.now()); err != nil {
		var e *APIError
		if errors.As(err, &e) {
			e.Err = redacted{err: e.Err, secret: code}
		}
		return AppRegistration{}, err
	}
	reg := AppRegistration{
		ID:            cfg.GetID(),
		Slug:          cfg.GetSlug(),
		Name:          cfg.GetName(),
		HTMLURL:       cfg.GetHTMLURL(),
		PEM:           []byte(cfg.GetPEM()),
		WebhookSecret: cfg.GetWebhookSecret(),
		ClientID:      cfg.GetClientID(),
		ClientSecret:  cfg.GetClientSecret(),
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"id", reg.ID > 0}, {"html_url", reg.HTMLURL != ""}, {"pem", len(reg.PEM) > 0}, {"webhook_secret", reg.WebhookSecret != ""},
	} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return AppRegistration{}, fmt.Errorf("convert app manifest: GitHub's answer lacks %s", strings.Join(missing, ", "))
	}
	return reg, nil
}

// redacted hides a secret (a manifest code, which the request URL in
// go-github's errors carries) from an error's text, for logs and pages.
type redacted struct {
	err    error
	secret string
}

func (r redacted) Error() string { return strings.ReplaceAll(r.err.Error(), r.secret, "[code]") }

func (r redacted) Unwrap() error { return r.err }

// IsUnknownCode reports whether err says GitHub does not know a manifest
// code (never issued, already converted, or older than an hour).
func IsUnknownCode(err error) bool { return errors.Is(err, ErrNotFound) }
