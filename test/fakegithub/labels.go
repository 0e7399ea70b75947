package fakegithub

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

const (
	// defaultLabelColor is the color GitHub gives a label created without
	// one, including labels created by adding them to an issue.
	defaultLabelColor = "ededed"
	// maxLabelName and maxLabelDescription are GitHub's label limits.
	maxLabelName        = 50
	maxLabelDescription = 100
)

// label is a repository label. Names match case-insensitively.
type label struct {
	id          int64
	name        string
	color       string
	description string
}

// findLabel finds a repository label by name, ignoring case.
func (rp *repository) findLabel(name string) *label {
	for _, l := range rp.labels {
		if strings.EqualFold(l.name, name) {
			return l
		}
	}
	return nil
}

// labelJSON is a label as GitHub shows it.
func (s *Server) labelJSON(rp *repository, l *label) obj {
	return obj{
		"id":          l.id,
		"node_id":     nodeID("LA_", l.id),
		"url":         s.repoURL(rp, "labels/"+url.PathEscape(l.name)),
		"name":        l.name,
		"color":       l.color,
		"default":     false,
		"description": strOrNil(l.description),
	}
}

// labelsJSON lists labels sorted by name, as GitHub does.
func (s *Server) labelsJSON(rp *repository, labels []*label) []obj {
	sorted := append([]*label(nil), labels...)
	sortLabels(sorted)
	out := make([]obj, 0, len(sorted))
	for _, l := range sorted {
		out = append(out, s.labelJSON(rp, l))
	}
	return out
}

func sortLabels(labels []*label) {
	sort.Slice(labels, func(i, j int) bool { return strings.ToLower(labels[i].name) < strings.ToLower(labels[j].name) })
}

// createLabel serves POST /repos/{owner}/{repo}/labels.
func (c *call) createLabel() *response {
	var req struct {
		Name        *string `json:"name"`
		Color       *string `json:"color"`
		Description *string `json:"description"`
	}
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if req.Name == nil {
		return notSupplied(c.doc, "name")
	}
	name := strings.TrimSpace(*req.Name)
	switch {
	case name == "":
		return validationFailed(c.doc, fieldError{Resource: "Label", Code: "missing_field", Field: "name"})
	case utf8.RuneCountInString(name) > maxLabelName:
		return validationFailed(c.doc, fieldError{Resource: "Label", Code: "custom", Field: "name", Message: "name is too long (maximum is 50 characters)"})
	case c.repo.findLabel(name) != nil:
		return validationFailed(c.doc, fieldError{Resource: "Label", Code: "already_exists", Field: "name"})
	}
	color := defaultLabelColor
	if req.Color != nil {
		color = strings.TrimPrefix(*req.Color, "#")
		if !isHexColor(color) {
			return validationFailed(c.doc, fieldError{Resource: "Label", Code: "invalid", Field: "color"})
		}
	}
	desc := deref(req.Description)
	if utf8.RuneCountInString(desc) > maxLabelDescription {
		return validationFailed(c.doc, fieldError{Resource: "Label", Code: "custom", Field: "description", Message: "description is too long (maximum is 100 characters)"})
	}
	l := &label{id: c.s.newID(), name: name, color: strings.ToLower(color), description: desc}
	c.repo.labels = append(c.repo.labels, l)
	return jsonResponse(http.StatusCreated, c.s.labelJSON(c.repo, l))
}

// isHexColor reports whether s is six hex digits.
func isHexColor(s string) bool {
	return len(s) == 6 && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// getLabel serves GET /repos/{owner}/{repo}/labels/{name}.
func (c *call) getLabel() *response {
	l := c.repo.findLabel(c.params["name"])
	if l == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.labelJSON(c.repo, l))
}

// listRepoLabels serves GET /repos/{owner}/{repo}/labels.
func (c *call) listRepoLabels() *response {
	labels := append([]*label(nil), c.repo.labels...)
	sortLabels(labels)
	start, end, link := c.page(len(labels))
	return withLink(jsonResponse(http.StatusOK, c.s.labelsJSON(c.repo, labels[start:end])), link)
}

// listIssueLabels serves GET /repos/{owner}/{repo}/issues/{number}/labels.
func (c *call) listIssueLabels() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.labelsJSON(c.repo, is.labels))
}

