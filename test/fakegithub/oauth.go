package fakegithub

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The OAuth web flow lives on github.com, not on the API host; the fake
// serves both from one server. authorize is a browser page, access_token a
// form post from the app's server.
const (
	oauthPrefix = "login"
	// oauthCodeLifetime is how long GitHub keeps an authorization code.
	oauthCodeLifetime = 10 * time.Minute
	// userTokenLifetime and refreshTokenLifetime are those of a GitHub
	// App's expiring user access tokens.
	userTokenLifetime    = 8 * time.Hour
	refreshTokenLifetime = 184 * 24 * time.Hour
	// fakeClientSecret is the app's client secret.
	fakeClientSecret = "fake-client-secret-0123456789abcdef01234567"
	oauthDocs        = "https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app"
)

// authUser routes take a user access token from the OAuth web flow. It is
// declared here, with the flow, rather than in routes.go's list.
const authUser authKind = -1

// oauthState is the fake's github.com side: who is signed in to the web
// UI, the app's registered callback URL, and the codes and user tokens
// handed out.
type oauthState struct {
	webUser  string // login signed in to the fake's web UI; "" for nobody
	callback string // the app's callback URL; "" accepts any redirect_uri
	codes    map[string]*oauthCode
	tokens   map[string]*userToken
}

// oauthCode is one authorization code, usable once.
type oauthCode struct {
	login       string
	redirectURI string
	issuedAt    time.Time
	used        bool
}

// userToken is a user access token ("ghu_…") of the app.
type userToken struct {
	login     string
	expiresAt time.Time
}

// oauth returns the flow's state, made on first use. Callers hold s.mu.
func (s *Server) oauth() *oauthState {
	if s.oauthFlow == nil {
		s.oauthFlow = &oauthState{codes: map[string]*oauthCode{}, tokens: map[string]*userToken{}}
	}
	return s.oauthFlow
}

// WebURL is the base URL of the fake's github.com, ending in "/": the OAuth
// web flow is under login/oauth/.
func (s *Server) WebURL() string { return s.ts.URL + "/" }

// ClientSecret is the app's client secret for the OAuth web flow.
func (s *Server) ClientSecret() string { return fakeClientSecret }

// SignInWeb signs login in to the fake's web UI, as a browser session on
// github.com: the authorize page then sends that user straight back to the
// app (as GitHub does once the user has authorized the app). "" signs out,
// and the authorize page then shows a sign-in form that goes nowhere.
func (s *Server) SignInWeb(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if login != "" {
		s.userID(login)
	}
	s.oauth().webUser = login
}

// SetOAuthCallback registers the app's callback URL. GitHub then refuses a
// redirect_uri whose scheme, host or port differ from it, or whose path is
// not below its path. Without one any absolute http(s) redirect_uri is
// accepted.
func (s *Server) SetOAuthCallback(callback string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth().callback = callback
}

// serveOAuth answers the web flow's pages. Callers hold s.mu.
func (s *Server) serveOAuth(r *http.Request, body []byte, segs []string) *response {
	switch {
	case len(segs) == 3 && segs[1] == "oauth" && segs[2] == "authorize" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		return s.authorize(r)
	case len(segs) == 3 && segs[1] == "oauth" && segs[2] == "access_token" && r.Method == http.MethodPost:
		return s.accessToken(r, body)
	}
	return htmlPage(http.StatusNotFound, "Page not found")
}

// authorize serves GET /login/oauth/authorize: it checks the client id and
// redirect_uri and, for a signed-in user, redirects back to the app with a
// fresh code and the state it was given.
func (s *Server) authorize(r *http.Request) *response {
	o := s.oauth()
	q := r.URL.Query()
	if q.Get("client_id") != fakeClientID {
		return htmlPage(http.StatusNotFound, "Page not found")
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		redirect = o.callback
	}
	if redirect == "" {
		return htmlPage(http.StatusUnprocessableEntity, "The redirect_uri is missing and the application has no callback URL.")
	}
	if !redirectAllowed(o.callback, redirect) {
		if o.callback == "" {
			return htmlPage(http.StatusUnprocessableEntity, "The redirect_uri is not a valid URL.")
		}
		// GitHub sends the user to the registered callback with the error.
		return redirectTo(o.callback, url.Values{
			"error":             {"redirect_uri_mismatch"},
			"error_description": {"The redirect_uri MUST match the registered callback URL for this application."},
			"error_uri":         {oauthDocs + "#troubleshooting"},
			"state":             {q.Get("state")},
		})
	}
	if o.webUser == "" {
		return htmlPage(http.StatusOK, "Sign in to GitHub to continue to "+fakeAppSlug)
	}
	code := randomHex(10)
	o.codes[code] = &oauthCode{login: o.webUser, redirectURI: q.Get("redirect_uri"), issuedAt: s.now()}
	back := url.Values{"code": {code}}
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	return redirectTo(redirect, back)
}

