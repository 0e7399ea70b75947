package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Check-run limits GitHub enforces.
const (
	maxOutputLength        = 65535
	maxActions             = 3
	maxActionLabel         = 20
	maxActionIdentifier    = 20
	maxActionDescription   = 40
	maxAnnotationsPerCall  = 50
	appExternalURL         = "https://testfirst.example"
	checkRunStatusQueued   = "queued"
	checkRunStatusProgress = "in_progress"
	checkRunStatusDone     = "completed"
)

// appSettableConclusions are the conclusions an app may set.
var appSettableConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}

// CheckRun is a check run as GitHub stores it.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string // "queued", "in_progress" or "completed"
	Conclusion  string // "" until completed
	Title       string // output.title
	Summary     string // output.summary
	Text        string // output.text
	DetailsURL  string // the app's homepage when the app gave none, as on GitHub
	ExternalID  string
	Actions     []CheckRunAction
	Annotations []Annotation // every annotation sent, in order
	StartedAt   time.Time
	CompletedAt time.Time // zero until completed
}

// CheckRunAction is a requested-action button of a check run.
type CheckRunAction struct {
	Label       string
	Description string
	Identifier  string
}

// Annotation is one check-run annotation.
type Annotation struct {
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int
	EndColumn   int
	Level       string // "notice", "warning" or "failure"
	Message     string
	Title       string
	RawDetails  string
}

// checkRun is a stored check run and its check suite.
type checkRun struct {
	CheckRun
	suite int64
}

// checkRunRequest is the body of create and update.
type checkRunRequest struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	DetailsURL  *string `json:"details_url"`
	ExternalID  *string `json:"external_id"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title       *string             `json:"title"`
		Summary     *string             `json:"summary"`
		Text        *string             `json:"text"`
		Annotations []annotationRequest `json:"annotations"`
	} `json:"output"`
	Actions *[]struct {
		Label       *string `json:"label"`
		Description *string `json:"description"`
		Identifier  *string `json:"identifier"`
	} `json:"actions"`
}

type annotationRequest struct {
	Path            *string `json:"path"`
	StartLine       *int    `json:"start_line"`
	EndLine         *int    `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel *string `json:"annotation_level"`
	Message         *string `json:"message"`
	Title           *string `json:"title"`
	RawDetails      *string `json:"raw_details"`
}

// createCheckRun serves POST /repos/{owner}/{repo}/check-runs.
func (c *call) createCheckRun() *response {
	var req checkRunRequest
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if req.Name == nil || *req.Name == "" {
		return notSupplied(c.doc, "name")
	}
	if req.HeadSHA == nil || *req.HeadSHA == "" {
		return notSupplied(c.doc, "head_sha")
	}
	if req.Output != nil && req.Output.Title == nil {
		return notSupplied(c.doc, "title")
	}
	if resp := c.validateCheckRun(&req); resp != nil {
		return resp
	}
	sha := *req.HeadSHA
	if !c.repo.commits[sha] {
		return errorResponse(http.StatusUnprocessableEntity, "No commit found for SHA: "+sha, c.doc)
	}
	now := c.s.now()
	suite, ok := c.repo.checkSuites[sha]
	if !ok {
		suite = c.s.newID()
		c.repo.checkSuites[sha] = suite
	}
	cr := &checkRun{suite: suite, CheckRun: CheckRun{
		ID:         c.s.newID(),
		Name:       *req.Name,
		HeadSHA:    sha,
		Status:     checkRunStatusQueued,
		DetailsURL: appExternalURL,
		StartedAt:  now,
	}}
	c.applyCheckRun(cr, &req, now)
	c.repo.checkRuns = append(c.repo.checkRuns, cr)
	return jsonResponse(http.StatusCreated, c.s.checkRunJSON(c.repo, cr))
}

// updateCheckRun serves PATCH /repos/{owner}/{repo}/check-runs/{id}. Fields
// left out keep their value; an empty name (go-github always sends "name")
// keeps the name.
func (c *call) updateCheckRun() *response {
	cr := c.findCheckRun()
	if cr == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	var req checkRunRequest
	if resp := decodeBody(c.body, c.doc, &req); resp != nil {
		return resp
	}
	if resp := c.validateCheckRun(&req); resp != nil {
		return resp
	}
	c.applyCheckRun(cr, &req, c.s.now())
	return jsonResponse(http.StatusOK, c.s.checkRunJSON(c.repo, cr))
}

