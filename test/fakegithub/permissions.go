package fakegithub

import (
	"net/http"
	"slices"
	"strings"
)

// roles maps a repository role to the legacy permission GitHub reports
// beside it and the permissions object of the user.
var roles = map[string]struct {
	permission string
	flags      map[string]bool
}{
	"admin":    {"admin", map[string]bool{"admin": true, "maintain": true, "push": true, "triage": true, "pull": true}},
	"maintain": {"write", map[string]bool{"admin": false, "maintain": true, "push": true, "triage": true, "pull": true}},
	"write":    {"write", map[string]bool{"admin": false, "maintain": false, "push": true, "triage": true, "pull": true}},
	"triage":   {"read", map[string]bool{"admin": false, "maintain": false, "push": false, "triage": true, "pull": true}},
	"read":     {"read", map[string]bool{"admin": false, "maintain": false, "push": false, "triage": false, "pull": true}},
	"none":     {"none", map[string]bool{"admin": false, "maintain": false, "push": false, "triage": false, "pull": false}},
}

// SetPermission gives login a role on a seeded repository: "admin",
// "maintain", "write", "triage", "read" or "none". Logins the fake has never
// seen (here, as an issue author, owner or installation account) do not
// exist: asking for their permission answers 404.
func (s *Server) SetPermission(owner, repo, login, perm string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.seededRepo("SetPermission", owner, repo)
	if _, ok := roles[perm]; !ok {
		s.fatalf("SetPermission: unknown role %q", perm)
	}
	s.userID(login)
	rp.perms[strings.ToLower(login)] = perm
}

// getPermission serves GET /repos/{owner}/{repo}/collaborators/{user}/permission.
// permission is the legacy level (maintain reads "write", triage "read");
// role_name is the role itself.
func (c *call) getPermission() *response {
	login := c.params["user"]
	if _, ok := c.s.users[strings.ToLower(login)]; !ok {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	role := c.repo.perms[strings.ToLower(login)]
	if role == "" {
		role = "none"
	}
	r := roles[role]
	user := c.s.userJSON(login, "User")
	user["permissions"] = r.flags
	user["role_name"] = role
	return jsonResponse(http.StatusOK, obj{
		"permission": r.permission,
		"role_name":  role,
		"user":       user,
	})
}

// roleRank orders the roles; permissionFilter is the least rank each
// value of the collaborators list's permission parameter admits.
var roleRank = map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

var permissionFilter = map[string]int{"pull": 1, "triage": 2, "push": 3, "maintain": 4, "admin": 5}

// listCollaborators serves GET /repos/{owner}/{repo}/collaborators: the
// logins given a role on the repository, sorted, filtered by the
// permission parameter (pull, triage, push, maintain, admin) and paged.
func (c *call) listCollaborators() *response {
	least := 1
	if f := c.r.URL.Query().Get("permission"); f != "" {
		n, ok := permissionFilter[f]
		if !ok {
			return errorResponse(http.StatusUnprocessableEntity, "Validation Failed", c.doc)
		}
		least = n
	}
	var logins []string
	for login, role := range c.repo.perms {
		if roleRank[role] >= least {
			logins = append(logins, login)
		}
	}
	slices.Sort(logins)
	start, end, link := c.page(len(logins))
	out := make([]obj, 0, end-start)
	for _, login := range logins[start:end] {
		role := c.repo.perms[login]
		user := c.s.userJSON(login, "User")
		user["permissions"] = roles[role].flags
		user["role_name"] = role
		out = append(out, user)
	}
	return withLink(jsonResponse(http.StatusOK, out), link)
}