// accessToken serves POST /login/oauth/access_token. Like GitHub it
// answers 200 even for errors, with an "error" field, as JSON when the
// client accepts it and as a form otherwise.
func (s *Server) accessToken(r *http.Request, body []byte) *response {
	o := s.oauth()
	params := r.URL.Query()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]string
		if json.Unmarshal(body, &m) != nil {
			return oauthReply(r, obj{"error": "bad_request", "error_description": "Problems parsing JSON"})
		}
		for k, v := range m {
			params.Set(k, v)
		}
	} else if form, err := url.ParseQuery(string(body)); err == nil {
		for k, v := range form {
			params[k] = v
		}
	}
	if params.Get("client_id") != fakeClientID || params.Get("client_secret") != fakeClientSecret {
		return oauthReply(r, obj{"error": "incorrect_client_credentials",
			"error_description": "The client_id and/or client_secret passed are incorrect.", "error_uri": oauthDocs + "#incorrect-client-credentials"})
	}
	c := o.codes[params.Get("code")]
	if c == nil || c.used || !s.now().Before(c.issuedAt.Add(oauthCodeLifetime)) {
		return oauthReply(r, obj{"error": "bad_verification_code",
			"error_description": "The code passed is incorrect or expired.", "error_uri": oauthDocs + "#bad-verification-code"})
	}
	if ru := params.Get("redirect_uri"); ru != "" && c.redirectURI != "" && ru != c.redirectURI {
		return oauthReply(r, obj{"error": "redirect_uri_mismatch",
			"error_description": "The redirect_uri MUST match the registered callback URL for this application.", "error_uri": oauthDocs + "#redirect-uri-mismatch"})
	}
	c.used = true
	tok := "ghu_" + strings.TrimPrefix(newTokenValue(), "ghs_")
	o.tokens[tok] = &userToken{login: c.login, expiresAt: s.now().Add(userTokenLifetime)}
	return oauthReply(r, obj{
		"access_token":             tok,
		"expires_in":               int(userTokenLifetime.Seconds()),
		"refresh_token":            "ghr_" + strings.TrimPrefix(newTokenValue(), "ghs_"),
		"refresh_token_expires_in": int(refreshTokenLifetime.Seconds()),
		"token_type":               "bearer",
		"scope":                    "",
	})
}

// getUser serves GET /user for a user access token.
func (c *call) getUser() *response {
	u := c.s.userJSON(c.who.user, "User")
	u["name"] = nil
	u["email"] = nil
	u["created_at"] = ts(appCreatedAt)
	u["updated_at"] = ts(appCreatedAt)
	return jsonResponse(http.StatusOK, u)
}

// userCaller returns the caller of a live user access token. Callers hold
// s.mu.
func (s *Server) userCaller(cred, remote string) (caller, bool) {
	if s.oauthFlow == nil {
		return caller{}, false
	}
	t := s.oauthFlow.tokens[cred]
	if t == nil || !s.now().Before(t.expiresAt) {
		return caller{}, false
	}
	return caller{kind: callerUser, user: t.login, remote: remote}, true
}

// redirectAllowed applies GitHub's rule: the redirect_uri's scheme, host
// and port equal the callback's, and its path is the callback's path or
// below it. With no callback registered, any absolute http(s) URL passes.
func redirectAllowed(callback, redirect string) bool {
	ru, err := url.Parse(redirect)
	if err != nil || (ru.Scheme != "http" && ru.Scheme != "https") || ru.Host == "" {
		return false
	}
	if callback == "" {
		return true
	}
	cu, err := url.Parse(callback)
	if err != nil {
		return false
	}
	base := strings.TrimSuffix(cu.Path, "/")
	return ru.Scheme == cu.Scheme && ru.Host == cu.Host &&
		(ru.Path == cu.Path || ru.Path == base || strings.HasPrefix(ru.Path, base+"/"))
}

// redirectTo is a 302 to target with q added to its query.
func redirectTo(target string, q url.Values) *response {
	u, err := url.Parse(target)
	if err != nil {
		return htmlPage(http.StatusUnprocessableEntity, "The redirect_uri is not a valid URL.")
	}
	all := u.Query()
	for k, v := range q {
		if len(v) > 0 && v[0] != "" {
			all[k] = v
		}
	}
	u.RawQuery = all.Encode()
	h := http.Header{}
	h.Set("Location", u.String())
	h.Set("Content-Type", "text/html; charset=utf-8")
	return &response{status: http.StatusFound, header: h}
}

// oauthReply encodes an access_token answer as JSON when the client asked
// for it, else as a form like GitHub's default.
func oauthReply(r *http.Request, v obj) *response {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		return jsonResponse(http.StatusOK, v)
	}
	form := url.Values{}
	for k, x := range v {
		switch x := x.(type) {
		case string:
			form.Set(k, x)
		case int:
			form.Set(k, strconv.Itoa(x))
		}
	}
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return &response{status: http.StatusOK, header: h, body: []byte(form.Encode())}
}

// htmlPage is a minimal github.com page.
func htmlPage(status int, message string) *response {
	h := http.Header{}
	h.Set("Content-Type", "text/html; charset=utf-8")
	body := "<!DOCTYPE html><html><head><title>GitHub</title></head><body><p>" + html.EscapeString(message) + "</p></body></html>"
	return &response{status: status, header: h, body: []byte(body)}
}
