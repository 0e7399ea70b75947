package fakegithub

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	// fakeAppID is the id of the one GitHub App the fake knows.
	fakeAppID int64 = 424242
	// fakeAppSlug is that app's slug; its bot user is "testfirst[bot]".
	fakeAppSlug = "testfirst"
	// fakeClientID is that app's client id, also accepted as a JWT issuer.
	fakeClientID = "Iv23liFakeTestfirst0"
	// maxRequestBody caps what one request may send.
	maxRequestBody = 32 << 20
)

// Server is a running fake of the GitHub REST API. All state is in memory
// behind one mutex; every method is safe for concurrent use.
type Server struct {
	t  testing.TB
	ts *httptest.Server
	// listener can be stopped and started again (Stop, Start).
	listener *outageListener
	key      *rsa.PrivateKey
	keyPEM   []byte

	mu            sync.Mutex
	app           appSettings
	appKeys       []*rsa.PublicKey // every key the app's JWTs may be signed with
	manifestCodes map[string]*manifestCode
	clock         func() time.Time
	nextID        int64
	requestSeq    int64
	users         map[string]int64 // lower(login) → user id
	installations map[int64]*installation
	repos         map[string]*repository // lower("owner/name")
	commits       map[string]*commit
	tokens        map[string]*token
	links         map[string]*archiveLink
	deliveries    []*Delivery
	redeliveries  []int64
	faults        []fault
	stopOn        []fault // StopOnNext's triggers
	hooks         []hook  // OnNextWhere's cues
	requests      []Request
	rates         map[string]*rateWindow
	oauthFlow     *oauthState // the OAuth web flow, made on first use
	git           *gitObjects // what the Git data API made, on first use
}

// New starts a fake GitHub with one GitHub App (a fresh RSA 2048 key) and no
// installations, and stops it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("fakegithub: generate app key: %v", err)
	}
	s := &Server{
		t:             t,
		key:           key,
		keyPEM:        pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		clock:         time.Now,
		app:           defaultAppSettings(),
		appKeys:       []*rsa.PublicKey{&key.PublicKey},
		manifestCodes: map[string]*manifestCode{},
		nextID:        1000,
		users:         map[string]int64{},
		installations: map[int64]*installation{},
		repos:         map[string]*repository{},
		commits:       map[string]*commit{},
		tokens:        map[string]*token{},
		links:         map[string]*archiveLink{},
		rates:         map[string]*rateWindow{},
	}
	l, err := newOutageListener()
	if err != nil {
		t.Fatalf("fakegithub: listen: %v", err)
	}
	s.listener = l
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.ts.Listener.Close()
	s.ts.Listener = l
	s.ts.Start()
	t.Cleanup(s.ts.Close)
	return s
}

// URL is the REST API base URL, ending in "/", as go-github's BaseURL wants
// it. ghinstallation's BaseURL is the same without the trailing slash.
func (s *Server) URL() string { return s.ts.URL + "/" }

// AppID is the id of the fake's GitHub App: the JWT issuer.
func (s *Server) AppID() int64 { return fakeAppID }

// ClientID is the app's client id, which GitHub also accepts as JWT issuer.
func (s *Server) ClientID() string { return fakeClientID }

// AppSlug is the app's slug; comments it posts are by "<slug>[bot]".
func (s *Server) AppSlug() string { return fakeAppSlug }

// PrivateKeyPEM is the app's private key, PKCS#1 PEM as GitHub hands it out.
func (s *Server) PrivateKeyPEM() []byte { return append([]byte(nil), s.keyPEM...) }

// SetClock replaces GitHub's clock (time.Now by default). It stamps created
// objects and decides token, archive-link and rate-limit expiry. App JWTs are
// still checked against the wall clock. now is called with the server's
// lock held and must not call back into the Server.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// now is GitHub's current time, to the second. Callers hold s.mu.
func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

// newID hands out the next object id. Callers hold s.mu.
func (s *Server) newID() int64 {
	s.nextID++
	return s.nextID
}

// apiURL is an absolute API URL for a path without a leading slash.
func (s *Server) apiURL(path string) string { return s.ts.URL + "/" + path }

// fatalf fails the test for a seeding mistake.
func (s *Server) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("fakegithub: "+format, args...)
}

// response is a reply built under the lock and written after it.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.takeStop(r) {
		s.cut(w)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	var resp *response
	if err != nil {
		resp = errorResponse(http.StatusRequestEntityTooLarge, "Request body too large", docsRoot)
	}
	if fn := s.takeHook(r, body); fn != nil {
		fn()
	}
	resp = s.handle(r, body, resp)
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.status)
	if r.Method != http.MethodHead && len(resp.body) > 0 {
		_, _ = w.Write(resp.body)
	}
}

