package handlers

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
)

// CardConfig configures the approval card's pages.
type CardConfig struct {
	// PublicURL is where people reach the service: GitHub sends them back
	// to PublicURL/login/callback, cookies are Secure when it is https,
	// and it is the origin trusted for form posts.
	PublicURL string
	// SessionKey signs the cookies; 32 bytes or more.
	SessionKey []byte
	// SessionTTL is how long a sign-in lasts; DefaultSessionTTL when 0.
	SessionTTL time.Duration
	// AppName and InstallURL name the app and where to install it on
	// repositories: the home page keeps offering it.
	AppName, InstallURL string
	// Sessions remembers signed-out sessions; in this process's memory
	// when nil (one replica only).
	Sessions Sessions
	Log      *slog.Logger
}

// Card serves the approval card: sign-in with GitHub, the ticket list,
// the card of a version with Approve and Reject, and the grade pages.
// Pages are server-rendered; approving needs no JavaScript. State changes
// are POSTs behind Go's cross-origin protection, and the session cookie is
// SameSite=Lax.
type Card struct {
	cards    Cards
	signIn   SignIn
	cookies  *cookies
	ttl      time.Duration
	callback string
	csrf     *http.CrossOriginProtection
	pages    *pages
	install  installLink
	sessions Sessions
	log      *slog.Logger
}

// installLink is the app's name and where to install it.
type installLink struct{ Name, URL string }

// NewCard returns the card's handlers.
func NewCard(cards Cards, signIn SignIn, cfg CardConfig) (*Card, error) {
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("card: public URL %q: want the absolute http(s) URL people reach the service at", cfg.PublicURL)
	}
	if len(cfg.SessionKey) < 32 {
		return nil, errors.New("card: the session key must be 32 bytes or more")
	}
	ttl := cfg.SessionTTL
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	csrf := http.NewCrossOriginProtection()
	origin := u.Scheme + "://" + u.Host
	if err := csrf.AddTrustedOrigin(origin); err != nil {
		return nil, fmt.Errorf("card: trusted origin %s: %w", origin, err)
	}
	p, err := newPages()
	if err != nil {
		return nil, err
	}
	c := &Card{
		cards:    cards,
		signIn:   signIn,
		cookies:  &cookies{key: cfg.SessionKey, secure: u.Scheme == "https", now: time.Now},
		ttl:      ttl,
		callback: strings.TrimSuffix(cfg.PublicURL, "/") + OAuthCallbackPath,
		csrf:     csrf,
		pages:    p,
		install:  installLink{Name: cfg.AppName, URL: cfg.InstallURL},
		sessions: cfg.Sessions,
		log:      log,
	}
	if c.sessions == nil {
		c.sessions = &processSessions{}
	}
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.log.WarnContext(r.Context(), "cross-origin post refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		c.error(w, r, http.StatusForbidden, "This form was posted from another site and was refused. Open the card on this site and decide there.")
	}))
	return c, nil
}

// Register adds the card's routes to mux.
func (c *Card) Register(mux *http.ServeMux) {
	get := func(pattern string, h http.HandlerFunc) { mux.Handle("GET "+pattern, headers(c.identify(h))) }
	post := func(pattern string, h http.HandlerFunc) {
		mux.Handle("POST "+pattern, headers(c.csrf.Handler(c.identify(h))))
	}
	get("/{$}", c.home)
	get("/login", c.login)
	get(OAuthCallbackPath, c.loginCallback)
	post("/logout", c.logout)
	get(pipeline.TicketRoute, c.card)
	get(pipeline.VersionRoute, c.card)
	post(pipeline.ApproveRoute, c.approve)
	post(pipeline.RejectRoute, c.reject)
	get(pipeline.TestsArchiveRoute, c.testsArchive)
	get(pipeline.GradeRoute, c.grade)
	get(pipeline.AuditRoute, c.audit)
	get(pipeline.UploadRoute, c.uploadForm)
	post(pipeline.UploadRoute, c.upload)
	get(pipeline.RepoAuditRoute, c.repoAudit)
	get("/static/{file}", c.static)
}

// headers sets what every card response carries: no caching of private
// pages, no framing (an Approve button must not be clickjacked), no
// sniffing, a strict content security policy (no scripts at all).
func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			hd.Set("Cache-Control", "no-store")
		}
		h.ServeHTTP(w, r)
	})
}

