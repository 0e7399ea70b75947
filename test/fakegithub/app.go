package fakegithub

import (
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"
)

// appCreatedAt is when the fake app was registered.
var appCreatedAt = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// appSettings is what the app's owner configured: its name, homepage,
// permissions and events. Registering from a manifest replaces them.
type appSettings struct {
	name        string
	description string
	externalURL string
	permissions map[string]string
	events      []string
}

// defaultAppSettings is the fake app as New makes it.
func defaultAppSettings() appSettings {
	return appSettings{
		name:        "testfirst",
		description: "Test-first pipeline with a sealed grader",
		externalURL: "https://testfirst.example",
		permissions: map[string]string{
			"checks":        "write",
			"contents":      "read",
			"issues":        "write",
			"metadata":      "read",
			"pull_requests": "read",
		},
		events: []string{"check_run", "check_suite", "issue_comment", "issues", "pull_request"},
	}
}

// installation is one installation of the app on an account.
type installation struct {
	id        int64
	account   string
	createdAt time.Time
}

// AddInstallation installs the app on an account (a user or organization
// login) under the given installation id.
func (s *Server) AddInstallation(id int64, account string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if id <= 0 {
		s.fatalf("AddInstallation: id %d must be positive", id)
	}
	if _, ok := s.installations[id]; ok {
		s.fatalf("AddInstallation: installation %d already exists", id)
	}
	s.userID(account)
	s.installations[id] = &installation{id: id, account: account, createdAt: s.now()}
}

// installationParam finds the installation named by a path parameter.
func (s *Server) installationParam(v string) *installation {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return s.installations[id]
}

// installationRepos lists an installation's repositories by full name.
func (s *Server) installationRepos(id int64) []*repository {
	var out []*repository
	for _, rp := range s.repos {
		if rp.installation == id {
			out = append(out, rp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fullName() < out[j].fullName() })
	return out
}

// appJSON is the app as GitHub shows it.
func (s *Server) appJSON() obj {
	return obj{
		"id":                  fakeAppID,
		"slug":                fakeAppSlug,
		"node_id":             nodeID("A_", fakeAppID),
		"client_id":           fakeClientID,
		"owner":               s.userJSON("testfirst-app", "Organization"),
		"name":                s.app.name,
		"description":         s.app.description,
		"external_url":        s.app.externalURL,
		"html_url":            "https://github.com/apps/" + fakeAppSlug,
		"created_at":          ts(appCreatedAt),
		"updated_at":          ts(appCreatedAt),
		"permissions":         maps.Clone(s.app.permissions),
		"events":              slices.Clone(s.app.events),
		"installations_count": len(s.installations),
	}
}

// installationJSON is an installation as GitHub shows it.
func (s *Server) installationJSON(in *installation) obj {
	id := strconv.FormatInt(in.id, 10)
	return obj{
		"id":                        in.id,
		"client_id":                 fakeClientID,
		"account":                   s.userJSON(in.account, "Organization"),
		"repository_selection":      "selected",
		"access_tokens_url":         s.apiURL("app/installations/" + id + "/access_tokens"),
		"repositories_url":          s.apiURL("installation/repositories"),
		"html_url":                  "https://github.com/organizations/" + in.account + "/settings/installations/" + id,
		"app_id":                    fakeAppID,
		"app_slug":                  fakeAppSlug,
		"target_id":                 s.userID(in.account),
		"target_type":               "Organization",
		"permissions":               maps.Clone(s.app.permissions),
		"events":                    slices.Clone(s.app.events),
		"created_at":                ts(in.createdAt),
		"updated_at":                ts(in.createdAt),
		"single_file_name":          nil,
		"has_multiple_single_files": false,
		"single_file_paths":         []string{},
		"suspended_by":              nil,
		"suspended_at":              nil,
	}
}

// getApp serves GET /app.
func (c *call) getApp() *response { return jsonResponse(http.StatusOK, c.s.appJSON()) }

// listInstallations serves GET /app/installations.
func (c *call) listInstallations() *response {
	ids := make([]int64, 0, len(c.s.installations))
	for id := range c.s.installations {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	start, end, link := c.page(len(ids))
	out := make([]obj, 0, end-start)
	for _, id := range ids[start:end] {
		out = append(out, c.s.installationJSON(c.s.installations[id]))
	}
	return withLink(jsonResponse(http.StatusOK, out), link)
}

// getInstallation serves GET /app/installations/{id}.
func (c *call) getInstallation() *response {
	in := c.s.installationParam(c.params["id"])
	if in == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.installationJSON(in))
}

// getRepoInstallation serves GET /repos/{owner}/{repo}/installation.
func (c *call) getRepoInstallation() *response {
	return jsonResponse(http.StatusOK, c.s.installationJSON(c.s.installations[c.repo.installation]))
}

// listInstallationRepos serves GET /installation/repositories.
func (c *call) listInstallationRepos() *response {
	var repos []*repository
	for _, rp := range c.s.installationRepos(c.who.token.installation) {
		if c.who.token.canAccess(rp) {
			repos = append(repos, rp)
		}
	}
	start, end, link := c.page(len(repos))
	out := make([]obj, 0, end-start)
	for _, rp := range repos[start:end] {
		out = append(out, c.s.repoJSON(rp))
	}
	return withLink(jsonResponse(http.StatusOK, obj{
		"total_count":          len(repos),
		"repository_selection": "selected",
		"repositories":         out,
	}), link)
}
