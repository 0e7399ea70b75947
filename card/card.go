package card

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// Hook is called after the card recorded a decision on a ticket (an
// approval, a signature, a rejection). It posts what GitHub should say,
// cancels running grades and regrades open pull requests; it must be
// idempotent. Its error is logged: the decision stands.
type Hook func(ctx context.Context, ticketID int64) error

// DefaultGitHubURL is GitHub's web address, for links to issues and pull
// requests, unless WithGitHubURL says otherwise.
const DefaultGitHubURL = "https://github.com/"

// installationClients is the slice of GitHub the card needs: an
// installation's client, to read permissions and the repository's config.
type installationClients interface {
	Installation(id int64) (*github.Installation, error)
}

// cardStore is the slice of the hidden-test store the card uses: metadata,
// the masked card copy, decisions, and new versions uploaded on the card.
// It never hands out a canaried body.
type cardStore interface {
	Versions(ctx context.Context, t store.Ticket) ([]store.Version, error)
	Version(ctx context.Context, t store.Ticket, k int) (store.Version, error)
	Card(ctx context.Context, t store.Ticket, k int) (*store.Card, error)
	Approve(ctx context.Context, t store.Ticket, k int, digest, by string) (store.Version, error)
	Reject(ctx context.Context, t store.Ticket, k int, digest, by, reason string) (store.Version, error)
	Push(ctx context.Context, t store.Ticket, d store.Draft) (store.Version, error)
}

var _ cardStore = (*store.Writer)(nil)

// Service is the approval card's side of the app: it decides who may
// see a ticket, builds the card of a version from the database, the store
// (masked copies only) and the repository's config, and records decisions
// in the store (the source of truth) and the database. It implements
// handlers.Cards.
type Service struct {
	db      *db.DB
	store   cardStore
	github  installationClients
	hook    Hook
	webURL  string
	perms   *cache[string]
	configs *cache[pipeline.FetchedConfig]
	metrics *metrics
	now     func() time.Time
	log     *slog.Logger
}

var _ handlers.Cards = (*Service)(nil)

// Option configures a Service.
type Option func(*Service)

// WithMetrics registers the card's metrics with reg.
func WithMetrics(reg prometheus.Registerer) Option {
	return func(s *Service) { s.metrics = newMetrics(reg) }
}

// WithLogger logs to log.
func WithLogger(log *slog.Logger) Option { return func(s *Service) { s.log = log } }

// WithClock replaces the clock that times reviews.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithGitHubURL sets GitHub's web address for links to issues and pull
// requests (DefaultGitHubURL otherwise).
func WithGitHubURL(u string) Option {
	return func(s *Service) { s.webURL = strings.TrimSuffix(u, "/") + "/" }
}

