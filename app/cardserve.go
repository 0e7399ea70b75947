package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/card"
	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/jobs"
)

// mountCardOrHome adds the approval card's pages to mux when the app has
// its OAuth client and the store's keys, and otherwise the installed
// app's home page saying so.
func mountCardOrHome(ctx context.Context, mux *http.ServeMux, cfg Config, d *db.DB, clients *github.Clients, st *serviceStore, storeErr error,
	reg prometheus.Registerer, log *slog.Logger, app github.AppInfo) error {
	// A reload of GitHub's redirect after the registration explains.
	mux.Handle("GET "+handlers.SetupCallbackPath, handlers.Registered(app))
	switch {
	case !cfg.HasLogin():
		mux.Handle("GET /{$}", handlers.Installed(app))
		log.WarnContext(ctx, "no OAuth client: the approval card is off; set TESTFIRST_GITHUB_CLIENT_ID and TESTFIRST_GITHUB_CLIENT_SECRET_FILE")
		return nil
	case storeErr != nil:
		// Like grading, the card needs the store's keys.
		mux.Handle("GET /{$}", handlers.Installed(app))
		log.WarnContext(ctx, "the approval card is off", "err", "approval card: "+storeErr.Error())
		return nil
	}
	// A decision on the card is announced, labelled and acted on by the
	// ticket's sync, at once rather than at the next tick.
	sync := func(ctx context.Context, ticket int64) error { return jobs.EnqueueSync(ctx, d, ticket) }
	return mountCard(ctx, mux, cfg, d, clients, st, reg, log, sync, app)
}

// mountCard adds the approval card's pages to mux: sign-in with the app's
// OAuth client, the card service on the database, the store (masked
// copies and decisions only) and the installations' clients. hook is
// called after every decision.
func mountCard(ctx context.Context, mux *http.ServeMux, cfg Config, d *db.DB, clients *github.Clients, st *serviceStore, reg prometheus.Registerer, log *slog.Logger, hook card.Hook, app github.AppInfo) error {
	key, err := cardSessionKey(cfg.SessionKey, DefaultSessionKeyFile)
	if err != nil {
		return err
	}
	oauth, err := github.NewOAuthApp(github.OAuthConfig{ClientID: cfg.GitHubClientID, ClientSecret: cfg.ClientSecret, WebURL: cfg.WebURL(), APIURL: cfg.GitHubAPIURL})
	if err != nil {
		return err
	}
	svc := card.NewService(d, st.writer, clients, hook, card.WithMetrics(reg), card.WithLogger(log), card.WithGitHubURL(cfg.WebURL()))
	h, err := handlers.NewCard(svc, oauth, handlers.CardConfig{PublicURL: cfg.PublicURL, SessionKey: key, Log: log,
		AppName: app.Name, InstallURL: github.InstallURL(app.HTMLURL), Sessions: endedSessions{d}})
	if err != nil {
		return err
	}
	h.Register(mux)
	log.InfoContext(ctx, "approval card on", "sign_in_callback", cfg.PublicURL+handlers.OAuthCallbackPath)
	return nil
}

// endedSessions keeps the card's signed-out sessions in the database,
// which every replica reads (handlers.Sessions).
type endedSessions struct{ d *db.DB }

func (e endedSessions) End(ctx context.Context, id string, until time.Time) error {
	return e.d.Tx(ctx, func(tx *db.Tx) error { return tx.EndSession(ctx, id, until) })
}

func (e endedSessions) Ended(ctx context.Context, id string) (bool, error) {
	var ended bool
	err := e.d.Tx(ctx, func(tx *db.Tx) error {
		var err error
		ended, err = tx.SessionEnded(ctx, id)
		return err
	})
	return ended, err
}