// validateCheckRun applies GitHub's schema and model rules shared by create
// and update.
func (c *call) validateCheckRun(req *checkRunRequest) *response {
	if req.Status != nil {
		switch *req.Status {
		case checkRunStatusQueued, checkRunStatusProgress, checkRunStatusDone:
		case "waiting", "requested", "pending":
			return validationFailed(c.doc, fieldError{Resource: "CheckRun", Code: "custom", Field: "status", Message: "status " + *req.Status + " can only be set by GitHub Actions"})
		default:
			return invalidRequest(c.doc, fmt.Sprintf(`For 'properties/status', %q is not one of ["queued", "in_progress", "completed", "waiting", "requested", "pending"].`, *req.Status))
		}
	}
	if req.Conclusion != nil {
		switch {
		case *req.Conclusion == "stale":
			return validationFailed(c.doc, fieldError{Resource: "CheckRun", Code: "custom", Field: "conclusion", Message: "conclusion stale can only be set by GitHub"})
		case !slices.Contains(appSettableConclusions, *req.Conclusion):
			return invalidRequest(c.doc, fmt.Sprintf(`For 'properties/conclusion', %q is not one of ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"].`, *req.Conclusion))
		}
	}
	if req.Status != nil && *req.Status == checkRunStatusDone && req.Conclusion == nil {
		return notSupplied(c.doc, "conclusion")
	}
	for _, field := range []struct {
		name  string
		value *string
	}{{"started_at", req.StartedAt}, {"completed_at", req.CompletedAt}} {
		if field.value != nil {
			if _, err := time.Parse(time.RFC3339, *field.value); err != nil {
				return invalidRequest(c.doc, fmt.Sprintf("For 'properties/%s', %q is not a date-time.", field.name, *field.value))
			}
		}
	}
	if out := req.Output; out != nil {
		if out.Summary == nil {
			return notSupplied(c.doc, "summary")
		}
		for _, f := range []struct {
			name  string
			value *string
		}{{"summary", out.Summary}, {"text", out.Text}} {
			if resp := checkOutputLength(c.doc, f.name, f.value); resp != nil {
				return resp
			}
		}
		if n := len(out.Annotations); n > maxAnnotationsPerCall {
			return invalidRequest(c.doc, fmt.Sprintf("Only %d items are allowed; %d were supplied.", maxAnnotationsPerCall, n))
		}
		for _, a := range out.Annotations {
			if resp := checkAnnotation(c.doc, a); resp != nil {
				return resp
			}
		}
	}
	if req.Actions != nil {
		if n := len(*req.Actions); n > maxActions {
			return invalidRequest(c.doc, fmt.Sprintf("Only %d items are allowed; %d were supplied.", maxActions, n))
		}
		for _, a := range *req.Actions {
			for _, f := range []struct {
				name  string
				value *string
				max   int
			}{{"label", a.Label, maxActionLabel}, {"description", a.Description, maxActionDescription}, {"identifier", a.Identifier, maxActionIdentifier}} {
				if f.value == nil {
					return notSupplied(c.doc, f.name)
				}
				if n := utf8.RuneCountInString(*f.value); n > f.max {
					return tooLong(c.doc, f.max, n)
				}
			}
		}
	}
	return nil
}

// checkOutputLength enforces GitHub's two limits on summary and text: the
// schema's 65535 characters, then the model's 65535 bytes.
func checkOutputLength(doc, field string, value *string) *response {
	if value == nil {
		return nil
	}
	if n := utf8.RuneCountInString(*value); n > maxOutputLength {
		return tooLong(doc, maxOutputLength, n)
	}
	if len(*value) > maxOutputLength {
		return validationFailed(doc, fieldError{Resource: "CheckRun", Code: "custom", Field: field, Message: fmt.Sprintf("%s exceeds a maximum bytesize of %d", field, maxOutputLength)})
	}
	return nil
}

