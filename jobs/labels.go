package jobs

import "github.com/testfirst-app/testfirst/github"

// The labels testfirst puts on a ticket's issue.
const (
	approvedLabel = "test-first:approved"
	pairLabel     = "lane:pair"
)

// Labels the app creates in every repository it is given.
var appLabels = []github.Label{
	{Name: "test-first", Color: "1d76db", Description: "Write hidden acceptance tests for this issue first"},
	{Name: approvedLabel, Color: "0e8a16", Description: "Hidden tests approved: implementation may start"},
	{Name: pairLabel, Color: "d93f0b", Description: "Hidden tests were rejected too often: pair on this one"},
}
