package github_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// followToApp opens the authorize URL as a browser signed in to GitHub
// would, and returns where GitHub sends it back.
func followToApp(t *testing.T, authorize string) *url.URL {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authorize)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d, want a redirect back", resp.StatusCode)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestOAuthSignIn(t *testing.T) {
	s := fakegithub.New(t)
	s.SignInWeb("octocat")
	const callback = "https://testfirst.example/login/callback"
	o, err := github.NewOAuthApp(github.OAuthConfig{ClientID: s.ClientID(), ClientSecret: s.ClientSecret(), WebURL: s.WebURL(), APIURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(o.AuthorizeURL("state-1", callback))
	if au.Path != "/login/oauth/authorize" || au.Query().Get("client_id") != s.ClientID() || au.Query().Get("state") != "state-1" || au.Query().Get("redirect_uri") != callback {
		t.Errorf("authorize URL %s", au)
	}
	back := followToApp(t, au.String())
	if back.Query().Get("state") != "state-1" {
		t.Errorf("state %q came back", back.Query().Get("state"))
	}
	u, err := o.SignIn(t.Context(), back.Query().Get("code"), callback)
	if err != nil || u.Login != "octocat" || u.ID == 0 {
		t.Fatalf("SignIn = %+v, %v", u, err)
	}
	// The code is spent: GitHub's refusal is permanent and says why.
	_, err = o.SignIn(t.Context(), back.Query().Get("code"), callback)
	var apiErr *github.APIError
	if !errors.As(err, &apiErr) || apiErr.Retryable || !strings.Contains(err.Error(), "bad_verification_code") {
		t.Errorf("second SignIn = %v, want a permanent bad_verification_code", err)
	}

	wrong, _ := github.NewOAuthApp(github.OAuthConfig{ClientID: s.ClientID(), ClientSecret: "nope", WebURL: s.WebURL(), APIURL: s.URL()})
	back = followToApp(t, wrong.AuthorizeURL("s", callback))
	if _, err := wrong.SignIn(t.Context(), back.Query().Get("code"), callback); err == nil || !strings.Contains(err.Error(), "incorrect_client_credentials") {
		t.Errorf("wrong secret: %v", err)
	}

	// GitHub down: retryable.
	s.FailNext("POST", "/login/oauth/access_token", http.StatusServiceUnavailable, nil)
	back = followToApp(t, o.AuthorizeURL("s", callback))
	_, err = o.SignIn(t.Context(), back.Query().Get("code"), callback)
	if ok, _ := github.IsRetryable(err); !ok {
		t.Errorf("503: %v, want retryable", err)
	}

	for _, cfg := range []github.OAuthConfig{{ClientID: "x"}, {ClientSecret: "y"}, {ClientID: "x", ClientSecret: "y", WebURL: "github.com"}} {
		if _, err := github.NewOAuthApp(cfg); err == nil {
			t.Errorf("NewOAuthApp(%+v) accepted", cfg)
		}
	}
}
