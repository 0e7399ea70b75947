package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/app/db"
	"github.com/testfirst-app/testfirst/app/pipeline"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/store"
	"github.com/testfirst-app/testfirst/handlers"
)

// CardHook is called after the card recorded a decision on a ticket (an
// approval, a signature, a rejection). It posts what GitHub should say,
// cancels running grades and regrades open pull requests; it must be
// idempotent. Its error is logged: the decision stands.
type CardHook func(ctx context.Context, ticketID int64) error

// cardStore is the slice of the hidden-test store the card uses: metadata,
// the masked card copy, and decisions. It never hands out a canaried body.
type cardStore interface {
	Versions(ctx context.Context, t store.Ticket) ([]store.Version, error)
	Version(ctx context.Context, t store.Ticket, k int) (store.Version, error)
	Card(ctx context.Context, t store.Ticket, k int) (*store.Card, error)
	Approve(ctx context.Context, t store.Ticket, k int, digest, by string) (store.Version, error)
	Reject(ctx context.Context, t store.Ticket, k int, digest, by, reason string) (store.Version, error)
}

var _ cardStore = (*store.Writer)(nil)

// CardService is the approval card's side of the app: it decides who may
// see a ticket, builds the card of a version from the database, the store
// (masked copies only) and the repository's config, and records decisions
// in the store (the source of truth) and the database. It implements
// handlers.Cards.
type CardService struct {
	db      *db.DB
	store   cardStore
	github  installationClients
	hook    CardHook
	webURL  string
	perms   *cardCache[string]
	configs *cardCache[cardRepoConfig]
	metrics *cardMetrics
	now     func() time.Time
	log     *slog.Logger
}

var _ handlers.Cards = (*CardService)(nil)

// CardOption configures a CardService.
type CardOption func(*CardService)

// WithCardMetrics registers the card's metrics with reg.
func WithCardMetrics(reg prometheus.Registerer) CardOption {
	return func(s *CardService) { s.metrics = newCardMetrics(reg) }
}

// WithCardLogger logs to log.
func WithCardLogger(log *slog.Logger) CardOption { return func(s *CardService) { s.log = log } }

// WithCardClock replaces the clock that times reviews.
func WithCardClock(now func() time.Time) CardOption { return func(s *CardService) { s.now = now } }

// WithCardGitHubURL sets GitHub's web address for links to issues and pull
// requests (DefaultGitHubURL otherwise).
func WithCardGitHubURL(u string) CardOption {
	return func(s *CardService) { s.webURL = strings.TrimSuffix(u, "/") + "/" }
}

// NewCardService returns the card's service. hook is called after every
// recorded decision.
func NewCardService(d *db.DB, st cardStore, gh installationClients, hook CardHook, opts ...CardOption) *CardService {
	s := &CardService{db: d, store: st, github: gh, hook: hook, webURL: DefaultGitHubURL, now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = newCardMetrics(nil)
	}
	s.perms = newCardCache[string](cardCacheTTL, s.now)
	s.configs = newCardCache[cardRepoConfig](cardCacheTTL, s.now)
	return s
}

// cardMetrics count decisions and how long reviews took.
type cardMetrics struct {
	approvals  *prometheus.CounterVec
	review     prometheus.Histogram
	rejections prometheus.Counter
}

func newCardMetrics(reg prometheus.Registerer) *cardMetrics {
	m := &cardMetrics{
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "testfirst_card_approvals_total",
			Help: "Signatures on hidden-test versions, by whether they came faster than the repository's fast-approval threshold.",
		}, []string{"fast"}),
		review: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "testfirst_card_review_seconds",
			Help:    "Time from a card being ready to its approval.",
			Buckets: []float64{30, 60, 120, 180, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "testfirst_card_rejections_total",
			Help: "Hidden-test versions rejected on the card.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.approvals, m.review, m.rejections)
	}
	return m
}

