package handlers

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/testfirst-app/testfirst/github"
)

// Routes the registration involves.
const (
	// SetupCallbackPath is where GitHub sends the browser back with the
	// manifest code.
	SetupCallbackPath = "/setup/callback"
	// OAuthCallbackPath is registered as the app's OAuth callback, for the
	// approval card's GitHub login.
	OAuthCallbackPath = "/login/callback"
)

// convertTimeout bounds the conversion of a manifest code.
const convertTimeout = 30 * time.Second

//go:embed setup/*.html
var setupFS embed.FS

var setupTemplates = template.Must(template.ParseFS(setupFS, "setup/*.html"))

// ManifestConverter turns the code GitHub's redirect carries into the
// registered app's credentials.
type ManifestConverter interface {
	// ConvertManifest exchanges a manifest code for the app's credentials.
	// An error for which github.IsUnknownCode holds means GitHub does not
	// know the code (never issued, already used, or over an hour old).
	ConvertManifest(ctx context.Context, code string) (github.AppRegistration, error)
}

// CredentialStore keeps a registered app's credentials where the service
// reads them at start-up.
type CredentialStore interface {
	// Check returns an error, saying what to move away, when credentials
	// are already stored: storing new ones would overwrite them.
	Check() error
	// Save stores reg's credentials without overwriting anything. On error
	// nothing is stored.
	Save(reg github.AppRegistration) error
	// Where names the stored credentials for the admin, e.g. a path.
	Where() string
}

// SetupConfig says where the service and GitHub are.
type SetupConfig struct {
	// PublicURL is where GitHub and users reach the service.
	PublicURL string
	// GitHubURL is GitHub's web address, e.g. https://github.com/.
	GitHubURL string
	// Events are the webhook events the app subscribes to (the pipeline's
	// event table says which).
	Events []string
	// Permissions are the repository permissions the app asks for;
	// github.AppPermissions when nil (github.AgentPermissions for a
	// service that runs agents).
	Permissions map[string]string
}

// Setup serves the registration of the GitHub App from a manifest, for a
// service that has no app yet: GET / explains and posts the manifest to
// GitHub, GET /setup/callback converts the code GitHub sends back and
// stores the credentials.
type Setup struct {
	cfg        SetupConfig
	manifest   github.Manifest
	conv       ManifestConverter
	store      CredentialStore
	log        *slog.Logger
	registered func(github.AppRegistration)
	states     *setupStates
	csp        string
	mux        *http.ServeMux

	mu       sync.Mutex // one conversion at a time
	done     *github.AppRegistration
	doneCode string
}

