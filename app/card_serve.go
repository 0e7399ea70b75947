package app

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
)

// mountCard adds the approval card's pages to mux: sign-in with the app's
// OAuth client, the card service on the database, the store (masked
// copies and decisions only) and the installations' clients. hook is
// called after every decision; nil calls nothing. The returned function
// closes the store.
func mountCard(ctx context.Context, mux *http.ServeMux, cfg Config, d *db.DB, clients *github.Clients, reg prometheus.Registerer, log *slog.Logger, hook CardHook) (func(), error) {
	key, err := cardSessionKey(cfg, DefaultSessionKeyFile)
	if err != nil {
		return nil, err
	}
	oauth, err := github.NewOAuthApp(github.OAuthConfig{ClientID: cfg.GitHubClientID, ClientSecret: cfg.ClientSecret, WebURL: cfg.WebURL(), APIURL: cfg.GitHubAPIURL})
	if err != nil {
		return nil, err
	}
	w, closeStore, err := OpenStoreWriter(ctx, cfg.StoreURL)
	if err != nil {
		return nil, &cardStoreError{err}
	}
	svc := NewCardService(d, w, clients, hook, WithCardMetrics(reg), WithCardLogger(log), WithCardGitHubURL(cfg.WebURL()))
	card, err := handlers.NewCard(svc, oauth, handlers.CardConfig{PublicURL: cfg.PublicURL, SessionKey: key, Log: log})
	if err != nil {
		closeStore()
		return nil, err
	}
	card.Register(mux)
	log.InfoContext(ctx, "approval card on", "sign_in_callback", cfg.PublicURL+"/login/callback")
	return func() { closeStore() }, nil
}

// cardStoreError says the card cannot open the hidden test store.
type cardStoreError struct{ err error }

func (e *cardStoreError) Error() string { return "approval card: hidden test store: " + e.err.Error() }
func (e *cardStoreError) Unwrap() error { return e.err }
