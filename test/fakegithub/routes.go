package fakegithub

import (
	"net/http"
	"net/url"
	"strings"
)

// authKind says which credentials a route takes.
type authKind int

const (
	// authApp routes take an app JWT.
	authApp authKind = iota
	// authInstallation routes take an installation token, no repository.
	authInstallation
	// authRepo routes take an installation token that reaches {owner}/{repo}.
	authRepo
	// authRepoOrApp routes take either; the app JWT works on installed repos.
	authRepoOrApp
	// authNone routes take no credentials (a malformed one is still a 401).
	authNone
)

// route is one REST endpoint. A pattern segment "{x}" captures one path
// segment, "{x...}" captures one or more (and may be followed by literals).
type route struct {
	method  string
	pattern []string
	auth    authKind
	doc     string
	handler func(*call) *response
}

// call is one authenticated request to a matched route.
type call struct {
	s      *Server
	r      *http.Request
	body   []byte
	params map[string]string
	who    caller
	doc    string
	repo   *repository // set for authRepo and authRepoOrApp routes
}

const docsBase = "https://docs.github.com/rest/"

// routes lists every endpoint the fake serves. Order matters where two
// patterns could match: the first one wins.
var routes = []route{
	{"POST", p("app-manifests/{code}/conversions"), authNone, docsBase + "apps/apps#create-a-github-app-from-a-manifest", (*call).convertManifest},
	{"GET", p("app"), authApp, docsBase + "apps/apps#get-the-authenticated-app", (*call).getApp},
	{"GET", p("app/installations"), authApp, docsBase + "apps/apps#list-installations-for-the-authenticated-app", (*call).listInstallations},
	{"GET", p("app/installations/{id}"), authApp, docsBase + "apps/apps#get-an-installation-for-the-authenticated-app", (*call).getInstallation},
	{"POST", p("app/installations/{id}/access_tokens"), authApp, docsBase + "apps/apps#create-an-installation-access-token-for-an-app", (*call).createAccessToken},
	{"GET", p("app/hook/deliveries"), authApp, docsBase + "apps/webhooks#list-deliveries-for-an-app-webhook", (*call).listDeliveries},
	{"GET", p("app/hook/deliveries/{id}"), authApp, docsBase + "apps/webhooks#get-a-delivery-for-an-app-webhook", (*call).getDelivery},
	{"POST", p("app/hook/deliveries/{id}/attempts"), authApp, docsBase + "apps/webhooks#redeliver-a-delivery-for-an-app-webhook", (*call).redeliver},
	{"GET", p("installation/repositories"), authInstallation, docsBase + "apps/installations#list-repositories-accessible-to-the-app-installation", (*call).listInstallationRepos},
	{"DELETE", p("installation/token"), authInstallation, docsBase + "apps/installations#revoke-an-installation-access-token", (*call).revokeToken},
	{"GET", p("repos/{owner}/{repo}/installation"), authRepoOrApp, docsBase + "apps/apps#get-a-repository-installation-for-the-authenticated-app", (*call).getRepoInstallation},
	{"GET", p("repos/{owner}/{repo}"), authRepo, docsBase + "repos/repos#get-a-repository", (*call).getRepo},
	{"GET", p("repos/{owner}/{repo}/branches/{branch...}"), authRepo, docsBase + "branches/branches#get-a-branch", (*call).getBranch},
	{"GET", p("repos/{owner}/{repo}/git/ref/{ref...}"), authRepo, docsBase + "git/refs#get-a-reference", (*call).getRef},
	{"GET", p("repos/{owner}/{repo}/contents"), authRepo, docsBase + "repos/contents#get-repository-content", (*call).getContents},
	{"GET", p("repos/{owner}/{repo}/contents/{path...}"), authRepo, docsBase + "repos/contents#get-repository-content", (*call).getContents},
	{"GET", p("repos/{owner}/{repo}/tarball"), authRepo, docsBase + "repos/contents#download-a-repository-archive-tar", (*call).getTarball},
	{"GET", p("repos/{owner}/{repo}/tarball/{ref...}"), authRepo, docsBase + "repos/contents#download-a-repository-archive-tar", (*call).getTarball},
	{"POST", p("repos/{owner}/{repo}/check-runs"), authRepo, docsBase + "checks/runs#create-a-check-run", (*call).createCheckRun},
	{"GET", p("repos/{owner}/{repo}/check-runs/{id}"), authRepo, docsBase + "checks/runs#get-a-check-run", (*call).getCheckRun},
	{"PATCH", p("repos/{owner}/{repo}/check-runs/{id}"), authRepo, docsBase + "checks/runs#update-a-check-run", (*call).updateCheckRun},
	{"GET", p("repos/{owner}/{repo}/commits/{ref...}/check-runs"), authRepo, docsBase + "checks/runs#list-check-runs-for-a-git-reference", (*call).listCheckRunsForRef},
	{"GET", p("repos/{owner}/{repo}/issues/comments/{id}"), authRepo, docsBase + "issues/comments#get-an-issue-comment", (*call).getComment},
	{"PATCH", p("repos/{owner}/{repo}/issues/comments/{id}"), authRepo, docsBase + "issues/comments#update-an-issue-comment", (*call).updateComment},
	{"GET", p("repos/{owner}/{repo}/issues/{number}"), authRepo, docsBase + "issues/issues#get-an-issue", (*call).getIssue},
	{"GET", p("repos/{owner}/{repo}/issues/{number}/comments"), authRepo, docsBase + "issues/comments#list-issue-comments", (*call).listComments},
	{"POST", p("repos/{owner}/{repo}/issues/{number}/comments"), authRepo, docsBase + "issues/comments#create-an-issue-comment", (*call).createComment},
	{"GET", p("repos/{owner}/{repo}/issues/{number}/labels"), authRepo, docsBase + "issues/labels#list-labels-for-an-issue", (*call).listIssueLabels},
	{"POST", p("repos/{owner}/{repo}/issues/{number}/labels"), authRepo, docsBase + "issues/labels#add-labels-to-an-issue", (*call).addIssueLabels},
	{"DELETE", p("repos/{owner}/{repo}/issues/{number}/labels/{name}"), authRepo, docsBase + "issues/labels#remove-a-label-from-an-issue", (*call).removeIssueLabel},
	{"GET", p("repos/{owner}/{repo}/labels"), authRepo, docsBase + "issues/labels#list-labels-for-a-repository", (*call).listRepoLabels},
	{"POST", p("repos/{owner}/{repo}/labels"), authRepo, docsBase + "issues/labels#create-a-label", (*call).createLabel},
	{"GET", p("repos/{owner}/{repo}/labels/{name}"), authRepo, docsBase + "issues/labels#get-a-label", (*call).getLabel},
	{"GET", p("repos/{owner}/{repo}/pulls/{number}"), authRepo, docsBase + "pulls/pulls#get-a-pull-request", (*call).getPull},
	{"GET", p("repos/{owner}/{repo}/collaborators/{user}/permission"), authRepo, docsBase + "collaborators/collaborators#get-repository-permissions-for-a-user", (*call).getPermission},
	{"GET", p("repos/{owner}/{repo}/collaborators"), authRepo, docsBase + "collaborators/collaborators#list-repository-collaborators", (*call).listCollaborators},
	{"GET", p("user"), authUser, docsBase + "users/users#get-the-authenticated-user", (*call).getUser},
}

