package handlers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// Cookie names. The session names who is signed in; the sign-in cookie
// carries the OAuth state between /login and GitHub's redirect back.
const (
	sessionCookie = "tf_session"
	signInCookie  = "tf_signin"
)

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 12 * time.Hour

// signInTTL bounds the trip to GitHub and back.
const signInTTL = 10 * time.Minute

// cookies signs and reads the card's cookies: HttpOnly, SameSite=Lax,
// Secure when the service is reached over https, each value bound to its
// cookie's name and expiry by an HMAC-SHA256 under the session key.
type cookies struct {
	key    []byte
	secure bool
	now    func() time.Time
}

// viewerIDKey keys the signed-in viewer's numeric user id in a request's
// context.
type viewerIDKey struct{}

// WithViewerID returns ctx carrying the signed-in viewer's numeric GitHub
// user id.
func WithViewerID(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, viewerIDKey{}, id)
}

// ViewerID is the numeric GitHub user id of the signed-in viewer the card
// serves (the account, where the login passed to Cards' methods is
// whatever name it has); 0 when ctx carries none.
func ViewerID(ctx context.Context) int64 {
	id, _ := ctx.Value(viewerIDKey{}).(int64)
	return id
}

// session is who is signed in, until when; ID names the sign-in, so that
// signing out ends it on the server (Sessions) and not only in the browser.
type session struct {
	ID      string `json:"d"`
	Login   string `json:"l"`
	UserID  int64  `json:"i"`
	Expires int64  `json:"e"`
}

// Sessions remembers the sign-ins that ended before their cookie expired
// (signed out), for as long as the cookie would be valid: every replica of
// the service must refuse a copy of a signed-out session's cookie.
type Sessions interface {
	// End records that sign-in id ended; it need not be kept past until.
	End(ctx context.Context, id string, until time.Time) error
	// Ended reports whether sign-in id ended.
	Ended(ctx context.Context, id string) (bool, error)
}

// processSessions is Sessions in this process's memory: enough for one
// replica (and the tests of this package); the service uses its
// database.
type processSessions struct {
	mu    sync.Mutex
	ended map[string]time.Time
}

func (p *processSessions) End(_ context.Context, id string, until time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended == nil {
		p.ended = map[string]time.Time{}
	}
	now := time.Now()
	for k, u := range p.ended {
		if now.After(u) {
			delete(p.ended, k)
		}
	}
	p.ended[id] = until
	return nil
}

func (p *processSessions) Ended(_ context.Context, id string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.ended[id]
	return ok, nil
}

// newSessionID is a random name for a sign-in.
func newSessionID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// signIn is a sign-in under way: the state GitHub must send back and the
// page to return to.
type signIn struct {
	State   string `json:"s"`
	Next    string `json:"n"`
	Expires int64  `json:"e"`
}

var errBadCookie = errors.New("cookie missing, forged or expired")

// set writes cookie name holding v until expires.
func (c *cookies) set(w http.ResponseWriter, name, path string, v any, expires time.Time) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return err
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	http.SetCookie(w, &http.Cookie{
		Name:     name,
		Value:    p + "." + base64.RawURLEncoding.EncodeToString(c.mac(name, p)),
		Path:     path,
		Expires:  expires,
		MaxAge:   int(expires.Sub(c.now()).Seconds()),
		HttpOnly: true,
		Secure:   c.secure,
		SameSite: http.SameSiteLaxMode,
	})
	return nil
}

// get reads and verifies cookie name into v, whose Expires it checks.
func (c *cookies) get(r *http.Request, name string, v interface{ expiry() int64 }) error {
	ck, err := r.Cookie(name)
	if err != nil {
		return errBadCookie
	}
	p, m, ok := strings.Cut(ck.Value, ".")
	mac, err := base64.RawURLEncoding.DecodeString(m)
	if !ok || err != nil || !hmac.Equal(mac, c.mac(name, p)) {
		return errBadCookie
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil || json.Unmarshal(payload, v) != nil || c.now().Unix() >= v.expiry() {
		return errBadCookie
	}
	return nil
}

// clear removes cookie name.
func (c *cookies) clear(w http.ResponseWriter, name, path string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

func (c *cookies) mac(name, payload string) []byte {
	h := hmac.New(sha256.New, c.key)
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(payload))
	return h.Sum(nil)
}

func (s *session) expiry() int64 { return s.Expires }
func (s *signIn) expiry() int64  { return s.Expires }

// session reads the request's session; a cookie without a sign-in's id
// (made before sign-ins had one) cannot be ended, and is refused.
func (c *cookies) session(r *http.Request) (session, bool) {
	var s session
	if c.get(r, sessionCookie, &s) != nil || s.Login == "" || s.ID == "" {
		return session{}, false
	}
	return s, true
}

// safeNext keeps a return path on this site: the path of one of the
// card's own pages (home, a ticket, a grade, a repository's audit log),
// with its query, written and decoded without spaces, control characters
// or backslashes, and clean; anything else is "/". Browsers drop tabs and
// newlines from a URL and read a backslash as a slash, so "/\t/evil.example"
// is "//evil.example" to them: off the site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.User != nil || !plainPath(next) || !plainPath(u.Path) {
		return "/"
	}
	p := u.Path
	if p != "/" && (path.Clean(p) != p || !(strings.HasPrefix(p, "/tickets/") || strings.HasPrefix(p, "/grades/") || strings.HasPrefix(p, "/repos/"))) {
		return "/"
	}
	return next
}

// plainPath reports whether s starts with one slash, not two, and holds
// no space, control character, backslash or non-ASCII byte.
func plainPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
