package jobs

import (
	"encoding/json"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// DeliveryArgs is the job of one webhook delivery that needs work. Intake
// leaves Payload out of the job and records it with the delivery; Work
// fills it in before dispatch (see DeliveryWorker.payload). Jobs enqueued
// before payloads moved out of the job carry it inline.
type DeliveryArgs struct {
	Delivery     string          `json:"delivery"`
	Event        string          `json:"event"`
	Action       string          `json:"action"`
	Installation int64           `json:"installation"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

// Kind implements river.JobArgs.
func (DeliveryArgs) Kind() string { return "delivery" }

// SyncArgs brings tickets in line with the store: Ticket 0 means every
// active ticket.
type SyncArgs struct {
	Ticket int64 `json:"ticket,omitempty"`
}

// Kind implements river.JobArgs.
func (SyncArgs) Kind() string { return "sync" }

// InsertOpts implements river.JobArgsWithInsertOpts: a sync waiting to run
// makes another one for the same ticket redundant.
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// VersionCheckArgs is the base check of one version of hidden tests.
type VersionCheckArgs struct {
	Version int64 `json:"version"`
}

// Kind implements river.JobArgs.
func (VersionCheckArgs) Kind() string { return "version_check" }

// InsertOpts implements river.JobArgsWithInsertOpts: the check runs in the
// sandbox queue, once per version.
func (VersionCheckArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSandbox, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}}}
}

// GradeArgs is the job that grades one pull request head.
type GradeArgs struct {
	Grade int64 `json:"grade"`
}

// Kind implements river.JobArgs.
func (GradeArgs) Kind() string { return "grade" }

// QueueSandbox is the job queue of everything that runs the sealed
// sandbox: grades and base checks. It has its own workers, so deliveries
// and syncs never wait behind a grade.
const QueueSandbox = "sandbox"

// gradeMaxAttempts: River retries an engine or GitHub failure a few
// times, then the check run says the grade failed.
const gradeMaxAttempts = 5
