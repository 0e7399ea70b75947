package fakegithub

import (
	"crypto/rand"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"
)

const (
	// tokenLifetime is how long an installation token lives on GitHub.
	tokenLifetime = time.Hour
	// maxJWTLifetime is how far in the future GitHub accepts a JWT's exp.
	maxJWTLifetime = 10 * time.Minute
)

// GitHub's 401 messages for app JWTs, word for word.
const (
	msgJWTUndecodable = "A JSON web token could not be decoded"
	msgJWTIat         = "'Issued at' claim ('iat') must be an Integer representing a time in the past"
	msgJWTExp         = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	msgJWTTooLong     = "'Expiration time' claim ('exp') is too far in the future"
	msgBadCredentials = "Bad credentials"
)

// callerKind is who a request authenticated as.
type callerKind int

const (
	callerAnonymous callerKind = iota
	callerApp
	callerInstallation
	callerUser
)

// caller is the authenticated identity of one request.
type caller struct {
	kind   callerKind
	token  *token // for callerInstallation
	user   string // login, for callerUser
	remote string
}

// rateKey names the rate-limit bucket of a caller.
func (c caller) rateKey() string {
	switch c.kind {
	case callerApp:
		return "app"
	case callerInstallation:
		return "installation:" + strconv.FormatInt(c.token.installation, 10)
	case callerUser:
		return "user:" + strings.ToLower(c.user)
	default:
		return "anonymous"
	}
}

// token is an installation access token ("ghs_…").
type token struct {
	value        string
	installation int64
	expiresAt    time.Time
	dead         bool           // expired by ExpireTokens or revoked
	repoIDs      map[int64]bool // nil: every repository of the installation
}

// canAccess reports whether the token reaches a repository.
func (t *token) canAccess(rp *repository) bool {
	return rp.installation != 0 && rp.installation == t.installation && (t.repoIDs == nil || t.repoIDs[rp.id])
}

// authenticate reads the Authorization header. A missing header is an
// anonymous caller; a present but unusable one is a 401 reply.
func (s *Server) authenticate(r *http.Request) (caller, *response) {
	remote, _, _ := net.SplitHostPort(r.RemoteAddr)
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	if h == "" {
		return caller{kind: callerAnonymous, remote: remote}, nil
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	scheme = strings.ToLower(scheme)
	if cred == "" || (scheme != "token" && scheme != "bearer") {
		return caller{}, errorResponse(http.StatusUnauthorized, msgBadCredentials, docsRoot)
	}
	if strings.Count(cred, ".") == 2 {
		if scheme != "bearer" {
			return caller{}, errorResponse(http.StatusUnauthorized, msgBadCredentials, docsRoot)
		}
		if msg := s.verifyJWT(cred, time.Now()); msg != "" {
			return caller{}, errorResponse(http.StatusUnauthorized, msg, docsRoot)
		}
		return caller{kind: callerApp, remote: remote}, nil
	}
	if who, ok := s.userCaller(cred, remote); ok {
		return who, nil
	}
	tok := s.tokens[cred]
	if tok == nil || tok.dead || !s.now().Before(tok.expiresAt) {
		return caller{}, errorResponse(http.StatusUnauthorized, msgBadCredentials, docsRoot)
	}
	return caller{kind: callerInstallation, token: tok, remote: remote}, nil
}

// verifyJWT checks an app JWT like GitHub: RS256 signed with one of the app's
// keys,
// iss the app id (number or string) or client id, iat an integer not in the
// future, exp an integer in the future and at most 10 minutes ahead of now.
// It returns GitHub's message for the first problem, or "".
func (s *Server) verifyJWT(raw string, now time.Time) string {
	var claims jwt.MapClaims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithJSONNumber(), jwt.WithoutClaimsValidation())
	for _, key := range s.appKeys {
		c := jwt.MapClaims{}
		if _, err := parser.ParseWithClaims(raw, c, func(*jwt.Token) (any, error) { return key, nil }); err == nil {
			claims = c
			break
		}
	}
	if claims == nil {
		return msgJWTUndecodable
	}
	if !s.isOurIssuer(claims["iss"]) {
		return msgJWTUndecodable
	}
	iat, ok := integerClaim(claims["iat"])
	if !ok || iat > now.Unix() {
		return msgJWTIat
	}
	exp, ok := integerClaim(claims["exp"])
	if !ok || exp <= now.Unix() {
		return msgJWTExp
	}
	if exp > now.Add(maxJWTLifetime).Unix() {
		return msgJWTTooLong
	}
	return ""
}