// cardTicket is a ticket the viewer may see, with what the card needs to
// know about it.
type cardTicket struct {
	repo      db.Repository
	tk        db.Ticket
	st        store.Ticket
	ref       handlers.TicketRef
	perm      string
	requester bool
}

// resolve finds the ticket and checks that viewer may see it; anything
// else is handlers.ErrNotFound.
func (s *CardService) resolve(ctx context.Context, viewer string, ref handlers.TicketRef) (cardTicket, error) {
	var ct cardTicket
	err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if ct.repo, err = tx.RepositoryByName(ctx, ref.Owner, ref.Repo); err != nil {
			return err
		}
		ct.tk, err = tx.TicketByIssue(ctx, ct.repo.ID, ref.Issue)
		return err
	})
	if errors.Is(err, db.ErrNotFound) || (err == nil && !ct.repo.RemovedAt.IsZero()) {
		return cardTicket{}, handlers.ErrNotFound
	}
	if err != nil {
		return cardTicket{}, err
	}
	ok, err := s.authorize(ctx, viewer, &ct)
	if err != nil {
		return cardTicket{}, err
	}
	if !ok {
		return cardTicket{}, handlers.ErrNotFound
	}
	return ct, nil
}

// authorize decides whether viewer may see the ticket's card and grades:
// its requester (while they can still read the repository), and people
// with admin or maintain permission on it. It fills in the viewer's
// permission.
func (s *CardService) authorize(ctx context.Context, viewer string, ct *cardTicket) (bool, error) {
	r := ct.repo
	ct.ref = handlers.TicketRef{Owner: r.Owner, Repo: r.Name, Issue: ct.tk.IssueNumber}
	ct.st = store.Ticket{Installation: r.InstallationID, Owner: r.Owner, Repo: r.Name, Issue: ct.tk.IssueNumber}
	perm, err := s.permission(ctx, r, viewer)
	if err != nil {
		return false, err
	}
	ct.perm = perm
	ct.requester = strings.EqualFold(viewer, ct.tk.Requester)
	switch {
	case ct.requester && perm != "none":
		return true, nil
	case perm == "admin" || perm == "maintain":
		return true, nil
	}
	return false, nil
}

// permission asks GitHub, with the installation's token, for login's
// permission on the repository; kept for a minute. A login GitHub does not
// know has none.
func (s *CardService) permission(ctx context.Context, r db.Repository, login string) (string, error) {
	key := fmt.Sprintf("%d/%s/%s/%s", r.InstallationID, strings.ToLower(r.Owner), strings.ToLower(r.Name), strings.ToLower(login))
	return s.perms.get(key, func() (string, error) {
		gi, err := s.github.Installation(r.InstallationID)
		if err != nil {
			return "", err
		}
		p, err := gi.Permission(ctx, r.Owner, r.Name, login)
		if errors.Is(err, github.ErrNotFound) {
			return "none", nil
		}
		if err != nil {
			return "", fmt.Errorf("check %s's permission on %s/%s: %w", login, r.Owner, r.Name, err)
		}
		return p, nil
	})
}

// canSign reports whether a permission carries write access.
func canSign(perm string) bool { return perm == "admin" || perm == "maintain" || perm == "write" }

// cardRepoConfig is a repository's config as the card reads it; Err says
// why it could not be read, and then Config holds the defaults.
type cardRepoConfig struct {
	Config pipeline.RepoConfig
	Err    error
}