// NewSetup returns the registration handler. registered is called once,
// with the app's public details (no secrets), after its credentials are
// stored and the admin's page is written.
func NewSetup(cfg SetupConfig, conv ManifestConverter, store CredentialStore, log *slog.Logger, registered func(github.AppRegistration)) (*Setup, error) {
	base, err := url.Parse(strings.TrimSuffix(cfg.PublicURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("setup: public URL %q: want an absolute http(s) URL (TESTFIRST_PUBLIC_URL)", cfg.PublicURL)
	}
	web, err := url.Parse(cfg.GitHubURL)
	if err != nil || (web.Scheme != "http" && web.Scheme != "https") || web.Host == "" {
		return nil, fmt.Errorf("setup: GitHub web URL %q: want an absolute http(s) URL (TESTFIRST_GITHUB_URL)", cfg.GitHubURL)
	}
	home := base.String()
	perms := cfg.Permissions
	if perms == nil {
		perms = github.AppPermissions()
	}
	s := &Setup{
		cfg: cfg,
		manifest: github.Manifest{
			Name:               "testfirst",
			URL:                home,
			Description:        "Test-first pipeline: hidden acceptance tests, pull requests graded in a sealed sandbox.",
			HookAttributes:     github.HookAttributes{URL: home + WebhookPath, Active: true},
			RedirectURL:        home + SetupCallbackPath,
			CallbackURLs:       []string{home + OAuthCallbackPath},
			SetupURL:           home + "/",
			Public:             false,
			DefaultPermissions: perms,
			DefaultEvents:      cfg.Events,
		},
		conv:       conv,
		store:      store,
		log:        log,
		registered: registered,
		states:     newSetupStates(time.Now),
		csp: "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'; " +
			"form-action 'self' " + web.Scheme + "://" + web.Host,
		mux: http.NewServeMux(),
	}
	s.mux.HandleFunc("GET /{$}", s.page)
	s.mux.HandleFunc("GET "+SetupCallbackPath, s.callback)
	return s, nil
}

// Manifest is the manifest the page posts to GitHub.
func (s *Setup) Manifest() github.Manifest { return s.manifest }

// ServeHTTP answers GET / and GET /setup/callback.
func (s *Setup) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// registerPage is what register.html shows.
type registerPage struct {
	Manifest     github.Manifest
	ManifestJSON string
	Permissions  []string
	Action       string
	Org          string
	Problem      string
	Where        string
	PublicURL    string
	Unreachable  bool
}

// installedPage is what installed.html shows. Where is set right after
// registering.
type installedPage struct {
	Name       string
	InstallURL string
	Where      string
	// Reloaded is set when GitHub's one-time redirect is opened again.
	Reloaded bool
}

// problemPage is what problem.html shows.
type problemPage struct {
	Title   string
	Message string
	Restart bool
}

// page serves GET /: the manifest form, for a personal account or, with
// ?org=LOGIN, an organization.
func (s *Setup) page(w http.ResponseWriter, r *http.Request) {
	if reg, _ := s.registration(); reg != nil {
		s.render(w, http.StatusOK, "installed", installedPage{Name: reg.Name, InstallURL: reg.InstallURL(), Where: s.store.Where()})
		return
	}
	if err := s.store.Check(); err != nil {
		s.problem(w, http.StatusConflict, "Credentials are already stored", err.Error()+".", false)
		return
	}
	status := http.StatusOK
	p := registerPage{Manifest: s.manifest, Where: s.store.Where(), PublicURL: s.manifest.URL, Unreachable: isLoopback(s.manifest.URL)}
	p.Org = strings.TrimSpace(r.URL.Query().Get("org"))
	if p.Org != "" {
		if err := github.CheckOrg(p.Org); err != nil {
			status = http.StatusBadRequest
			p.Problem = err.Error() + ": correct it below, or register for your personal account."
			p.Org = ""
		}
	}
	action, err := github.ManifestFormURL(s.cfg.GitHubURL, p.Org, s.states.issue())
	if err != nil {
		s.problem(w, http.StatusInternalServerError, "Cannot build GitHub's address", err.Error(), false)
		return
	}
	p.Action = action
	body, err := json.Marshal(s.manifest)
	if err != nil {
		s.problem(w, http.StatusInternalServerError, "Cannot encode the manifest", err.Error(), false)
		return
	}
	p.ManifestJSON = string(body)
	for name, level := range s.manifest.DefaultPermissions {
		p.Permissions = append(p.Permissions, name+": "+level)
	}
	slices.Sort(p.Permissions)
	s.render(w, status, "register", p)
}

// callback serves GET /setup/callback?code=…&state=…: GitHub's redirect
// after the app was created.
func (s *Setup) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	code, state := q.Get("code"), q.Get("state")
	if reg, doneCode := s.registration(); reg != nil {
		if code == doneCode {
			s.render(w, http.StatusOK, "installed", installedPage{Name: reg.Name, InstallURL: reg.InstallURL(), Where: s.store.Where()})
			return
		}
		s.problem(w, http.StatusConflict, "Already registered",
			fmt.Sprintf("testfirst is already registered as %s; this second registration's credentials were not fetched. Delete the extra app in your GitHub settings.", reg.Name), false)
		return
	}
	if code == "" {
		s.problem(w, http.StatusBadRequest, "No code from GitHub",
			"This address is where GitHub sends you back after registering the app, with ?code=…&state=…; this request carries no code.", true)
		return
	}
	if state == "" {
		s.problem(w, http.StatusBadRequest, "No state",
			"GitHub's redirect carries back the state this service gave the registration form; this request carries none, so it did not start here.", true)
		return
	}
	release, ok := s.states.take(state)
	if !ok {
		s.problem(w, http.StatusBadRequest, "Unknown or expired state",
			"The state in this link was not issued by this service, was used already, is over an hour old, or the service restarted since. Start again; if GitHub created an app meanwhile, delete it in your GitHub settings.", true)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.store.Check(); err != nil {
		release() // the same link works once the files are moved away
		s.problem(w, http.StatusConflict, "Credentials are already stored", err.Error()+"; then reload this page (the code is good for an hour).", false)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), convertTimeout)
	defer cancel()
	reg, err := s.conv.ConvertManifest(ctx, code)
	switch {
	case github.IsUnknownCode(err):
		s.log.WarnContext(r.Context(), "app manifest code unknown to GitHub", "err", err)
		s.problem(w, http.StatusBadRequest, "GitHub does not know this code",
			"GitHub answered that this code does not exist: a code converts once, within an hour of the registration. If GitHub created the app, delete it in your GitHub settings, then start again.", true)
		return
	case err != nil:
		release() // the code was not spent: the same link may be tried again
		s.log.ErrorContext(r.Context(), "convert app manifest", "err", err)
		s.problem(w, http.StatusBadGateway, "GitHub did not hand over the app's credentials",
			fmt.Sprintf("Converting the code failed: %v. Reload this page to try the same code again (it is good for an hour), or start again.", err), true)
		return
	}
	if err := s.store.Save(reg); err != nil {
		s.log.ErrorContext(r.Context(), "store app credentials", "app", reg.Slug, "id", reg.ID, "err", err)
		s.problem(w, http.StatusInternalServerError, "The app's credentials could not be stored",
			fmt.Sprintf("GitHub registered the app %s (id %d) but storing its credentials failed: %v. GitHub hands them over only once: in the app's settings on GitHub, generate a new private key and set a new webhook secret, then configure them by hand (TESTFIRST_GITHUB_APP_ID, TESTFIRST_GITHUB_PRIVATE_KEY_FILE, TESTFIRST_WEBHOOK_SECRET_FILE), or delete the app and start again.", reg.Name, reg.ID, err), false)
		return
	}
	public := github.AppRegistration{ID: reg.ID, Slug: reg.Slug, Name: reg.Name, HTMLURL: reg.HTMLURL, ClientID: reg.ClientID}
	s.done, s.doneCode = &public, code
	s.log.InfoContext(r.Context(), "github app registered", "app", reg.Slug, "id", reg.ID, "stored", s.store.Where())
	s.render(w, http.StatusOK, "installed", installedPage{Name: public.Name, InstallURL: public.InstallURL(), Where: s.store.Where()})
	if s.registered != nil {
		s.registered(public)
	}
}

