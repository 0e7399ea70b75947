package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gh "github.com/google/go-github/v66/github"
)

// Label is a repository label.
type Label struct {
	Name        string
	Color       string // six hex digits, no #
	Description string
}

// CreateComment comments on an issue or pull request and returns the
// comment's id.
func (in *Installation) CreateComment(ctx context.Context, owner, repo string, issue int, body string) (int64, error) {
	c, resp, err := in.gh.Issues.CreateComment(ctx, owner, repo, issue, &gh.IssueComment{Body: gh.String(body)})
	if err := classify(fmt.Sprintf("comment on %s/%s#%d", owner, repo, issue), resp, err, in.now()); err != nil {
		return 0, err
	}
	return c.GetID(), nil
}

// EnsureLabel creates a label unless the repository has it already.
func (in *Installation) EnsureLabel(ctx context.Context, owner, repo string, l Label) error {
	_, resp, err := in.gh.Issues.CreateLabel(ctx, owner, repo, &gh.Label{Name: gh.String(l.Name), Color: gh.String(l.Color), Description: gh.String(l.Description)})
	if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
		var ge *gh.ErrorResponse
		if errors.As(err, &ge) {
			for _, e := range ge.Errors {
				if e.Code == "already_exists" {
					return nil
				}
			}
		}
	}
	return classify(fmt.Sprintf("create label %q on %s/%s", l.Name, owner, repo), resp, err, in.now())
}

// AddLabels adds labels to an issue or pull request.
func (in *Installation) AddLabels(ctx context.Context, owner, repo string, issue int, names ...string) error {
	_, resp, err := in.gh.Issues.AddLabelsToIssue(ctx, owner, repo, issue, names)
	return classify(fmt.Sprintf("label %s/%s#%d with %q", owner, repo, issue, names), resp, err, in.now())
}

// RemoveLabel removes a label from an issue; a label that is not there is
// not an error.
func (in *Installation) RemoveLabel(ctx context.Context, owner, repo string, issue int, name string) error {
	resp, err := in.gh.Issues.RemoveLabelForIssue(ctx, owner, repo, issue, name)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil
	}
	return classify(fmt.Sprintf("remove label %q from %s/%s#%d", name, owner, repo, issue), resp, err, in.now())
}

// IssueLabels returns the names of the labels on an issue or pull request
// now, every page of them.
func (in *Installation) IssueLabels(ctx context.Context, owner, repo string, issue int) ([]string, error) {
	opts := &gh.ListOptions{PerPage: 100}
	var out []string
	for {
		labels, resp, err := in.gh.Issues.ListLabelsByIssue(ctx, owner, repo, issue, opts)
		if err := classify(fmt.Sprintf("list the labels of %s/%s#%d", owner, repo, issue), resp, err, in.now()); err != nil {
			return nil, err
		}
		for _, l := range labels {
			out = append(out, l.GetName())
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Issue is an issue as GitHub shows it now.
type Issue struct {
	Open   bool
	Title  string
	Body   string
	Labels []string
}

// Issue reads an issue's state, text and labels now (its first page of
// labels: GitHub lists up to 100 on the issue itself).
func (in *Installation) Issue(ctx context.Context, owner, repo string, number int) (Issue, error) {
	is, resp, err := in.gh.Issues.Get(ctx, owner, repo, number)
	if err := classify(fmt.Sprintf("read %s/%s#%d", owner, repo, number), resp, err, in.now()); err != nil {
		return Issue{}, err
	}
	out := Issue{Open: is.GetState() == "open", Title: is.GetTitle(), Body: is.GetBody()}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out, nil
}