// p splits a route pattern.
func p(pattern string) []string { return strings.Split(pattern, "/") }

// matchRoute finds the route for a method and unescaped path segments.
// GitHub answers an unknown method on a known path with 404, as here.
func matchRoute(method string, segs []string) (*route, map[string]string) {
	for i := range routes {
		rt := &routes[i]
		if rt.method != method && !(method == http.MethodHead && rt.method == http.MethodGet) {
			continue
		}
		if params, ok := matchPattern(rt.pattern, segs); ok {
			return rt, params
		}
	}
	return nil, nil
}

func matchPattern(pattern, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, ps := range pattern {
		if strings.HasPrefix(ps, "{") && strings.HasSuffix(ps, "...}") {
			tail := len(pattern) - i - 1
			end := len(segs) - tail
			if end <= i {
				return nil, false
			}
			if _, ok := matchPattern(pattern[i+1:], segs[end:]); !ok {
				return nil, false
			}
			params[ps[1:len(ps)-4]] = strings.Join(segs[i:end], "/")
			rest, _ := matchPattern(pattern[i+1:], segs[end:])
			for k, v := range rest {
				params[k] = v
			}
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		if strings.HasPrefix(ps, "{") {
			if segs[i] == "" {
				return nil, false
			}
			params[ps[1:len(ps)-1]] = segs[i]
			continue
		}
		if ps != segs[i] {
			return nil, false
		}
	}
	return params, len(pattern) == len(segs)
}

// unescapeSegment decodes one path segment, leaving malformed escapes as
// they are.
func unescapeSegment(seg string) string {
	if u, err := url.PathUnescape(seg); err == nil {
		return u
	}
	return seg
}