// requireViewer returns the signed-in login. Without one it sends a GET
// to sign in (for every path alike, so nothing is confirmed) and answers
// anything else 404.
func (c *Card) requireViewer(w http.ResponseWriter, r *http.Request) (string, bool) {
	if v := c.viewer(r); v != "" {
		return v, true
	}
	if r.Method == http.MethodGet {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	} else {
		c.notFound(w, r)
	}
	return "", false
}

// login sends the browser to GitHub with a fresh state, kept in a signed
// cookie until GitHub sends it back.
func (c *Card) login(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 32)
	rand.Read(b)
	st := signIn{State: base64.RawURLEncoding.EncodeToString(b), Next: safeNext(r.URL.Query().Get("next")), Expires: c.cookies.now().Add(signInTTL).Unix()}
	if err := c.cookies.set(w, signInCookie, "/login", &st, time.Unix(st.Expires, 0)); err != nil {
		c.fail(w, r, err)
		return
	}
	http.Redirect(w, r, c.signIn.AuthorizeURL(st.State, c.callback), http.StatusFound)
}

// loginCallback checks that GitHub sent back our state, trades the code
// for the user and starts the session.
func (c *Card) loginCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var st signIn
	if err := c.cookies.get(r, signInCookie, &st); err != nil || q.Get("state") == "" || !equalStrings(q.Get("state"), st.State) {
		c.error(w, r, http.StatusBadRequest, "This sign-in was not started here, or took longer than ten minutes. Sign in again.")
		return
	}
	c.cookies.clear(w, signInCookie, "/login")
	if e := q.Get("error"); e != "" {
		c.error(w, r, http.StatusBadRequest, "GitHub did not sign you in ("+e+": "+q.Get("error_description")+"). Sign in again.")
		return
	}
	u, err := c.signIn.SignIn(r.Context(), q.Get("code"), c.callback)
	if err != nil {
		c.log.WarnContext(r.Context(), "sign-in failed", "err", err)
		c.error(w, r, http.StatusBadGateway, "GitHub did not confirm who you are. Sign in again.")
		return
	}
	exp := c.cookies.now().Add(c.ttl)
	id, err := newSessionID()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if err := c.cookies.set(w, sessionCookie, "/", &session{ID: id, Login: u.Login, UserID: u.ID, Expires: exp.Unix()}, exp); err != nil {
		c.fail(w, r, err)
		return
	}
	c.log.InfoContext(r.Context(), "signed in", "login", u.Login)
	http.Redirect(w, r, safeNext(st.Next), http.StatusSeeOther)
}

// logout ends the session.
func (c *Card) logout(w http.ResponseWriter, r *http.Request) {
	if s, ok := c.cookies.session(r); ok {
		// Ended on the server: a copy of the cookie signs no one in.
		if err := c.sessions.End(r.Context(), s.ID, time.Unix(s.Expires, 0)); err != nil {
			c.fail(w, r, err)
			return
		}
	}
	c.cookies.clear(w, sessionCookie, "/")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// identify puts the numeric user id of the request's session, if any,
// in the request's context (ViewerID) for the card service: a login names
// whoever holds it now, the id the account that signed in.
func (c *Card) identify(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, ok := c.cookies.session(r); ok && s.UserID != 0 {
			r = r.WithContext(WithViewerID(r.Context(), s.UserID))
		}
		h.ServeHTTP(w, r)
	})
}

// viewer is the signed-in login of the request, "" when nobody is signed
// in or the session was signed out. A store that cannot answer signs
// nobody in: the page asks to sign in again.
func (c *Card) viewer(r *http.Request) string {
	s, ok := c.cookies.session(r)
	if !ok {
		return ""
	}
	ended, err := c.sessions.Ended(r.Context(), s.ID)
	if err != nil {
		c.log.ErrorContext(r.Context(), "read signed-out sessions", "err", err)
		return ""
	}
	if ended {
		return ""
	}
	return s.Login
}

// home lists the tickets the viewer can act on, or offers to sign in.
func (c *Card) home(w http.ResponseWriter, r *http.Request) {
	viewer := c.viewer(r)
	if viewer == "" {
		c.render(w, r, http.StatusOK, "signin", pageData{Title: "Sign in", Install: c.install})
		return
	}
	items, err := c.cards.Tickets(r.Context(), viewer)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	problems, err := c.cards.ConfigProblems(r.Context(), viewer)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "home", pageData{Title: "Your tickets", Viewer: viewer, Tickets: items, ConfigProblems: problems, Install: c.install})
}