// registration is the app registered here, if any, and its code.
func (s *Setup) registration() (*github.AppRegistration, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done, s.doneCode
}

// Registered serves GET /setup/callback once the service runs as the app
// registered there: a reload of GitHub's one-time redirect, answered with
// what happened and where to install the app rather than a 404.
func Registered(app github.AppInfo) http.Handler {
	p := installedPage{Name: app.Name, InstallURL: github.InstallURL(app.HTMLURL), Reloaded: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writePage(w, http.StatusOK, "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", "installed", p)
	})
}

// Installed serves GET / once the service runs as an app: where to install
// it.
func Installed(app github.AppInfo) http.Handler {
	p := installedPage{Name: app.Name, InstallURL: github.InstallURL(app.HTMLURL)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writePage(w, http.StatusOK, "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", "installed", p)
	})
}

func (s *Setup) problem(w http.ResponseWriter, status int, title, msg string, restart bool) {
	s.render(w, status, "problem", problemPage{Title: title, Message: msg, Restart: restart})
}

func (s *Setup) render(w http.ResponseWriter, status int, name string, data any) {
	writePage(w, status, s.csp, name, data)
}

// writePage renders a page with headers that keep it out of caches, frames
// and other sites' Referer (the callback's URL carries the code).
func writePage(w http.ResponseWriter, status int, csp, name string, data any) {
	var buf bytes.Buffer
	if err := setupTemplates.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "render page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", csp)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// isLoopback reports whether u names this machine, which GitHub cannot
// reach.
func isLoopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := p.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
