package main

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/app"
)

// TestAnnounceSaysWhatIsOn: what serve prints at start agrees with what
// it logs: without the app's OAuth client the approval card is off, and
// the line says so and what to set, rather than sending the admin to it.
func TestAnnounceSaysWhatIsOn(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.GitHubAppID = 7
	var b strings.Builder
	announce(&b, cfg, "127.0.0.1:8080")
	if got := b.String(); !strings.Contains(got, "the approval card is off until the app's OAuth client is set (TESTFIRST_GITHUB_CLIENT_ID") || strings.Contains(got, "for the approval card") {
		t.Errorf("without an OAuth client: %q", got)
	}
	cfg.GitHubClientID, cfg.ClientSecret = "Iv1.x", "secret"
	b.Reset()
	announce(&b, cfg, "127.0.0.1:8080")
	if got := b.String(); !strings.Contains(got, "Open http://localhost:8080/ for the approval card") {
		t.Errorf("with an OAuth client: %q", got)
	}
}
