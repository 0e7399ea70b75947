package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/pipeline"
)

// Cards is what the approval card's pages need from the app. Every method
// takes the signed-in login and returns an error wrapping ErrNotFound both
// when the thing does not exist and when the viewer may not see it, so a
// page never confirms that a ticket exists.
type Cards interface {
	// Tickets lists the open tickets viewer can act on, newest first.
	Tickets(ctx context.Context, viewer string) ([]TicketItem, error)
	// ConfigProblems lists the repositories viewer administers (admin or
	// maintain) whose .github/testfirst.yml is broken now and was said so
	// on an issue.
	ConfigProblems(ctx context.Context, viewer string) ([]ConfigProblem, error)
	// Card returns version k of the ticket's hidden tests as the card
	// shows them; k 0 is the newest version. A ticket without versions
	// gives a page whose Version is nil.
	Card(ctx context.Context, viewer string, t TicketRef, k int) (*CardPage, error)
	// Approve signs version k for viewer, bound to digest. It returns a
	// *Refusal, saying why, when the version is not the newest, the digest
	// is not its digest, it is decided, not ready, invalid, or viewer has
	// signed it.
	Approve(ctx context.Context, viewer string, t TicketRef, k int, digest string) (Decided, error)
	// Reject rejects version k with a reason. It returns a *Refusal when
	// the reason is empty, the version is not the newest, the digest is
	// not its digest or it is decided.
	Reject(ctx context.Context, viewer string, t TicketRef, k int, digest, reason string) (Decided, error)
	// Grade returns a grade of a pull request with its full output.
	Grade(ctx context.Context, viewer string, id int64) (*GradePage, error)
	// Audit returns the ticket's audit events, newest first, those that
	// f selects; ErrNotFound for a ticket viewer may not see.
	Audit(ctx context.Context, viewer string, t TicketRef, f AuditFilter) (*AuditPage, error)
	// UploadForm returns what the upload page of the ticket shows: the
	// issue's criteria to map. ErrNotFound for a ticket viewer may not
	// see; a *Refusal for one who may not upload.
	UploadForm(ctx context.Context, viewer string, t TicketRef) (*UploadPage, error)
	// Upload stores the uploaded tests as the ticket's next version, as
	// tests push does, and returns its number. A *Refusal says what to fix
	// in the upload.
	Upload(ctx context.Context, viewer string, t TicketRef, u Upload) (int, error)
	// RepoAudit returns the audit events of every ticket of a repository,
	// for its admins; ErrNotFound for anyone else.
	RepoAudit(ctx context.Context, viewer, owner, repo string, f AuditFilter) (*AuditPage, error)
	// TestsArchive returns version k's tests as a zip, canary lines taken
	// out, with the reference patch, for those who may see its card;
	// ErrNotFound for anyone else.
	TestsArchive(ctx context.Context, viewer string, t TicketRef, k int) ([]byte, error)
	// Summary returns what anyone who can read the repository may know of
	// the ticket (what its check runs and comments say); ErrNotFound for
	// anyone else. The card falls back to it for a viewer it refuses.
	Summary(ctx context.Context, viewer string, t TicketRef) (*TicketSummary, error)
}

// TicketSummary is a ticket as anyone who can read its repository sees
// it, the implementer of a pull request among them: where it stands, what
// its criteria ask, the test ids of its approved version and the grades of
// its open pull requests. Never a test body, a reference patch, a
// rejection's reason or a runner's output.
type TicketSummary struct {
	Ticket TicketInfo
	// Waiting says what the ticket waits for, when its pull requests are
	// not graded ("v2 awaits review"); empty once a version is approved.
	Waiting string
	// Approved is the version pull requests are graded against, if any.
	Approved *ApprovedSummary
	// Criteria are the issue's acceptance criteria, each with the
	// approved version's tests that cover it.
	Criteria []Criterion
	Versions []HistoryItem
	// Newest is the newest version's number: a grade against an older one
	// is of replaced tests.
	Newest int
	Pulls  []PullSummary
	// PastedIn are the places a hidden test of the ticket was seen
	// pasted (never what matched): every grade is contaminated.
	PastedIn []PastedPlace
}

// PastedPlace is where a hidden test was seen pasted.
type PastedPlace struct {
	SeenIn, URL string
}

