package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v66/github"
)

// DefaultBaseURL is GitHub.com's REST API.
const DefaultBaseURL = "https://api.github.com/"

// AppConfig identifies the GitHub App.
type AppConfig struct {
	AppID int64
	// PrivateKey is the app's PEM-encoded RSA key.
	PrivateKey []byte
	// BaseURL is the REST API's base URL (GitHub Enterprise, tests);
	// DefaultBaseURL when empty.
	BaseURL string
	// Transport carries every request; http.DefaultTransport when nil.
	Transport http.RoundTripper
	// Retry says how calls GitHub refused for a passing reason are tried
	// again; the zero value takes the defaults.
	Retry RetryPolicy
	// Metrics counts those retries; nil counts nothing.
	Metrics *Metrics
}

// Clients makes GitHub clients for the app and its installations. One
// client per installation is kept, so installation tokens are reused until
// they near expiry.
type Clients struct {
	base   string
	plain  *http.Client
	appTr  *ghinstallation.AppsTransport
	app    *gh.Client
	mu     sync.Mutex
	byInst map[int64]*Installation
	now    func() time.Time
	retry  RetryPolicy
	m      *Metrics
}

// NewClients checks cfg and returns the app's clients. It makes no
// request; App proves the credentials.
func NewClients(cfg AppConfig) (*Clients, error) {
	if cfg.AppID <= 0 {
		return nil, errors.New("github app: an app id is required (TESTFIRST_GITHUB_APP_ID)")
	}
	if len(cfg.PrivateKey) == 0 {
		return nil, errors.New("github app: a private key is required (TESTFIRST_GITHUB_PRIVATE_KEY_FILE)")
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	appTr, err := ghinstallation.NewAppsTransport(tr, cfg.AppID, cfg.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("github app: private key: %w (want the PEM file GitHub gave for the app)", err)
	}
	appTr.BaseURL = strings.TrimSuffix(base, "/")
	app, err := newClient(&http.Client{Transport: newRetryTransport(appTr, nil, cfg.Retry, cfg.Metrics)}, base)
	if err != nil {
		return nil, err
	}
	plain := &http.Client{Transport: newRetryTransport(tr, nil, cfg.Retry, cfg.Metrics)}
	return &Clients{base: base, plain: plain, appTr: appTr, app: app, byInst: map[int64]*Installation{}, now: time.Now,
		retry: cfg.Retry, m: cfg.Metrics}, nil
}

func newClient(hc *http.Client, base string) (*gh.Client, error) {
	c := gh.NewClient(hc)
	u, err := c.BaseURL.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("github base URL %q: %w", base, err)
	}
	c.BaseURL = u
	c.UploadURL = u
	return c, nil
}

// AppInfo is what GitHub says about the app.
type AppInfo struct {
	ID   int64
	Slug string
	Name string
	// HTMLURL is the app's public page, https://github.com/apps/SLUG.
	HTMLURL string
}

// App fetches the app (GET /app), which proves the app id and key.
func (c *Clients) App(ctx context.Context) (AppInfo, error) {
	a, resp, err := c.app.Apps.Get(ctx, "")
	if err := classify("get app", resp, err, c.now()); err != nil {
		return AppInfo{}, err
	}
	return AppInfo{ID: a.GetID(), Slug: a.GetSlug(), Name: a.GetName(), HTMLURL: a.GetHTMLURL()}, nil
}

// Installation returns the client of installation id, made once.
func (c *Clients) Installation(id int64) (*Installation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in, ok := c.byInst[id]; ok {
		return in, nil
	}
	// A token GitHub stops taking before its time is dropped and a new
	// one minted: the auth makes a fresh transport, with no token yet.
	auth := &installationAuth{make: func() *ghinstallation.Transport {
		tr := ghinstallation.NewFromAppsTransport(c.appTr, id)
		tr.BaseURL = strings.TrimSuffix(c.base, "/")
		return tr
	}}
	auth.cur = auth.make()
	client, err := newClient(&http.Client{Transport: newRetryTransport(nil, auth, c.retry, c.m)}, c.base)
	if err != nil {
		return nil, err
	}
	in := &Installation{id: id, gh: client, plain: c.plain, now: c.now}
	c.byInst[id] = in
	return in, nil
}

// Installation speaks to GitHub as one installation of the app.
type Installation struct {
	id int64
	gh *gh.Client
	// plain carries requests that must not bear the installation token.
	plain *http.Client
	now   func() time.Time
}

// ID is the installation's id.
func (in *Installation) ID() int64 { return in.id }
