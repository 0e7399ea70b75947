package fakegithub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"time"
)

// manifestCodeLifetime is how long GitHub keeps a manifest code.
const manifestCodeLifetime = time.Hour

// maxAppName is the longest app name GitHub accepts.
const maxAppName = 34

// manifestCode is a registration waiting for its credentials to be
// fetched once.
type manifestCode struct {
	issuedAt      time.Time
	keyPEM        []byte
	webhookSecret string
	clientSecret  string
}

// ManifestApp is what registering from a manifest produced: the code
// GitHub appends to the manifest's redirect_url, and the credentials that
// code converts into.
type ManifestApp struct {
	Code          string
	PrivateKeyPEM []byte
	WebhookSecret string
	ClientSecret  string
}

// manifest is the part of a GitHub App manifest GitHub checks.
type manifest struct {
	Name           string `json:"name"`
	URL            string `json:"url"`
	Description    string `json:"description"`
	HookAttributes *struct {
		URL    string `json:"url"`
		Active *bool  `json:"active"`
	} `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url"`
	CallbackURLs       []string          `json:"callback_urls"`
	SetupURL           string            `json:"setup_url"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// eventPermission is the permission an app needs to subscribe to an event.
// installation and installation_repositories are absent: every app gets
// them and none may list them.
var eventPermission = map[string]string{
	"check_run":                   "checks",
	"check_suite":                 "checks",
	"create":                      "contents",
	"delete":                      "contents",
	"issue_comment":               "issues",
	"issues":                      "issues",
	"label":                       "metadata",
	"member":                      "members",
	"public":                      "metadata",
	"pull_request":                "pull_requests",
	"pull_request_review":         "pull_requests",
	"pull_request_review_comment": "pull_requests",
	"push":                        "contents",
	"release":                     "contents",
	"repository":                  "metadata",
	"status":                      "statuses",
	"workflow_run":                "actions",
}

// knownPermissions are the app permissions GitHub knows, by the levels
// each allows.
var knownPermissions = map[string][]string{
	"actions":                {"read", "write"},
	"administration":         {"read", "write"},
	"checks":                 {"read", "write"},
	"contents":               {"read", "write"},
	"deployments":            {"read", "write"},
	"environments":           {"read", "write"},
	"issues":                 {"read", "write"},
	"members":                {"read", "write"},
	"metadata":               {"read"},
	"organization_hooks":     {"read", "write"},
	"packages":               {"read", "write"},
	"pages":                  {"read", "write"},
	"pull_requests":          {"read", "write"},
	"repository_hooks":       {"read", "write"},
	"repository_projects":    {"read", "write", "admin"},
	"secret_scanning_alerts": {"read", "write"},
	"secrets":                {"read", "write"},
	"security_events":        {"read", "write"},
	"single_file":            {"read", "write"},
	"statuses":               {"read", "write"},
	"vulnerability_alerts":   {"read", "write"},
	"workflows":              {"write"},
}

// RegisterManifest does what GitHub's web flow does when a person posts a
// manifest to the "new app" page and confirms: it checks the manifest as
// GitHub does, reconfigures the fake's one app from it (name, homepage,
// permissions, events), adds a fresh RSA key that the app's JWTs may from
// now on be signed with, and returns the one-time code that GitHub would
// append to redirect_url with the credentials the code converts into. The
// code converts once, within an hour of the fake's clock. An error says
// what GitHub's page would refuse.
func (s *Server) RegisterManifest(manifestJSON []byte) (ManifestApp, error) {
	var m manifest
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return ManifestApp{}, fmt.Errorf("manifest is not a JSON object: %w", err)
	}
	if err := m.check(); err != nil {
		return ManifestApp{}, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return ManifestApp{}, fmt.Errorf("generate app key: %w", err)
	}
	app := ManifestApp{
		Code:          randomHex(20),
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		WebhookSecret: randomHex(20),
		ClientSecret:  randomHex(20),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appKeys = append(s.appKeys, &key.PublicKey)
	name := m.Name
	if name == "" {
		name = fakeAppSlug // the person types one on GitHub's page
	}
	perms := maps.Clone(m.DefaultPermissions)
	if perms == nil {
		perms = map[string]string{}
	}
	perms["metadata"] = "read" // every app has it
	events := slices.Clone(m.DefaultEvents)
	sort.Strings(events)
	s.app = appSettings{name: name, description: m.Description, externalURL: m.URL, permissions: perms, events: events}
	s.manifestCodes[app.Code] = &manifestCode{issuedAt: s.now(), keyPEM: app.PrivateKeyPEM, webhookSecret: app.WebhookSecret, clientSecret: app.ClientSecret}
	return app, nil
}

// check refuses what GitHub's "new app" page refuses.
func (m *manifest) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	absolute := func(field, v string) {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("%s %q is not an absolute http(s) URL", field, v)
		}
	}
	if m.URL == "" {
		bad("url is required")
	} else {
		absolute("url", m.URL)
	}
	if len(m.Name) > maxAppName {
		bad("name %q is longer than %d characters", m.Name, maxAppName)
	}
	if h := m.HookAttributes; h != nil {
		if h.URL == "" {
			bad("hook_attributes.url is required")
		} else {
			absolute("hook_attributes.url", h.URL)
		}
	}
	if m.RedirectURL != "" {
		absolute("redirect_url", m.RedirectURL)
	}
	if m.SetupURL != "" {
		absolute("setup_url", m.SetupURL)
	}
	if len(m.CallbackURLs) > 10 {
		bad("callback_urls: at most 10, got %d", len(m.CallbackURLs))
	}
	for _, u := range m.CallbackURLs {
		absolute("callback_urls", u)
	}
	for name, level := range m.DefaultPermissions {
		levels, ok := knownPermissions[name]
		switch {
		case !ok:
			bad("default_permissions: unknown permission %q", name)
		case !slices.Contains(levels, level):
			bad("default_permissions: %s may be %v, not %q", name, levels, level)
		}
	}
	hooked := m.HookAttributes != nil && (m.HookAttributes.Active == nil || *m.HookAttributes.Active)
	if len(m.DefaultEvents) > 0 && !hooked {
		bad("default_events need an active webhook (hook_attributes)")
	}
	for _, e := range m.DefaultEvents {
		perm, ok := eventPermission[e]
		switch {
		case e == "installation" || e == "installation_repositories":
			bad("default_events: %s is sent to every app and cannot be subscribed to", e)
		case !ok:
			bad("default_events: unknown event %q", e)
		case perm != "metadata" && m.DefaultPermissions[perm] == "":
			bad("default_events: %s needs the %s permission", e, perm)
		}
	}
	return errors.Join(errs...)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// convertManifest serves POST /app-manifests/{code}/conversions: the code
// is the credential; it converts once, within the hour.
func (c *call) convertManifest() *response {
	s := c.s
	code := c.params["code"]
	mc := s.manifestCodes[code]
	if mc == nil || !s.now().Before(mc.issuedAt.Add(manifestCodeLifetime)) {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	delete(s.manifestCodes, code)
	out := s.appJSON()
	delete(out, "installations_count")
	out["client_secret"] = mc.clientSecret
	out["webhook_secret"] = mc.webhookSecret
	out["pem"] = string(mc.keyPEM)
	return jsonResponse(http.StatusCreated, out)
}