// ApprovedSummary is the approved version as the implementer knows it.
type ApprovedSummary struct {
	Number int
	Digest string
	By     string
	// Tests are its test ids, each with the criteria it covers.
	Tests []TestInfo
}

// PullSummary is an open pull request that closes the ticket and its
// newest grade of the ticket, if any.
type PullSummary struct {
	Number int
	URL    string
	Head   string
	// Grade is the grade's id (0: none yet), with what it said.
	Grade          int64
	Version        int
	State, Verdict string
	Passed, Total  int
}

// AuditFilter selects audit events: by kind (a prefix such as "version."
// or a whole kind) and by actor; empty selects all.
type AuditFilter struct{ Kind, Actor string }

// AuditPage is an audit log as the card shows it.
type AuditPage struct {
	// Owner and Repo name the repository; Ticket is set for a ticket's
	// log, nil for a repository's.
	Owner, Repo string
	Ticket      *TicketInfo
	Filter      AuditFilter
	// Kinds and Actors are every kind and actor in the log, for the
	// filter's choices.
	Kinds, Actors []string
	Events        []AuditRow
	// Total is how many events the log holds before filtering.
	Total int
	// RepoAudit is the repository's log, linked from a ticket's for the
	// repository's admins; empty for others.
	RepoAudit string
}

// AuditRow is one audit event.
type AuditRow struct {
	At     time.Time
	Actor  string
	Kind   string
	Ticket TicketRef
	// Facts are the event's details as name and value, in name order.
	Facts []AuditFact
	// Links lead to what the event concerns: the ticket, a version, a
	// grade, a pull request.
	Links []AuditLink
}

// AuditFact is one detail of an audit event.
type AuditFact struct{ Name, Value string }

// AuditLink is a link from an audit event.
type AuditLink struct{ Text, URL string }

// SignIn is GitHub's OAuth web flow as the login pages use it; the
// github package's OAuthApp implements it.
type SignIn interface {
	// AuthorizeURL is GitHub's sign-in page, which sends the user back to
	// redirectURI with a code and state.
	AuthorizeURL(state, redirectURI string) string
	// SignIn trades the code for the user it was issued to. It fails when
	// GitHub refuses the code (used, expired) or does not answer.
	SignIn(ctx context.Context, code, redirectURI string) (github.User, error)
}

// ErrNotFound is what Cards returns for anything the viewer may not see.
var ErrNotFound = errors.New("not found")

// ErrNotShown wraps ErrNotFound: the ticket exists, and the card is not the
// viewer's to see. The card page then offers the ticket's Summary, which
// says the same "not found" to anyone who cannot read the repository.
var ErrNotShown = fmt.Errorf("the card is not shown to this viewer: %w", ErrNotFound)

// Refusal is a decision the card does not take, with what to do instead.
// It is shown on the card.
type Refusal struct{ Message string }

func (r *Refusal) Error() string { return r.Message }

// Refusef makes a *Refusal.
func Refusef(format string, args ...any) *Refusal {
	return &Refusal{Message: fmt.Sprintf(format, args...)}
}

// Decided says what a decision did.
type Decided string

// What a decision did, shown on the card after it.
const (
	// DecidedApproved: the version is approved and will be graded against.
	DecidedApproved Decided = "approved"
	// DecidedSigned: the viewer signed; policy enforce waits for a second
	// approver.
	DecidedSigned Decided = "signed"
	// DecidedRejected: the version is rejected and goes back to its writer.
	DecidedRejected Decided = "rejected"
)

// TicketRef names a ticket: owner/repo#issue.
type TicketRef struct {
	Owner, Repo string
	Issue       int
}

func (t TicketRef) String() string { return fmt.Sprintf("%s/%s#%d", t.Owner, t.Repo, t.Issue) }

// Path is the ticket's card.
func (t TicketRef) Path() string { return pipeline.TicketPath(t.Owner, t.Repo, t.Issue) }

// VersionPath is the card of version k.
func (t TicketRef) VersionPath(k int) string { return pipeline.CardPath(t.Owner, t.Repo, t.Issue, k) }

// ConfigProblem is a repository whose config file is broken: what is
// wrong and the issue that was told.
type ConfigProblem struct {
	Owner, Repo string
	Error       string
	Issue       int
	IssueURL    string
}