// isOurIssuer accepts the app id as a JSON number or string, or the client id.
func (s *Server) isOurIssuer(iss any) bool {
	switch v := iss.(type) {
	case json.Number:
		n, err := v.Int64()
		return err == nil && n == fakeAppID
	case string:
		return v == strconv.FormatInt(fakeAppID, 10) || v == fakeClientID
	}
	return false
}

// integerClaim reads a NumericDate claim that must be a whole number.
func integerClaim(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// ExpireTokens makes every installation token issued so far invalid, as if
// its hour had passed; the next use answers 401 "Bad credentials".
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.dead = true
	}
}

// tokenChars are the characters of a token after its "ghs_" prefix.
const tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newTokenValue makes a fresh "ghs_" token: 4 + 36 characters like GitHub's.
func newTokenValue() string {
	b := make([]byte, 36)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = tokenChars[int(b[i])%len(tokenChars)]
	}
	return "ghs_" + string(b)
}

// createAccessToken serves POST /app/installations/{id}/access_tokens.
func (c *call) createAccessToken() *response {
	s := c.s
	inst := s.installationParam(c.params["id"])
	if inst == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	var req struct {
		Repositories  []string          `json:"repositories"`
		RepositoryIDs []int64           `json:"repository_ids"`
		Permissions   map[string]string `json:"permissions"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	tok := &token{value: newTokenValue(), installation: inst.id, expiresAt: s.now().Add(tokenLifetime)}
	var scoped []*repository
	if len(req.Repositories) > 0 || len(req.RepositoryIDs) > 0 {
		tok.repoIDs = map[int64]bool{}
		for _, name := range req.Repositories {
			rp := s.repos[repoKey(inst.account, name)]
			if rp == nil || rp.installation != inst.id {
				return errorResponse(http.StatusUnprocessableEntity, "There is at least one repository that does not exist or is not accessible to the parent installation.", c.doc)
			}
			tok.repoIDs[rp.id] = true
		}
		for _, id := range req.RepositoryIDs {
			rp := s.repoByID(id)
			if rp == nil || rp.installation != inst.id {
				return errorResponse(http.StatusUnprocessableEntity, "There is at least one repository that does not exist or is not accessible to the parent installation.", c.doc)
			}
			tok.repoIDs[rp.id] = true
		}
		for _, rp := range s.installationRepos(inst.id) {
			if tok.repoIDs[rp.id] {
				scoped = append(scoped, rp)
			}
		}
	}
	perms := maps.Clone(s.app.permissions)
	if len(req.Permissions) > 0 {
		for name, level := range req.Permissions {
			if permissionRank(level) == 0 || permissionRank(level) > permissionRank(perms[name]) {
				return errorResponse(http.StatusUnprocessableEntity, "The permissions requested are not granted to this installation.", c.doc)
			}
		}
		perms = req.Permissions
	}
	s.tokens[tok.value] = tok
	out := obj{
		"token":                tok.value,
		"expires_at":           ts(tok.expiresAt),
		"permissions":          perms,
		"repository_selection": "selected",
	}
	if tok.repoIDs != nil {
		repos := make([]obj, 0, len(scoped))
		for _, rp := range scoped {
			repos = append(repos, s.repoJSON(rp))
		}
		out["repositories"] = repos
	}
	return jsonResponse(http.StatusCreated, out)
}

// revokeToken serves DELETE /installation/token.
func (c *call) revokeToken() *response {
	c.who.token.dead = true
	return noContent()
}

// permissionRank orders GitHub App permission levels; 0 is unknown.
func permissionRank(level string) int {
	switch level {
	case "read":
		return 1
	case "write":
		return 2
	case "admin":
		return 3
	}
	return 0
}