// checkAnnotation enforces an annotation's required fields and level.
func checkAnnotation(doc string, a annotationRequest) *response {
	switch {
	case a.Path == nil:
		return notSupplied(doc, "path")
	case a.StartLine == nil:
		return notSupplied(doc, "start_line")
	case a.EndLine == nil:
		return notSupplied(doc, "end_line")
	case a.AnnotationLevel == nil:
		return notSupplied(doc, "annotation_level")
	case a.Message == nil:
		return notSupplied(doc, "message")
	}
	if !slices.Contains([]string{"notice", "warning", "failure"}, *a.AnnotationLevel) {
		return invalidRequest(doc, fmt.Sprintf(`For 'properties/annotation_level', %q is not one of ["notice", "warning", "failure"].`, *a.AnnotationLevel))
	}
	return nil
}

// applyCheckRun stores a validated request. A conclusion completes the run
// (GitHub sets status "completed" itself) and stamps completed_at if the app
// gave none; moving back to queued or in_progress clears the conclusion.
func (c *call) applyCheckRun(cr *checkRun, req *checkRunRequest, now time.Time) {
	if req.Name != nil && *req.Name != "" {
		cr.Name = *req.Name
	}
	if req.DetailsURL != nil {
		cr.DetailsURL = *req.DetailsURL
	}
	if req.ExternalID != nil {
		cr.ExternalID = *req.ExternalID
	}
	if req.StartedAt != nil {
		cr.StartedAt, _ = time.Parse(time.RFC3339, *req.StartedAt)
		cr.StartedAt = cr.StartedAt.UTC()
	}
	if req.Status != nil {
		cr.Status = *req.Status
		if cr.Status != checkRunStatusDone {
			cr.Conclusion = ""
			cr.CompletedAt = time.Time{}
		}
	}
	if req.CompletedAt != nil {
		cr.CompletedAt, _ = time.Parse(time.RFC3339, *req.CompletedAt)
		cr.CompletedAt = cr.CompletedAt.UTC()
	}
	if req.Conclusion != nil {
		cr.Conclusion = *req.Conclusion
		cr.Status = checkRunStatusDone
		if cr.CompletedAt.IsZero() {
			cr.CompletedAt = now
		}
	}
	if out := req.Output; out != nil {
		if out.Title != nil {
			cr.Title = *out.Title
		}
		cr.Summary = *out.Summary
		if out.Text != nil {
			cr.Text = *out.Text
		}
		for _, a := range out.Annotations {
			cr.Annotations = append(cr.Annotations, Annotation{
				Path: *a.Path, StartLine: *a.StartLine, EndLine: *a.EndLine,
				StartColumn: deref(a.StartColumn), EndColumn: deref(a.EndColumn),
				Level: *a.AnnotationLevel, Message: *a.Message,
				Title: deref(a.Title), RawDetails: deref(a.RawDetails),
			})
		}
	}
	if req.Actions != nil {
		cr.Actions = nil
		for _, a := range *req.Actions {
			cr.Actions = append(cr.Actions, CheckRunAction{Label: *a.Label, Description: *a.Description, Identifier: *a.Identifier})
		}
	}
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// findCheckRun finds the check run named by the {id} parameter in the repo.
func (c *call) findCheckRun() *checkRun {
	id, err := strconv.ParseInt(c.params["id"], 10, 64)
	if err != nil {
		return nil
	}
	for _, cr := range c.repo.checkRuns {
		if cr.ID == id {
			return cr
		}
	}
	return nil
}

// getCheckRun serves GET /repos/{owner}/{repo}/check-runs/{id}.
func (c *call) getCheckRun() *response {
	cr := c.findCheckRun()
	if cr == nil {
		return errorResponse(http.StatusNotFound, "Not Found", c.doc)
	}
	return jsonResponse(http.StatusOK, c.s.checkRunJSON(c.repo, cr))
}

// listCheckRunsForRef serves GET /repos/{owner}/{repo}/commits/{ref}/check-runs
// with check_name, status, app_id and filter (latest by default: the newest
// run of each name), newest first.
func (c *call) listCheckRunsForRef() *response {
	ref := c.params["ref"]
	cm := c.s.resolveRef(c.repo, ref)
	if cm == nil {
		return errorResponse(http.StatusUnprocessableEntity, "No commit found for SHA: "+ref, c.doc)
	}
	q := c.r.URL.Query()
	filter := q.Get("filter")
	if filter == "" {
		filter = "latest"
	}
	if filter != "latest" && filter != "all" {
		return invalidRequest(c.doc, fmt.Sprintf(`For 'filter', %q is not one of ["latest", "all"].`, filter))
	}
	var runs []*checkRun
	seen := map[string]bool{}
	for i := len(c.repo.checkRuns) - 1; i >= 0; i-- {
		cr := c.repo.checkRuns[i]
		switch {
		case cr.HeadSHA != cm.sha,
			q.Get("check_name") != "" && cr.Name != q.Get("check_name"),
			q.Get("status") != "" && cr.Status != q.Get("status"),
			q.Get("app_id") != "" && q.Get("app_id") != strconv.FormatInt(fakeAppID, 10),
			filter == "latest" && seen[cr.Name]:
			continue
		}
		seen[cr.Name] = true
		runs = append(runs, cr)
	}
	start, end, link := c.page(len(runs))
	out := make([]obj, 0, end-start)
	for _, cr := range runs[start:end] {
		out = append(out, c.s.checkRunJSON(c.repo, cr))
	}
	return withLink(jsonResponse(http.StatusOK, obj{"total_count": len(runs), "check_runs": out}), link)
}

// checkRunJSON is a check run as GitHub shows it.
func (s *Server) checkRunJSON(rp *repository, cr *checkRun) obj {
	id := strconv.FormatInt(cr.ID, 10)
	actions := []obj{}
	for _, a := range cr.Actions {
		actions = append(actions, obj{"label": a.Label, "description": a.Description, "identifier": a.Identifier})
	}
	prs := []obj{}
	for _, is := range sortedIssues(rp) {
		if pr := is.pull; pr != nil && pr.headSHA == cr.HeadSHA && strings.EqualFold(pr.headRepo, rp.fullName()) {
			prs = append(prs, s.minimalPullJSON(rp, is))
		}
	}
	return obj{
		"id":           cr.ID,
		"node_id":      nodeID("CR_", cr.ID),
		"head_sha":     cr.HeadSHA,
		"external_id":  cr.ExternalID,
		"url":          s.repoURL(rp, "check-runs/"+id),
		"html_url":     "https://github.com/" + rp.fullName() + "/runs/" + id,
		"details_url":  cr.DetailsURL,
		"status":       cr.Status,
		"conclusion":   strOrNil(cr.Conclusion),
		"started_at":   tsOrNil(cr.StartedAt),
		"completed_at": tsOrNil(cr.CompletedAt),
		"name":         cr.Name,
		"output": obj{
			"title":             strOrNil(cr.Title),
			"summary":           strOrNil(cr.Summary),
			"text":              strOrNil(cr.Text),
			"annotations_count": len(cr.Annotations),
			"annotations_url":   s.repoURL(rp, "check-runs/"+id+"/annotations"),
		},
		"check_suite":   obj{"id": cr.suite},
		"app":           s.appJSON(),
		"actions":       actions,
		"pull_requests": prs,
	}
}

// CheckRuns returns the check runs of a repository in creation order.
func (s *Server) CheckRuns(owner, repo string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoKey(owner, repo)]
	if rp == nil {
		return nil
	}
	out := make([]CheckRun, 0, len(rp.checkRuns))
	for _, cr := range rp.checkRuns {
		run := cr.CheckRun
		run.Actions = slices.Clone(run.Actions)
		run.Annotations = slices.Clone(run.Annotations)
		out = append(out, run)
	}
	return out
}

// sortedIssues lists a repository's issues and pulls by number.
func sortedIssues(rp *repository) []*issue {
	out := make([]*issue, 0, len(rp.issues))
	for _, is := range rp.issues {
		out = append(out, is)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number < out[j].number })
	return out
}