// TicketItem is one line of the ticket list.
type TicketItem struct {
	Ref       TicketRef
	Title     string
	Requester string
	State     string
	// Newest is the newest version's number and state; 0 and "" before
	// the first.
	Newest      int
	NewestState string
	// Waiting says what the ticket waits for; OnViewer is true when that
	// is the viewer.
	Waiting  string
	OnViewer bool
	Created  time.Time
}

// TicketInfo is the ticket a card or grade belongs to.
type TicketInfo struct {
	Ref       TicketRef
	Title     string
	Requester string
	State     string
	IssueURL  string
}

// CardPage is one version of a ticket's hidden tests as the card shows it:
// nothing in it holds a canaried body.
type CardPage struct {
	Ticket TicketInfo
	// Version is the version shown; nil while the ticket has none.
	Version *VersionInfo
	// Newest is the newest version's number.
	Newest int

	// Criteria are the issue's acceptance criteria in order, with the
	// tests the writer mapped to each; Uncovered those without any;
	// Unlisted the criteria the writer named that the issue does not
	// list.
	Criteria  []Criterion
	Uncovered []Criterion
	Unlisted  []Criterion
	// NoCriteriaMap is true when the version came without a criteria map:
	// coverage is unknown, not missing, and Uncovered is empty.
	NoCriteriaMap bool

	// Tests are the hidden test ids as the implementer sees them, known
	// once the base check ran (TestsKnown).
	Tests      []TestInfo
	TestsKnown bool
	Base       *BaseResult
	Reference  *ReferenceResult
	// Twins is how many hidden tests have a twin that can catch a bent
	// runner at grade time; nil before the base check made them.
	Twins *TwinsResult
	// Files are the test files, canary masked.
	Files          []FileView
	ReferencePatch string

	Policy      string
	PolicyError string
	Signatures  []Signature
	// CanDecide is true when the viewer may approve this version now;
	// Blocked says why not, when there is a reason to say.
	CanDecide bool
	CanReject bool
	// CanUpload is whether the viewer may upload the next version.
	CanUpload bool
	Blocked   string

	History       []HistoryItem
	Rejections    int
	MaxRejections int
	Grades        []GradeItem
	// Writer is the agent run that wrote this version, nil for a version
	// a person pushed; AgentWarnings what the ticket's agents make
	// doubtful (the same warnings its grades carry).
	Writer *AgentRunView
	// WriterAtWork is the writer agent's run under way, shown while the
	// ticket has no version; nil when no writer is at work.
	WriterAtWork  *AgentRunView
	AgentWarnings []string
	// Pasted are the ticket's hidden tests seen pasted without their
	// canary, with what matched: shown on the card, to its requester and
	// writers, only.
	Pasted []PastedView
}

// PastedView is a hidden test seen pasted, without its canary, into text
// testfirst read: where, by whom, and what of the hidden tests matched.
type PastedView struct {
	SeenIn, URL, Author string
	Version             int
	HiddenFile, Test    string
	// Matched of Of the test's new shingles, on lines FirstLine to
	// LastLine of the text.
	Matched, Of, FirstLine, LastLine int
	SeenAt                           time.Time
}

// VersionInfo is a version's metadata.
type VersionInfo struct {
	Number  int
	Digest  string
	State   string
	Author  string
	Created time.Time
	// ReadyAt is when the card was announced ready; zero before.
	ReadyAt      time.Time
	HasReference bool
	Decision     *DecisionInfo
	// Invalid says why the base check found the version not a valid
	// task; empty when it is valid or not checked yet.
	Invalid []string
}

// DecisionInfo is a version's approval or rejection.
type DecisionInfo struct {
	Approved bool
	By       string
	At       time.Time
	Reason   string
}

// Criterion is one acceptance criterion and the tests that cover it.
type Criterion struct {
	ID   string
	Text string
	// Tests are the ids mapped to it; Missing those of them the base
	// check did not find among the hidden tests.
	Tests   []string
	Missing []string
}

// TestInfo is one hidden test id.
type TestInfo struct {
	ID string
	// Guard is true when the test passes on the base already.
	Guard    bool
	Criteria []string
}