// NewService returns the card's service. hook is called after every
// recorded decision.
func NewService(d *db.DB, st cardStore, gh installationClients, hook Hook, opts ...Option) *Service {
	s := &Service{db: d, store: st, github: gh, hook: hook, webURL: DefaultGitHubURL, now: time.Now, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = newMetrics(nil)
	}
	s.perms = newCache[string](cacheTTL, s.now)
	s.configs = newCache[pipeline.FetchedConfig](cacheTTL, s.now)
	return s
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
func (s *Service) resolve(ctx context.Context, viewer string, ref handlers.TicketRef) (cardTicket, error) {
	return s.resolveFor(ctx, viewer, ref, pipeline.MayView)
}

// resolveToAct is resolve for a decision or an upload: the viewer's
// permission is asked of GitHub now, not taken from the minute the card
// keeps it, so access taken away a moment ago no longer acts.
func (s *Service) resolveToAct(ctx context.Context, viewer string, ref handlers.TicketRef) (cardTicket, error) {
	return s.resolveFor(context.WithValue(ctx, freshPermission{}, true), viewer, ref, pipeline.MayView)
}

// freshPermission, set in a context, makes permission ask GitHub again.
type freshPermission struct{}

// resolveFor is resolve with may deciding who sees the ticket.
func (s *Service) resolveFor(ctx context.Context, viewer string, ref handlers.TicketRef, may func(perm string, requester bool) bool) (cardTicket, error) {
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
	ok, err := s.authorize(ctx, viewer, &ct, may)
	if err != nil {
		return cardTicket{}, err
	}
	if !ok {
		return cardTicket{}, handlers.ErrNotShown
	}
	return ct, nil
}

// decides reports whether the viewer may decide on the ticket alone:
// approve under single, reject, upload tests (pipeline.MayDecide).
func (ct cardTicket) decides() bool { return pipeline.MayDecide(ct.perm, ct.requester) }

// authorize decides whether viewer may see the ticket's card and grades
// (pipeline.MayView): its requester (while they can still read the
// repository), and people with write access to it. It fills in the
// viewer's permission.
func (s *Service) authorize(ctx context.Context, viewer string, ct *cardTicket, may func(perm string, requester bool) bool) (bool, error) {
	r := ct.repo
	ct.ref = handlers.TicketRef{Owner: r.Owner, Repo: r.Name, Issue: ct.tk.IssueNumber}
	ct.st = store.Ticket{Installation: r.InstallationID, Owner: r.Owner, Repo: r.Name, Issue: ct.tk.IssueNumber}
	perm, err := s.permission(ctx, r, viewer)
	if err != nil {
		return false, err
	}
	ct.perm = perm
	ct.requester = isRequester(ctx, viewer, ct.tk)
	return may(perm, ct.requester), nil
}

// isRequester reports whether viewer is the ticket's requester: when the
// ticket knows the requester's user id, the same account
// (handlers.ViewerID) under whatever login it has now; else the same
// login. A login renamed away and taken by someone else names another
// account, which gets none of the requester's rights; the requester,
// renamed, keeps them.
func isRequester(ctx context.Context, viewer string, tk db.Ticket) bool {
	if tk.RequesterID != 0 {
		return handlers.ViewerID(ctx) == tk.RequesterID
	}
	return strings.EqualFold(viewer, tk.Requester)
}

// viewerAccount is the signed-in viewer as an account: the login and the
// session's user id.
func viewerAccount(ctx context.Context, viewer string) pipeline.Account {
	return pipeline.Account{Login: viewer, ID: handlers.ViewerID(ctx)}
}

// requesterAccount is the ticket's requester as an account.
func requesterAccount(tk db.Ticket) pipeline.Account {
	return pipeline.Account{Login: tk.Requester, ID: tk.RequesterID}
}

// permission asks GitHub, with the installation's token, for login's
// permission on the repository; kept for a minute. A login GitHub does not
// know has none.
func (s *Service) permission(ctx context.Context, r db.Repository, login string) (string, error) {
	key := fmt.Sprintf("%d/%s/%s/%s", r.InstallationID, strings.ToLower(r.Owner), strings.ToLower(r.Name), strings.ToLower(login))
	if fresh, _ := ctx.Value(freshPermission{}).(bool); fresh {
		s.perms.forget(key)
	}
	return s.perms.get(key, func() (string, error) {
		gi, err := s.github.Installation(r.InstallationID)
		if err != nil {
			return "", err
		}
		p, err := gi.Permission(ctx, r.Owner, r.Name, login)
		if errors.Is(err, github.ErrNotFound) {
			return pipeline.PermNone, nil
		}
		if err != nil {
			return "", fmt.Errorf("check %s's permission on %s/%s: %w", login, r.Owner, r.Name, err)
		}
		return p, nil
	})
}

// repoConfig reads the repository's .github/testfirst.yml from its default
// branch; kept for a minute. A file that does not parse is kept with its
// ParseError: approvals wait until it is fixed, so a broken file never
// loosens the policy. A file that could not be read is not kept, and its
// LoadError is returned.
func (s *Service) repoConfig(ctx context.Context, r db.Repository) (pipeline.FetchedConfig, error) {
	return s.configs.get(configKey(r), func() (pipeline.FetchedConfig, error) {
		gi, err := s.github.Installation(r.InstallationID)
		if err != nil {
			return pipeline.FetchedConfig{}, err
		}
		fc := pipeline.FetchConfig(ctx, gi, r.Owner, r.Name, r.DefaultBranch)
		if fc.LoadError != nil {
			return pipeline.FetchedConfig{}, fc.LoadError
		}
		return fc, nil
	})
}

// decisionConfig is the repository's config read afresh: a decision
// follows the approval policy the repository has now, never one kept from
// before an admin changed it (enforce turned on a minute ago).
func (s *Service) decisionConfig(ctx context.Context, r db.Repository) (pipeline.FetchedConfig, error) {
	s.configs.forget(configKey(r))
	return s.repoConfig(ctx, r)
}

// configKey is the key of r's config in the cache.
func configKey(r db.Repository) string {
	return fmt.Sprintf("%d/%s/%s", r.InstallationID, strings.ToLower(r.Owner), strings.ToLower(r.Name))
}

// versionState reads what the card knows of version k: the database row
// (zero before the store sync mirrored it), its check and signatures.
type versionState struct {
	row   db.Version
	check *pipeline.VersionCheck
	sigs  []db.Approval
}

func (s *Service) versionState(ctx context.Context, tx *db.Tx, ticketID int64, k int) (versionState, error) {
	var vs versionState
	row, err := tx.Version(ctx, ticketID, k)
	if errors.Is(err, db.ErrNotFound) {
		return vs, nil
	}
	if err != nil {
		return vs, err
	}
	vs.row = row
	if vs.check, err = pipeline.ParseCheck(row.Check); err != nil {
		s.log.WarnContext(ctx, "card: unreadable base check", "ticket", ticketID, "version", k, "err", err)
	}
	vs.sigs, err = tx.Approvals(ctx, row.ID)
	return vs, err
}

// signers lists the accounts of a version's signatures.
func signers(sigs []db.Approval) []pipeline.Account {
	out := make([]pipeline.Account, 0, len(sigs))
	for _, a := range sigs {
		out = append(out, pipeline.Account{Login: a.ApprovedBy, ID: a.ApproverID})
	}
	return out
}

// logins lists the logins of accounts, as a decision names its signers.
func logins(as []pipeline.Account) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.Login)
	}
	return out
}