// repoConfig reads the repository's .github/testfirst.yml from its default
// branch; kept for a minute. A file that does not parse is kept as an
// error: approvals wait until it is fixed, so a broken file never loosens
// the policy.
func (s *CardService) repoConfig(ctx context.Context, r db.Repository) (cardRepoConfig, error) {
	key := fmt.Sprintf("%d/%s/%s", r.InstallationID, strings.ToLower(r.Owner), strings.ToLower(r.Name))
	return s.configs.get(key, func() (cardRepoConfig, error) {
		gi, err := s.github.Installation(r.InstallationID)
		if err != nil {
			return cardRepoConfig{}, err
		}
		cfg, err := repoConfig(ctx, gi, r.Owner, r.Name, r.DefaultBranch)
		var apiErr *github.APIError
		if errors.As(err, &apiErr) {
			return cardRepoConfig{}, err
		}
		if err != nil {
			return cardRepoConfig{Config: pipeline.DefaultRepoConfig(), Err: err}, nil
		}
		return cardRepoConfig{Config: cfg}, nil
	})
}

// cardCheck is a version's base check as the store sync records it in
// versions.check_result: the hidden test ids as the grader lists them,
// and the base and reference runs.
type cardCheck struct {
	Tests     []string               `json:"tests"`
	Base      *grader.BaseCheck      `json:"base"`
	Reference *grader.ReferenceCheck `json:"reference"`
}

// parseCheck reads a version's check; nil when it has not run.
func parseCheck(raw json.RawMessage) (*cardCheck, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c cardCheck
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("read the base check: %w", err)
	}
	return &c, nil
}

// invalid says why a checked version cannot be approved at all, or "".
func (c *cardCheck) invalid() string {
	switch {
	case c == nil:
		return ""
	case c.Base != nil && c.Base.Error == "" && c.Base.AllPass:
		return "Every hidden test passes on the base commit: these tests cannot tell a fix from no change. Reject this version and say what the tests should check."
	case c.Reference != nil && c.Reference.Error == "" && !c.Reference.AllPass:
		return fmt.Sprintf("The writer's reference patch fails %d of the hidden tests: the tests or the patch are wrong. Reject this version.", len(c.Reference.Failed))
	}
	return ""
}

// versionState reads what the card knows of version k: the database row
// (zero before the store sync mirrored it), its check and signatures.
type versionState struct {
	row   db.Version
	check *cardCheck
	sigs  []db.Approval
}

func (s *CardService) versionState(ctx context.Context, tx *db.Tx, ticketID int64, k int) (versionState, error) {
	var vs versionState
	row, err := tx.Version(ctx, ticketID, k)
	if errors.Is(err, db.ErrNotFound) {
		return vs, nil
	}
	if err != nil {
		return vs, err
	}
	vs.row = row
	if vs.check, err = parseCheck(row.Check); err != nil {
		s.log.WarnContext(ctx, "card: unreadable base check", "ticket", ticketID, "version", k, "err", err)
	}
	vs.sigs, err = tx.Approvals(ctx, row.ID)
	return vs, err
}

// signers lists the logins of a version's signatures.
func signers(sigs []db.Approval) []string {
	out := make([]string, 0, len(sigs))
	for _, a := range sigs {
		out = append(out, a.ApprovedBy)
	}
	return out
}

// approvalBlock says why viewer may not sign version v now, or "".
func approvalBlock(viewer string, ct cardTicket, v store.Version, newest int, st versionState, cfg cardRepoConfig) string {
	switch {
	case v.Number != newest:
		return fmt.Sprintf("v%d is not the newest version: v%d is. Only the newest version can be approved.", v.Number, newest)
	case v.Decision != nil && v.Decision.Approved:
		return fmt.Sprintf("v%d is approved (by %s).", v.Number, v.Decision.By)
	case v.Decision != nil:
		return fmt.Sprintf("v%d was rejected by %s.", v.Number, v.Decision.By)
	case cfg.Err != nil:
		return "The repository's " + pipeline.RepoConfigPath + " cannot be read, so its approval policy is unknown: " + cfg.Err.Error() + " Fix it on the default branch; until then no version can be approved."
	case st.row.ReadyAt.IsZero():
		return fmt.Sprintf("v%d is not ready for review yet: the base check has not finished.", v.Number)
	}
	if why := st.check.invalid(); why != "" {
		return why
	}
	for _, a := range st.sigs {
		if strings.EqualFold(a.ApprovedBy, viewer) {
			return fmt.Sprintf("You signed v%d. The repository's policy is enforce: a second approver with write access who is not the requester must sign too.", v.Number)
		}
	}
	if cfg.Config.Policy == pipeline.PolicyEnforce && !ct.requester {
		if !canSign(ct.perm) {
			return "Policy enforce: a second approver needs write access to the repository."
		}
		for _, a := range st.sigs {
			if !strings.EqualFold(a.ApprovedBy, ct.tk.Requester) {
				return fmt.Sprintf("%s signed as the second approver; the requester, %s, must sign too.", a.ApprovedBy, ct.tk.Requester)
			}
		}
	}
	return ""
}