// BaseResult is the base check: the hidden tests run on the base commit.
type BaseResult struct {
	Guards  []string
	AllPass bool
	Passed  int
	Total   int
	Error   string
	// Flaky are the tests whose outcome changed between two runs of the
	// same tree.
	Flaky []string
	// Skips are the tests that skip in the grader's environment (on the
	// base, and with the reference patch): graded, they count for nothing.
	Skips []string
	// Broken says which hidden tests no tree can run (a missing helper or
	// fixture); Note what happened to a base run that hung or crashed.
	Broken []string
	Note   string
	// Context lists the base's own test support files the runs lay beside
	// the hidden tests (helpers, conftest files, data); ContextLeftOut
	// those left out for size.
	Context        []string
	ContextLeftOut []string
}

// TwinsResult is the twin coverage of a version: each twinned test runs
// beside a copy whose expectation is changed, and a grade where both pass
// is tampering. Untwinned tests lack that check, and say why.
type TwinsResult struct {
	Twinned     int
	Of          int
	Untwinnable int
	// Untwinned are up to a few of the tests without a twin, with why.
	Untwinned []TwinGapView
	// Invalid counts twins the reference patch passed: they are dropped.
	Invalid int
}

// TwinGapView is one test without a twin.
type TwinGapView struct {
	ID  string
	Why string
}

// ReferenceResult is the reference check: the hidden tests with the
// writer's reference patch applied.
type ReferenceResult struct {
	AllPass bool
	Failed  []string
	Passed  int
	Total   int
	Error   string
	// Mutation is how many changes to the reference the tests notice;
	// nil when it was not measured.
	Mutation *MutationResult
}

// MutationResult is the mutation check: small changes to the lines the
// reference patch adds, and which of them no hidden test notices.
type MutationResult struct {
	// Summary is the sentence the card leads with: "these tests miss 4 of
	// 23 changes to the reference".
	Summary string
	// Mutants counts the changes tried and judged; NotCounted those that
	// did not import or did not run in time.
	Mutants    int
	Killed     int
	NotCounted int
	Survivors  []SurvivorView
	Error      string
}

// SurvivorView is one change to the reference no hidden test noticed,
// shown as a one-line diff.
type SurvivorView struct {
	File   string
	Line   int
	Change string
	Before string
	After  string
}

// FileView is one test file, canary masked.
type FileView struct {
	Path string
	Text string
	Size int
}

// Signature is one approver's signature on a version.
type Signature struct {
	Login         string
	At            time.Time
	ReviewSeconds int64
	Fast          bool
}

// HistoryItem is one version of the ticket, for the history list.
type HistoryItem struct {
	Number int
	State  string
	// Invalid is set on a pending version the base check found not a
	// valid task.
	Invalid  bool
	Author   string
	Created  time.Time
	Digest   string
	Decision *DecisionInfo
}

// GradeItem is one grade of the ticket, for the card's list.
type GradeItem struct {
	ID      int64
	PR      int
	HeadSHA string
	Version int
	State   string
	Verdict string
	Trust   string
	Passed  int
	Total   int
	Created time.Time
}

// GradePage is one grade of a pull request with everything the grader
// reported, runner output included: the only page that shows output.
type GradePage struct {
	ID       int64
	Ticket   TicketInfo
	PR       int
	PRURL    string
	HeadSHA  string
	Digest   string
	Version  int
	State    string
	Started  time.Time
	Finished time.Time
	// Report is nil until the grade finished.
	Report *ReportView
	// Full is whether the viewer sees the runner's output (the requester,
	// maintainers, admins); everyone else who can read the repository
	// sees what the check run says.
	Full bool
	// CardLink is whether the viewer may open the ticket's page: its card,
	// or for a reader of the repository its summary.
	CardLink bool
	// AgentRuns are the ticket's implementer runs, oldest first;
	// AgentWarnings what the ticket's agents make doubtful.
	AgentRuns     []AgentRunView
	AgentWarnings []string
	// Approval is how the graded version was signed and how strong its
	// tests measured, for reviewers who cannot open the card; nil when
	// unknown.
	Approval *ApprovalView
	// Attempts are what the grade said before it was graded again,
	// oldest first.
	Attempts []AttemptView
	// Reproduce are the commands that grade the head again on one's own
	// machine with the version's tests (TestsArchive) and the grade's
	// bounds; empty for a viewer who may not see the tests.
	Reproduce string
	// TestsArchive is where the version's tests are, with Reproduce.
	TestsArchive string
	// Regressions is the grade's regression run; nil when it had none.
	Regressions *RegressionsView
}