// approvalBlock says why the viewer may not sign version v now, or "": the
// approval policy (pipeline.SignBlock) applied to what the card knows.
func approvalBlock(viewer pipeline.Account, ct cardTicket, v store.Version, newest int, st versionState, cfg pipeline.FetchedConfig) string {
	sg := pipeline.Signing{Viewer: viewer, Permission: ct.perm, Requester: requesterAccount(ct.tk), Version: v.Number, Newest: newest,
		ConfigError: cfg.ParseError, Policy: cfg.Config.Policy, Ready: !st.row.ReadyAt.IsZero(), Check: st.check, Signers: signers(st.sigs)}
	if d := v.Decision; d != nil {
		sg.Decision = &pipeline.Decision{Approved: d.Approved, By: d.By}
	}
	return pipeline.SignBlock(sg)
}

// rejections counts the rejected versions of vs.
func rejections(vs []store.Version) int {
	states := make([]pipeline.VersionState, len(vs))
	for i, v := range vs {
		states[i] = pipeline.VersionState(v.State)
	}
	return pipeline.Rejections(states)
}

func decisionInfo(d *store.Decision) *handlers.DecisionInfo {
	if d == nil {
		return nil
	}
	return &handlers.DecisionInfo{Approved: d.Approved, By: d.By, At: d.At, Reason: d.Reason}
}

func (s *Service) ticketInfo(ct cardTicket) handlers.TicketInfo {
	return handlers.TicketInfo{Ref: ct.ref, Title: ct.tk.Title, Requester: ct.tk.Requester, State: string(ct.tk.State),
		IssueURL: fmt.Sprintf("%s%s/%s/issues/%d", s.webURL, ct.repo.Owner, ct.repo.Name, ct.tk.IssueNumber)}
}