// addIssueLabels serves POST /repos/{owner}/{repo}/issues/{number}/labels.
// The body may be an array of names (what go-github sends), {"labels":
// [names]} or {"labels": [{"name": …}]}. Unknown labels are created in the
// repository with the default color, as GitHub does. It answers with every
// label now on the issue.
func (c *call) addIssueLabels() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	names, resp := parseLabelNames(c.body, c.doc)
	if resp != nil {
		return resp
	}
	for _, name := range names {
		l := c.repo.findLabel(name)
		if l == nil {
			l = &label{id: c.s.newID(), name: name, color: defaultLabelColor}
			c.repo.labels = append(c.repo.labels, l)
		}
		if !hasLabel(is, l) {
			is.labels = append(is.labels, l)
		}
	}
	return jsonResponse(http.StatusOK, c.s.labelsJSON(c.repo, is.labels))
}

// parseLabelNames reads the body of "add labels to an issue".
func parseLabelNames(body []byte, doc string) ([]string, *response) {
	var raw json.RawMessage = body
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, notSupplied(doc, "labels")
	}
	var wrapped struct {
		Labels *json.RawMessage `json:"labels"`
	}
	if strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		if err := json.Unmarshal(body, &wrapped); err != nil {
			return nil, errorResponse(http.StatusBadRequest, "Problems parsing JSON", doc)
		}
		if wrapped.Labels == nil {
			return nil, notSupplied(doc, "labels")
		}
		raw = *wrapped.Labels
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorResponse(http.StatusBadRequest, "Problems parsing JSON", doc)
	}
	names := make([]string, 0, len(items))
	for _, item := range items {
		var name string
		if err := json.Unmarshal(item, &name); err != nil {
			var named struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(item, &named); err != nil {
				return nil, invalidRequest(doc, "For 'items', "+string(item)+" is not a string.")
			}
			name = named.Name
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, validationFailed(doc, fieldError{Resource: "Label", Code: "missing_field", Field: "name"})
		}
		names = append(names, name)
	}
	return names, nil
}

// hasLabel reports whether a label is on an issue.
func hasLabel(is *issue, l *label) bool {
	for _, have := range is.labels {
		if have == l {
			return true
		}
	}
	return false
}

// removeIssueLabel serves DELETE
// /repos/{owner}/{repo}/issues/{number}/labels/{name}: 404 "Label does not
// exist" when the label is not on the issue; else the labels left.
func (c *call) removeIssueLabel() *response {
	is := c.findIssue()
	if is == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	l := c.repo.findLabel(c.params["name"])
	if l == nil || !hasLabel(is, l) {
		return errorResponse(http.StatusNotFound, "Label does not exist", c.doc)
	}
	kept := is.labels[:0:0]
	for _, have := range is.labels {
		if have != l {
			kept = append(kept, have)
		}
	}
	is.labels = kept
	return jsonResponse(http.StatusOK, c.s.labelsJSON(c.repo, is.labels))
}

// IssueLabels returns the names of the labels on an issue or pull request,
// sorted.
func (s *Server) IssueLabels(owner, repo string, issue int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil || rp.issues[issue] == nil {
		return nil
	}
	return labelNames(rp.issues[issue].labels)
}

// RepoLabels returns the names of a repository's labels, sorted.
func (s *Server) RepoLabels(owner, repo string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		return nil
	}
	return labelNames(rp.labels)
}

func labelNames(labels []*label) []string {
	sorted := append([]*label(nil), labels...)
	sortLabels(sorted)
	out := make([]string, 0, len(sorted))
	for _, l := range sorted {
		out = append(out, l.name)
	}
	return out
}

// LabelIssue seeds labels on an issue or pull request, creating unknown
// repository labels with the default color, as if a person had added them.
func (s *Server) LabelIssue(owner, repo string, number int, names ...string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, is := s.seededIssue("LabelIssue", owner, repo, number)
	for _, name := range names {
		l := rp.findLabel(name)
		if l == nil {
			l = &label{id: s.newID(), name: name, color: defaultLabelColor}
			rp.labels = append(rp.labels, l)
		}
		if !hasLabel(is, l) {
			is.labels = append(is.labels, l)
		}
	}
}

// UnlabelIssue removes labels from an issue or pull request, as if a person
// had taken them off; a label the issue does not carry is skipped.
func (s *Server) UnlabelIssue(owner, repo string, number int, names ...string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	_, is := s.seededIssue("UnlabelIssue", owner, repo, number)
	for _, name := range names {
		is.labels = slices.DeleteFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, name) })
	}
}
