package jobs

import (
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// toGitHub hands a check run the pipeline wrote to GitHub as it is.
func toGitHub(cr pipeline.CheckRun) github.CheckRun {
	out := github.CheckRun{Name: cr.Name, HeadSHA: cr.HeadSHA, Status: cr.Status, Conclusion: cr.Conclusion, Title: cr.Title,
		Summary: cr.Summary, DetailsURL: cr.DetailsURL, ExternalID: cr.ExternalID}
	for _, a := range cr.Actions {
		out.Actions = append(out.Actions, github.CheckAction(a))
	}
	return out
}