// Path segments: GitHub's owner and repository names, positive numbers.
var (
	ownerName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoName  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// viewerTicket is the signed-in viewer and the ticket (and version, 0 for
// none) the request's path names; it answers the request itself (a sign-in
// redirect, a 404) and returns false when there is none.
func (c *Card) viewerTicket(w http.ResponseWriter, r *http.Request) (string, TicketRef, int, bool) {
	viewer, ok := c.requireViewer(w, r)
	if !ok {
		return "", TicketRef{}, 0, false
	}
	t, k, ok := ticketRef(r)
	if !ok {
		c.notFound(w, r)
		return "", TicketRef{}, 0, false
	}
	return viewer, t, k, true
}

// ticketRef reads the ticket and version from the path; ok is false for
// anything that cannot name one.
func ticketRef(r *http.Request) (TicketRef, int, bool) {
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	issue, err := strconv.Atoi(r.PathValue("issue"))
	if !ownerName.MatchString(owner) || !repoName.MatchString(repo) || repo == "." || repo == ".." || err != nil || issue <= 0 {
		return TicketRef{}, 0, false
	}
	k := 0
	if v := r.PathValue("version"); v != "" {
		if k, err = strconv.Atoi(v); err != nil || k <= 0 {
			return TicketRef{}, 0, false
		}
	}
	return TicketRef{Owner: owner, Repo: repo, Issue: issue}, k, true
}

// decidedMessages are shown on the card after a decision, by the
// ?decided= code the redirect carries.
var decidedMessages = map[string]string{
	string(DecidedApproved): "Approved. Pull requests that fix the issue are graded against this version.",
	string(DecidedSigned):   "You signed. The repository requires a second approver with write access who is not the requester.",
	string(DecidedRejected): "Rejected. The reason goes to the writer; the version is kept and never graded.",
	"uploaded":              "Uploaded. The base check runs on this version next; once it passes, the card offers approval.",
}

// card shows a version of a ticket's hidden tests.
func (c *Card) card(w http.ResponseWriter, r *http.Request) {
	viewer, t, k, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	page, err := c.cards.Card(r.Context(), viewer, t, k)
	if errors.Is(err, ErrNotShown) {
		// Not the card's to show them: a reader of the repository (the
		// implementer following a check run's Details) gets the ticket
		// as its check runs tell it.
		c.summary(w, r, viewer, t)
		return
	}
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.showCard(w, r, http.StatusOK, viewer, page, decidedMessages[r.URL.Query().Get("decided")], "")
}

// testsArchive sends a version's tests as a zip to those who may see its
// card.
func (c *Card) testsArchive(w http.ResponseWriter, r *http.Request) {
	viewer, t, k, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	data, err := c.cards.TestsArchive(r.Context(), viewer, t, k)
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s-%d-v%d-tests.zip"`, t.Owner, t.Repo, t.Issue, k))
	w.Write(data)
}

// summary shows the ticket to a viewer who can read its repository but
// not see its card; anyone else gets the one not-found page.
func (c *Card) summary(w http.ResponseWriter, r *http.Request, viewer string, t TicketRef) {
	s, err := c.cards.Summary(r.Context(), viewer, t)
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "ticket", pageData{Title: s.Ticket.Ref.String(), Viewer: viewer, Summary: s})
}

// showCard renders a card with a notice or a refusal.
func (c *Card) showCard(w http.ResponseWriter, r *http.Request, status int, viewer string, page *CardPage, notice, refusal string) {
	files, err := highlightFiles(page.Files)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	title := page.Ticket.Ref.String()
	if page.Version != nil {
		title = fmt.Sprintf("%s v%d", title, page.Version.Number)
	}
	c.render(w, r, status, "card", pageData{Title: title, Viewer: viewer, Card: page, Files: files,
		Reference: highlightPatch(page.ReferencePatch), Notice: notice, Refusal: refusal})
}

// maxForm bounds a decision's form: a reason of a few thousand characters.
const maxForm = 64 << 10

// maxReason is the longest rejection reason kept.
const maxReason = 4000

// approve signs the version whose digest the form carries.
func (c *Card) approve(w http.ResponseWriter, r *http.Request) {
	c.decide(w, r, func(viewer string, t TicketRef, k int) (Decided, error) {
		return c.cards.Approve(r.Context(), viewer, t, k, r.PostFormValue("digest"))
	})
}