// complete reports whether a version signed by these logins is approved
// under the policy: one signature under single; the requester's and one
// other under enforce.
func complete(policy, requester string, logins []string) bool {
	if policy != pipeline.PolicyEnforce {
		return len(logins) > 0
	}
	return slices.ContainsFunc(logins, func(l string) bool { return strings.EqualFold(l, requester) }) &&
		slices.ContainsFunc(logins, func(l string) bool { return !strings.EqualFold(l, requester) })
}

// rejections counts the rejected versions.
func rejections(vs []store.Version) int {
	n := 0
	for _, v := range vs {
		if v.Decision != nil && !v.Decision.Approved {
			n++
		}
	}
	return n
}

// reachedRejectionCap counts a ticket's rejected versions (vs, from the store)
// and reports whether they reached the repository's approval.max_rejections:
// then the ticket stops and gets lane:pair.
func reachedRejectionCap(cfg pipeline.RepoConfig, vs []store.Version) (rejected int, stopped bool) {
	n := rejections(vs)
	return n, cfg.MaxRejections > 0 && n >= cfg.MaxRejections
}

func decisionInfo(d *store.Decision) *handlers.DecisionInfo {
	if d == nil {
		return nil
	}
	return &handlers.DecisionInfo{Approved: d.Approved, By: d.By, At: d.At, Reason: d.Reason}
}

func (s *CardService) ticketInfo(ct cardTicket) handlers.TicketInfo {
	return handlers.TicketInfo{Ref: ct.ref, Title: ct.tk.Title, Requester: ct.tk.Requester, State: ct.tk.State,
		IssueURL: fmt.Sprintf("%s%s/%s/issues/%d", s.webURL, ct.repo.Owner, ct.repo.Name, ct.tk.IssueNumber)}
}

