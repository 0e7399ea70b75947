package github

import (
	"context"
	"fmt"
	"time"

	gh "github.com/google/go-github/v66/github"

	"github.com/testfirst-app/testfirst/checkrun"
)

func output(c checkrun.Run) *gh.CheckRunOutput {
	if c.Title == "" && c.Summary == "" {
		return nil
	}
	return &gh.CheckRunOutput{Title: gh.String(c.Title), Summary: gh.String(c.Summary)}
}

func actions(c checkrun.Run) []*gh.CheckRunAction {
	var out []*gh.CheckRunAction
	for _, a := range c.Actions {
		out = append(out, &gh.CheckRunAction{Label: a.Label, Description: a.Description, Identifier: a.Identifier})
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// CreateCheckRun creates a check run and returns its id.
func (in *Installation) CreateCheckRun(ctx context.Context, owner, repo string, c checkrun.Run) (int64, error) {
	opts := gh.CreateCheckRunOptions{
		Name:       c.Name,
		HeadSHA:    c.HeadSHA,
		Status:     optional(c.Status),
		Conclusion: optional(c.Conclusion),
		DetailsURL: optional(c.DetailsURL),
		ExternalID: optional(c.ExternalID),
		Output:     output(c),
		Actions:    actions(c),
	}
	if c.Status == checkrun.StatusInProgress {
		opts.StartedAt = &gh.Timestamp{Time: in.now()}
	}
	if c.Status == checkrun.StatusCompleted {
		opts.CompletedAt = &gh.Timestamp{Time: in.now()}
	}
	run, resp, err := in.gh.Checks.CreateCheckRun(ctx, owner, repo, opts)
	if err := classify(fmt.Sprintf("create check run %q on %s/%s@%s", c.Name, owner, repo, c.HeadSHA), resp, err, in.now()); err != nil {
		return 0, err
	}
	return run.GetID(), nil
}

// UpdateCheckRun updates check run id.
func (in *Installation) UpdateCheckRun(ctx context.Context, owner, repo string, id int64, c checkrun.Run) error {
	opts := gh.UpdateCheckRunOptions{
		Name:       c.Name,
		Status:     optional(c.Status),
		Conclusion: optional(c.Conclusion),
		DetailsURL: optional(c.DetailsURL),
		ExternalID: optional(c.ExternalID),
		Output:     output(c),
		Actions:    actions(c),
	}
	if c.Status == checkrun.StatusCompleted {
		opts.CompletedAt = &gh.Timestamp{Time: in.now().Truncate(time.Second)}
	}
	_, resp, err := in.gh.Checks.UpdateCheckRun(ctx, owner, repo, id, opts)
	return classify(fmt.Sprintf("update check run %d on %s/%s", id, owner, repo), resp, err, in.now())
}

// CheckRunRef is what testfirst reads back of a check run.
type CheckRunRef struct {
	ID         int64
	Name       string
	ExternalID string
	Status     string
	Conclusion string
	Title      string
}

// CheckRunsFor lists the check runs called name on ref (a SHA or branch),
// every page of them; an empty name lists every check run on ref.
func (in *Installation) CheckRunsFor(ctx context.Context, owner, repo, ref, name string) ([]CheckRunRef, error) {
	opts := &gh.ListCheckRunsOptions{CheckName: optional(name), Filter: gh.String("all"), ListOptions: gh.ListOptions{PerPage: 100}}
	var out []CheckRunRef
	for {
		res, resp, err := in.gh.Checks.ListCheckRunsForRef(ctx, owner, repo, ref, opts)
		if err := classify(fmt.Sprintf("list check runs %q on %s/%s@%s", name, owner, repo, ref), resp, err, in.now()); err != nil {
			return nil, err
		}
		for _, r := range res.CheckRuns {
			out = append(out, CheckRunRef{ID: r.GetID(), Name: r.GetName(), ExternalID: r.GetExternalID(), Status: r.GetStatus(),
				Conclusion: r.GetConclusion(), Title: r.GetOutput().GetTitle()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
