package github

// AgentPermissions are AppPermissions with what an implementer agent's
// pull request needs on top: contents write, to push its commits to
// testfirst/issue-N through the Git data API (blobs, trees, commits,
// refs), and pull_requests write, to open the pull request. A service
// that runs agents registers with these.
func AgentPermissions() map[string]string {
	p := AppPermissions()
	p["contents"], p["pull_requests"] = "write", "write"
	return p
}