// Card implements handlers.Cards: version k (0: the newest) of the
// ticket's hidden tests, masked.
func (s *Service) Card(ctx context.Context, viewer string, ref handlers.TicketRef, k int) (*handlers.CardPage, error) {
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
	page := &handlers.CardPage{Ticket: s.ticketInfo(ct), Policy: cfg.Config.Policy, Rejections: rejections(vs), MaxRejections: cfg.Config.MaxRejections,
		CanUpload: ct.decides()}
	if cfg.ParseError != nil {
		page.PolicyError = cfg.ParseError.Error()
	}
	var state versionState
	var grades []db.Grade
	var runs []db.AgentRun
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		page.Pasted = nil // the transaction may run again (db.Tx)
		var err error
		if grades, err = tx.TicketGrades(ctx, ct.tk.ID); err != nil {
			return err
		}
		if runs, err = tx.AgentRuns(ctx, ct.tk.ID); err != nil {
			return err
		}
		pastes, err := tx.PastedSightings(ctx, ct.tk.ID)
		if err != nil {
			return err
		}
		for _, p := range pastes {
			page.Pasted = append(page.Pasted, handlers.PastedView{SeenIn: p.SeenIn, URL: p.URL, Author: p.Author, Version: p.Version,
				HiddenFile: p.HiddenFile, Test: p.Test, Matched: p.Matched, Of: p.Of, FirstLine: p.FirstLine, LastLine: p.LastLine, SeenAt: p.SeenAt})
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
		page.Grades = append(page.Grades, handlers.GradeItem{ID: g.ID, PR: g.PRNumber, HeadSHA: g.HeadSHA, Version: g.VersionNumber, State: string(g.State),
			Verdict: g.Verdict, Trust: g.Trust, Passed: g.Passed, Total: g.Total, Created: g.CreatedAt})
	}
	page.AgentWarnings = db.TicketWarnings(runs)
	if len(vs) == 0 {
		page.WriterAtWork = writerAtWork(runs)
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
	page.Writer = writerOf(runs, v.Number)
	for _, f := range card.Files {
		page.Files = append(page.Files, handlers.FileView{Path: f.Path, Text: string(f.Data), Size: len(f.Data)})
	}
	page.ReferencePatch = string(card.Reference)

	var known []string
	if c := state.check; c != nil {
		if v.State == store.StatePending {
			page.Version.Invalid = c.Problems()
			for i := range page.History {
				page.History[i].Invalid = page.History[i].Number == v.Number && len(page.Version.Invalid) > 0
			}
		}
		page.TestsKnown = c.Tests != nil
		known = c.Tests
		page.Base = &handlers.BaseResult{Guards: c.Base.GuardTests, AllPass: c.Base.AllPass, Passed: c.Base.Counts.Passed, Total: c.Base.Counts.Total, Error: c.Base.Error,
			Flaky: c.Base.Flaky, Skips: c.SkipsHere(), Broken: c.Base.Broken, Note: c.Base.Note, Context: c.Base.Context, ContextLeftOut: c.Base.ContextLeftOut}
		if c.Reference != nil {
			page.Reference = &handlers.ReferenceResult{AllPass: c.Reference.AllPass, Failed: c.Reference.Failed, Passed: c.Reference.Counts.Passed, Total: c.Reference.Counts.Total, Error: c.Reference.Error,
				Mutation: mutationView(c.Reference.Mutation)}
		}
		if c.Twins != nil {
			page.Twins = twinsView(c.Twins)
		}
	}
	cov := pipeline.CoverageOf(pipeline.ParseCriteria(ct.tk.Body), card.Criteria, known)
	page.Criteria, page.Uncovered, page.Unlisted = criteriaView(cov.Rows), criteriaView(cov.Uncovered), criteriaView(cov.Unlisted)
	if len(card.Criteria) == 0 {
		// Without a map nothing says a criterion has no test: coverage
		// is unknown, and the card says so plainly.
		page.NoCriteriaMap, page.Uncovered = true, nil
	}
	page.Ticket.State = headerState(ct.tk.State, v, page.Newest, len(state.sigs))
	byTest := cov.ByTest()
	for _, id := range known {
		page.Tests = append(page.Tests, handlers.TestInfo{ID: id, Guard: page.Base != nil && slices.Contains(page.Base.Guards, id), Criteria: byTest[id]})
	}
	for _, a := range state.sigs {
		page.Signatures = append(page.Signatures, handlers.Signature{Login: a.ApprovedBy, At: a.ApprovedAt, ReviewSeconds: a.ReviewSeconds, Fast: a.Fast})
	}
	page.Blocked = approvalBlock(viewerAccount(ctx, viewer), ct, v, page.Newest, state, cfg)
	page.CanDecide = page.Blocked == ""
	page.CanReject = v.Number == page.Newest && v.Decision == nil && ct.decides()
	if v.Decision != nil || v.Number != page.Newest {
		page.Blocked = "" // the version's state says it already
	}
	return page, nil
}

// criteriaView is criteria as the card shows them.
func criteriaView(cs []pipeline.Criterion) []handlers.Criterion {
	var out []handlers.Criterion
	for _, c := range cs {
		out = append(out, handlers.Criterion{ID: c.ID, Text: c.Text, Tests: c.Tests, Missing: c.Missing})
	}
	return out
}

// mutationView is a reference's mutation check as the card shows it.
func mutationView(m *report.Mutation) *handlers.MutationResult {
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

// maxUntwinnedShown bounds the untwinned tests the card lists.
const maxUntwinnedShown = 20

// twinsView is a version's twin coverage as the card shows it.
func twinsView(tw *report.Twins) *handlers.TwinsResult {
	v := &handlers.TwinsResult{Twinned: tw.Twinned, Of: tw.Of, Untwinnable: tw.Untwinnable, Invalid: len(tw.InvalidTwins)}
	for _, g := range tw.Untwinned[:min(len(tw.Untwinned), maxUntwinnedShown)] {
		v.Untwinned = append(v.Untwinned, handlers.TwinGapView{ID: g.ID, Why: g.Why})
	}
	return v
}

// headerState is the ticket's state as the card's header says it. The
// database's ticket state follows a decision once the sync has run; the
// store has the decision at once, so the header reads the newest
// version's state from it and never lags behind the decision just taken.
func headerState(db pipeline.TicketState, v store.Version, newest, signatures int) string {
	if v.Number == newest {
		switch {
		case v.State == store.StateApproved:
			return "approved: pull requests are graded against v" + fmt.Sprint(v.Number)
		case v.State == store.StateRejected:
			return fmt.Sprintf("writing: v%d was rejected, the writer makes the next version", v.Number)
		case v.State == store.StatePending && signatures > 0:
			return fmt.Sprintf("awaiting approval: v%d has %d of the signatures it needs", v.Number, signatures)
		}
	}
	return strings.ReplaceAll(string(db), "_", " ")
}
