package github

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultWebURL is GitHub.com's web address, where the OAuth web flow runs.
const DefaultWebURL = "https://github.com/"

// OAuthConfig is the app's OAuth client: its client id and secret (App
// settings, General) and where GitHub's web and API live.
type OAuthConfig struct {
	ClientID     string
	ClientSecret string
	// WebURL is GitHub's web address (DefaultWebURL when empty); APIURL
	// its REST API (DefaultBaseURL when empty).
	WebURL string
	APIURL string
	// Transport carries every request; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// User is a GitHub user who signed in.
type User struct {
	Login string
	ID    int64
}

// OAuthApp is the app's side of GitHub's OAuth web flow: it sends a person
// to GitHub to sign in and learns who came back. The user access token is
// used once, to ask who the user is, and then dropped: the app acts with
// its installation token, never as the user.
type OAuthApp struct {
	clientID, secret string
	web              *url.URL
	api              string
	hc               *http.Client
	now              func() time.Time
}

// NewOAuthApp checks cfg and returns the OAuth client. It makes no request.
func NewOAuthApp(cfg OAuthConfig) (*OAuthApp, error) {
	if strings.TrimSpace(cfg.ClientID) == "" || strings.TrimSpace(cfg.ClientSecret) == "" {
		return nil, errors.New("github oauth: the app's client id and secret are required (TESTFIRST_GITHUB_CLIENT_ID, TESTFIRST_GITHUB_CLIENT_SECRET_FILE)")
	}
	webURL := cmp.Or(cfg.WebURL, DefaultWebURL)
	if !strings.HasSuffix(webURL, "/") {
		webURL += "/"
	}
	web, err := url.Parse(webURL)
	if err != nil || (web.Scheme != "http" && web.Scheme != "https") || web.Host == "" {
		return nil, fmt.Errorf("github oauth: web URL %q: want an absolute URL such as %s", webURL, DefaultWebURL)
	}
	api := cmp.Or(cfg.APIURL, DefaultBaseURL)
	if !strings.HasSuffix(api, "/") {
		api += "/"
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	return &OAuthApp{clientID: cfg.ClientID, secret: cfg.ClientSecret, web: web, api: api,
		hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}, now: time.Now}, nil
}

// AuthorizeURL is GitHub's sign-in page for the app: GitHub sends the user
// back to redirectURI with a code and state.
func (o *OAuthApp) AuthorizeURL(state, redirectURI string) string {
	u := o.web.JoinPath("login", "oauth", "authorize")
	u.RawQuery = url.Values{
		"client_id":    {o.clientID},
		"redirect_uri": {redirectURI},
		"state":        {state},
		"allow_signup": {"false"},
	}.Encode()
	return u.String()
}

// SignIn exchanges the code GitHub sent back for a user access token,
// asks GitHub who the token belongs to and drops the token. The error is
// an *APIError; GitHub's refusals (a used or expired code, wrong client
// credentials) are not retryable.
func (o *OAuthApp) SignIn(ctx context.Context, code, redirectURI string) (User, error) {
	tok, err := o.exchange(ctx, code, redirectURI)
	if err != nil {
		return User{}, err
	}
	client, err := newClient(o.hc, o.api)
	if err != nil {
		return User{}, err
	}
	u, resp, err := client.WithAuthToken(tok).Users.Get(ctx, "")
	if err := classify("get the signed-in user", resp, err, o.now()); err != nil {
		return User{}, err
	}
	if u.GetLogin() == "" {
		return User{}, &APIError{Op: "get the signed-in user", Err: errors.New("GitHub answered without a login")}
	}
	return User{Login: u.GetLogin(), ID: u.GetID()}, nil
}

// exchange posts the code to GitHub's access_token endpoint.
func (o *OAuthApp) exchange(ctx context.Context, code, redirectURI string) (string, error) {
	const op = "exchange the OAuth code"
	form := url.Values{"client_id": {o.clientID}, "client_secret": {o.secret}, "code": {code}, "redirect_uri": {redirectURI}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.web.JoinPath("login", "oauth", "access_token").String(), strings.NewReader(form.Encode()))
	if err != nil {
		return "", &APIError{Op: op, Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := o.hc.Do(req)
	if err != nil {
		return "", &APIError{Op: op, Retryable: true, Err: err}
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return "", &APIError{Op: op, Status: res.StatusCode, Retryable: true, Err: err}
	}
	if res.StatusCode != http.StatusOK {
		return "", &APIError{Op: op, Status: res.StatusCode, Retryable: res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests,
			Err: fmt.Errorf("GitHub answered %s", res.Status)}
	}
	var t struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(body, &t); err != nil {
		return "", &APIError{Op: op, Status: res.StatusCode, Err: fmt.Errorf("answer is not JSON: %w", err)}
	}
	if t.Error != "" {
		return "", &APIError{Op: op, Status: res.StatusCode, Err: fmt.Errorf("%s: %s", t.Error, t.Description)}
	}
	if t.AccessToken == "" {
		return "", &APIError{Op: op, Status: res.StatusCode, Err: errors.New("GitHub answered without a token")}
	}
	return t.AccessToken, nil
}