// Card implements handlers.Cards: version k (0: the newest) of the
// ticket's hidden tests, masked.
func (s *CardService) Card(ctx context.Context, viewer string, ref handlers.TicketRef, k int) (*handlers.CardPage, error) {
	ct, err := s.resolve(ctx, viewer, ref)
	if err != nil {
		return nil, err
	}
	vs, err := s.store.Versions(ctx, ct.st)
	if err != nil {
		return nil, err
	}
	cfg, err := s.repoConfig(ctx, ct.repo)
	if err != nil {
		return nil, err
	}
	page := &handlers.CardPage{Ticket: s.ticketInfo(ct), Policy: cfg.Config.Policy, Rejections: rejections(vs), MaxRejections: cfg.Config.MaxRejections}
	if cfg.Err != nil {
		page.PolicyError = cfg.Err.Error()
	}
	var state versionState
	var grades []db.Grade
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		var err error
		if grades, err = tx.TicketGrades(ctx, ct.tk.ID); err != nil {
			return err
		}
		if len(vs) == 0 {
			return nil
		}
		if k == 0 {
			k = vs[len(vs)-1].Number
		}
		state, err = s.versionState(ctx, tx, ct.tk.ID, k)
		return err
	}); err != nil {
		return nil, err
	}
	for _, g := range grades {
		page.Grades = append(page.Grades, handlers.GradeItem{ID: g.ID, PR: g.PRNumber, HeadSHA: g.HeadSHA, Version: g.VersionNumber, State: g.State,
			Verdict: g.Verdict, Trust: g.Trust, Passed: g.Passed, Total: g.Total, Created: g.CreatedAt})
	}
	if len(vs) == 0 {
		return page, nil
	}
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		page.History = append(page.History, handlers.HistoryItem{Number: v.Number, State: string(v.State), Author: v.Author, Created: v.Created, Digest: v.Digest, Decision: decisionInfo(v.Decision)})
	}
	page.Newest = vs[len(vs)-1].Number
	i := slices.IndexFunc(vs, func(v store.Version) bool { return v.Number == k })
	if i < 0 {
		return nil, handlers.ErrNotFound
	}
	v := vs[i]
	card, err := s.store.Card(ctx, ct.st, k)
	if err != nil {
		return nil, err
	}
	page.Version = &handlers.VersionInfo{Number: v.Number, Digest: v.Digest, State: string(v.State), Author: v.Author, Created: v.Created,
		ReadyAt: state.row.ReadyAt, HasReference: v.HasReference, Decision: decisionInfo(v.Decision)}
	for _, f := range card.Files {
		page.Files = append(page.Files, handlers.FileView{Path: f.Path, Text: string(f.Data), Size: len(f.Data)})
	}
	page.ReferencePatch = string(card.Reference)

	var known []string
	if c := state.check; c != nil {
		page.TestsKnown = c.Tests != nil
		known = c.Tests
		if c.Base != nil {
			page.Base = &handlers.BaseResult{Guards: c.Base.GuardTests, AllPass: c.Base.AllPass, Passed: c.Base.Counts.Passed, Total: c.Base.Counts.Total, Error: c.Base.Error,
				Flaky: c.Base.Flaky}
		}
		if c.Reference != nil {
			page.Reference = &handlers.ReferenceResult{AllPass: c.Reference.AllPass, Failed: c.Reference.Failed, Passed: c.Reference.Counts.Passed, Total: c.Reference.Counts.Total, Error: c.Reference.Error,
				Mutation: mutationView(c.Reference.Mutation)}
		}
	}
	page.Criteria, page.Uncovered, page.Unlisted = coverage(parseCriteria(ct.tk.Body), card.Criteria, known)
	byTest := criteriaOf(page.Criteria, page.Unlisted)
	for _, id := range known {
		page.Tests = append(page.Tests, handlers.TestInfo{ID: id, Guard: page.Base != nil && slices.Contains(page.Base.Guards, id), Criteria: byTest[id]})
	}
	for _, a := range state.sigs {
		page.Signatures = append(page.Signatures, handlers.Signature{Login: a.ApprovedBy, At: a.ApprovedAt, ReviewSeconds: a.ReviewSeconds, Fast: a.Fast})
	}
	page.Blocked = approvalBlock(viewer, ct, v, page.Newest, state, cfg)
	page.CanDecide = page.Blocked == ""
	page.CanReject = v.Number == page.Newest && v.Decision == nil
	if v.Decision != nil || v.Number != page.Newest {
		page.Blocked = "" // the version's state says it already
	}
	return page, nil
}

// mutationView is a reference's mutation check as the card shows it.
func mutationView(m *grader.Mutation) *handlers.MutationResult {
	if m == nil {
		return nil
	}
	summary := m.Summary()
	if summary != "" {
		summary = strings.ToUpper(summary[:1]) + summary[1:]
	}
	v := &handlers.MutationResult{Summary: summary, Mutants: m.Mutants, Killed: m.Killed, NotCounted: m.Invalid + m.NotRun, Error: m.Error}
	for _, s := range m.Survivors {
		v.Survivors = append(v.Survivors, handlers.SurvivorView{File: s.File, Line: s.Line, Change: s.Change, Before: s.Before, After: s.After})
	}
	return v
}