// RegressionsView is a grade's regression run as its page shows it: what
// its check run says, and for the requester the pull request's run's
// output.
type RegressionsView struct {
	State string
	// Report is nil until the run finished.
	Report *RegressionsReport
	// Output is empty for a viewer who may not see it.
	Output string
}

// RegressionsReport is what a finished regression run found.
type RegressionsReport struct {
	Verdict       string
	Reasons       []string
	Base, PR      SuiteCountsView
	Regressed     []string
	Changed       []string
	Flaky         []string
	FailingOnBase int
}

// SuiteCountsView counts one run of a repository's suite.
type SuiteCountsView struct {
	Total, Passed, Failed, Errors, Skipped int
}

// AttemptView is an earlier attempt of a grade.
type AttemptView struct {
	Attempt        int
	State, Verdict string
	Trust          string
	Passed, Total  int
	Finished       time.Time
}

// ApprovalView is the approved version's signatures and strength, in
// counts: nothing of the tests or of the reference patch.
type ApprovalView struct {
	Signers          []Signature
	Tests, Guards    int
	Mutation         string
	Twinned, TwinsOf int
}

// ReportView is a grade's report.
type ReportView struct {
	Verdict string
	Trust   string
	// TrustMeans says in a sentence what the trust level means.
	TrustMeans string
	// Sealing says, for a split grade, how many passing tests were
	// decided outside the code under test (report.SealingLine).
	Sealing       string
	Reasons       []string
	Passed        int
	Failed        int
	Errors        int
	Skipped       int
	Total         int
	Tests         []TestOutcome
	Criteria      []CriterionScore
	TamperSignals []PathReason
	// TamperContext are what would be tamper signals in files the pull
	// request left as the base has them: context, not signals.
	TamperContext []PathReason
	// SkippedOnBase are the hidden tests that skipped here and on the base.
	SkippedOnBase []string
	// Environment is the grade's dependency environment in one line.
	Environment string
	// CaseNames are the real ids of parametrized cases the check run names
	// by number ("test_x[case-1]"), for those who see the output only: the
	// ids quote the hidden tests' parameters.
	CaseNames     []PathReason
	TouchedTests  []string
	Contaminated  bool
	Contamination []PathReason
	Sentinels     string
	UIDSplit      bool
	Image         string
	TestsDigest   string
	RepoDigest    string
	Runner        string
	ExitCode      int
	Duration      time.Duration
	// Output is the runner's output, canaries masked.
	Output          string
	OutputTruncated bool
}

// TestOutcome is one hidden test's outcome.
type TestOutcome struct {
	ID       string
	Outcome  string
	Criteria []string
}

// CriterionScore is how many of a criterion's tests passed.
type CriterionScore struct {
	ID string
	// Text is what the issue says the criterion is, when it lists it.
	Text   string
	Passed int
	Total  int
}

// PathReason is a file and what was found in it.
type PathReason struct {
	Path   string
	Reason string
}

// UploadPage is the upload page of a ticket.
type UploadPage struct {
	Ticket TicketInfo
	// Criteria are the issue's acceptance criteria, to map to test ids.
	Criteria []Criterion
	// Newest is the ticket's newest version, 0 before the first.
	Newest int
	// Mapped is the newest version's criteria map, by criterion id, as the
	// form's fields show it: the next version starts from it.
	Mapped map[string]string
	// HasReference says the newest version has a reference patch, which
	// the next version keeps unless another is chosen or keeping it is
	// unticked.
	HasReference bool
}

// Upload is what a person uploads as a version: test files (or one
// archive, already unpacked), the criteria map and a reference patch.
type Upload struct {
	Files     []UploadFile
	Criteria  map[string][]string
	Reference []byte
	// KeepReferenceOf, when Reference is empty and it is not 0, is the
	// version whose reference patch the new version keeps: the one the
	// form offered.
	KeepReferenceOf int
}

// UploadFile is one uploaded test file, by its path in the version.
type UploadFile struct {
	Path string
	Data []byte
}