// handle answers one request under the lock and records it.
func (s *Server) handle(r *http.Request, body []byte, early *response) *response {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp := early
	if resp == nil {
		resp = s.dispatch(r, body)
	}
	if resp.header == nil {
		resp.header = http.Header{}
	}
	s.requests = append(s.requests, Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.Query(),
		Header: r.Header.Clone(),
		Body:   body,
		Status: resp.status,
		At:     time.Now(),
	})
	return resp
}

// dispatch answers a request: an injected fault first (like a failing proxy
// in front of GitHub, so before credentials are judged), then
// authentication, rate limiting and the endpoint itself. Archive downloads
// skip the API's headers and credentials.
func (s *Server) dispatch(r *http.Request, body []byte) *response {
	segs := splitPath(r.URL.EscapedPath())
	if len(segs) > 0 && (segs[0] == codeloadPrefix || segs[0] == rawPrefix) {
		if resp := s.takeFault(r, body, "anonymous", nil); resp != nil {
			return resp
		}
		return s.serveArchive(r, segs)
	}
	if len(segs) > 0 && segs[0] == oauthPrefix {
		if resp := s.takeFault(r, body, "anonymous", nil); resp != nil {
			return resp
		}
		return s.serveOAuth(r, body, segs)
	}
	rt, params := matchRoute(r.Method, segs)
	doc := docsRoot
	if rt != nil {
		doc = rt.doc
	}
	who, authErr := s.authenticate(r)
	base := s.apiHeaders()
	rateKey := who.rateKey()
	if authErr != nil {
		rateKey = "anonymous"
	}
	if resp := s.takeFault(r, body, rateKey, base); resp != nil {
		return resp
	}
	resp := s.serveAPI(r, body, rt, params, who, authErr, doc)
	resp.header = mergeHeaders(base, s.rateHeaders(rateKey), resp.header)
	if resp.status == http.StatusNoContent {
		resp.header.Del("Content-Type")
	}
	return resp
}

// serveAPI authenticates, rate limits and runs the matched endpoint.
func (s *Server) serveAPI(r *http.Request, body []byte, rt *route, params map[string]string, who caller, authErr *response, doc string) *response {
	if authErr != nil {
		return authErr
	}
	if who.kind != callerAnonymous {
		if limited := s.countRate(who); limited != nil {
			return limited
		}
	}
	if rt == nil {
		return errorResponse(http.StatusNotFound, "Not Found", docsRoot)
	}
	c := &call{s: s, r: r, body: body, params: params, who: who, doc: doc}
	switch rt.auth {
	case authUser:
		switch who.kind {
		case callerAnonymous:
			return errorResponse(http.StatusUnauthorized, "Requires authentication", doc)
		case callerApp, callerInstallation:
			return errorResponse(http.StatusForbidden, "Resource not accessible by integration", doc)
		}
	case authApp:
		if who.kind != callerApp {
			return errorResponse(http.StatusUnauthorized, "A JSON web token could not be decoded", docsRoot)
		}
	case authInstallation:
		switch who.kind {
		case callerAnonymous:
			return errorResponse(http.StatusUnauthorized, "Requires authentication", doc)
		case callerApp, callerUser:
			return errorResponse(http.StatusForbidden, "Resource not accessible by integration", doc)
		}
	case authRepo, authRepoOrApp:
		rp := s.repos[repoKey(params["owner"], params["repo"])]
		switch who.kind {
		case callerAnonymous:
			// Every fake repository is private: GitHub hides it.
			return errorResponse(http.StatusNotFound, "Not Found", doc)
		case callerApp:
			if rt.auth != authRepoOrApp {
				return errorResponse(http.StatusForbidden, "Resource not accessible by integration", doc)
			}
			if rp == nil || rp.installation == 0 {
				return errorResponse(http.StatusNotFound, "Not Found", doc)
			}
		case callerInstallation:
			if rp == nil || !who.token.canAccess(rp) {
				return errorResponse(http.StatusNotFound, "Not Found", doc)
			}
		case callerUser:
			// The fake serves repositories to installations only.
			return errorResponse(http.StatusForbidden, "Resource not accessible by integration", doc)
		}
		c.repo = rp
	}
	return rt.handler(c)
}

// apiHeaders are the headers GitHub puts on every REST response.
func (s *Server) apiHeaders() http.Header {
	s.requestSeq++
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	h.Set("X-GitHub-Request-Id", requestID(s.requestSeq))
	return h
}

// mergeHeaders layers header sets; later ones win per key.
func mergeHeaders(layers ...http.Header) http.Header {
	out := http.Header{}
	for _, l := range layers {
		for k, v := range l {
			out[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	return out
}

// splitPath splits an escaped URL path into unescaped segments, so that an
// escaped "/" inside a segment (a label name, say) stays in that segment.
func splitPath(escaped string) []string {
	escaped = strings.Trim(escaped, "/")
	if escaped == "" {
		return nil
	}
	parts := strings.Split(escaped, "/")
	for i, p := range parts {
		parts[i] = unescapeSegment(p)
	}
	return parts
}