// reject rejects the version with the form's reason.
func (c *Card) reject(w http.ResponseWriter, r *http.Request) {
	c.decide(w, r, func(viewer string, t TicketRef, k int) (Decided, error) {
		reason := strings.TrimSpace(r.PostFormValue("reason"))
		if reason == "" {
			return "", Refusef("A rejection needs a reason: say what the writer should change.")
		}
		if n := len([]rune(reason)); n > maxReason {
			return "", Refusef("The reason is %d characters long; keep it under %d.", n, maxReason)
		}
		return c.cards.Reject(r.Context(), viewer, t, k, r.PostFormValue("digest"), reason)
	})
}

// decide runs a decision posted from the card and shows its outcome: the
// card again after a redirect, or, refused, the newest card with why.
func (c *Card) decide(w http.ResponseWriter, r *http.Request, do func(viewer string, t TicketRef, k int) (Decided, error)) {
	viewer, t, k, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	if k == 0 {
		c.notFound(w, r)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		c.error(w, r, http.StatusBadRequest, "The form could not be read: "+err.Error())
		return
	}
	d, err := do(viewer, t, k)
	var refusal *Refusal
	if errors.As(err, &refusal) {
		page, perr := c.cards.Card(r.Context(), viewer, t, 0)
		if perr != nil {
			c.cardError(w, r, perr)
			return
		}
		c.showCard(w, r, http.StatusConflict, viewer, page, "", refusal.Message)
		return
	}
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.log.InfoContext(r.Context(), "card decision", "ticket", t.String(), "version", k, "login", viewer, "decided", string(d))
	http.Redirect(w, r, t.VersionPath(k)+"?decided="+url.QueryEscape(string(d)), http.StatusSeeOther)
}

// grade shows a grade with its full output.
func (c *Card) grade(w http.ResponseWriter, r *http.Request) {
	viewer, ok := c.requireViewer(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return
	}
	g, err := c.cards.Grade(r.Context(), viewer, id)
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "grade", pageData{Title: fmt.Sprintf("Grade %d of %s", g.ID, g.Ticket.Ref), Viewer: viewer, Grade: g})
}

// auditFilter reads the audit log's filter from the query.
func auditFilter(r *http.Request) AuditFilter {
	q := r.URL.Query()
	return AuditFilter{Kind: strings.TrimSpace(q.Get("kind")), Actor: strings.TrimSpace(q.Get("actor"))}
}

// audit shows a ticket's audit log.
func (c *Card) audit(w http.ResponseWriter, r *http.Request) {
	viewer, t, _, ok := c.viewerTicket(w, r)
	if !ok {
		return
	}
	page, err := c.cards.Audit(r.Context(), viewer, t, auditFilter(r))
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit log of " + t.String(), Viewer: viewer, Audit: page})
}

// repoAudit shows a repository's audit log.
func (c *Card) repoAudit(w http.ResponseWriter, r *http.Request) {
	viewer, ok := c.requireViewer(w, r)
	if !ok {
		return
	}
	owner, repo := r.PathValue("owner"), r.PathValue("repo")
	if !ownerName.MatchString(owner) || !repoName.MatchString(repo) || repo == "." || repo == ".." {
		c.notFound(w, r)
		return
	}
	page, err := c.cards.RepoAudit(r.Context(), viewer, owner, repo, auditFilter(r))
	if err != nil {
		c.cardError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "audit", pageData{Title: "Audit log of " + owner + "/" + repo, Viewer: viewer, Audit: page})
}

// cardError answers an error of Cards: 404 for what may not be seen, a
// refusal as a conflict, anything else as a failure.
func (c *Card) cardError(w http.ResponseWriter, r *http.Request, err error) {
	var refusal *Refusal
	switch {
	case errors.Is(err, ErrNotFound):
		c.notFound(w, r)
	case errors.As(err, &refusal):
		c.error(w, r, http.StatusConflict, refusal.Message)
	default:
		c.fail(w, r, err)
	}
}

// notFound is the one answer for what does not exist and what the viewer
// may not see: the same status and the same page.
func (c *Card) notFound(w http.ResponseWriter, r *http.Request) {
	c.error(w, r, http.StatusNotFound, "There is nothing here, or nothing you may see.")
}

// fail logs an unexpected error and answers 500 without its detail.
func (c *Card) fail(w http.ResponseWriter, r *http.Request, err error) {
	c.log.ErrorContext(r.Context(), "card page failed", "path", r.URL.Path, "err", err)
	c.error(w, r, http.StatusInternalServerError, "Something went wrong on our side; it is logged. Try again in a moment.")
}

// error renders the error page.
func (c *Card) error(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", pageData{Title: http.StatusText(status), Viewer: c.viewer(r), Status: status, Message: msg})
}

func equalStrings(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
