package card

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
)

// decisionTarget finds version k for a decision: it must be the newest,
// undecided, and carry the digest the card showed.
func (s *Service) decisionTarget(ctx context.Context, ct cardTicket, k int, digest, verb string) (store.Version, []store.Version, error) {
	vs, err := s.store.Versions(ctx, ct.st)
	if err != nil {
		return store.Version{}, nil, err
	}
	i := slices.IndexFunc(vs, func(v store.Version) bool { return v.Number == k })
	if i < 0 {
		return store.Version{}, nil, handlers.ErrNotFound
	}
	v, newest := vs[i], vs[len(vs)-1]
	switch {
	case v.Number != newest.Number:
		return v, vs, handlers.Refusef("v%d was pushed after you opened the card of v%d, so v%d cannot be %s: the card below shows v%d. Review it before you decide.", newest.Number, k, k, verb, newest.Number)
	case digest != v.Digest:
		return v, vs, handlers.Refusef("The card you decided on showed digest %q, but v%d's is %s. Review the card again before you decide.", digest, k, v.Digest)
	case v.Decision != nil && v.Decision.Approved:
		return v, vs, handlers.Refusef("v%d is approved already (by %s).", k, v.Decision.By)
	case v.Decision != nil:
		return v, vs, handlers.Refusef("v%d was rejected already (by %s).", k, v.Decision.By)
	}
	return v, vs, nil
}

// storeRefusal turns a store error on a decision into a refusal when the
// store has moved on (a newer version, or someone decided meanwhile); any
// other error is returned as it is.
func (s *Service) storeRefusal(ctx context.Context, ct cardTicket, k int, err error) error {
	vs, lerr := s.store.Versions(ctx, ct.st)
	if lerr != nil || len(vs) == 0 {
		return err
	}
	newest := vs[len(vs)-1]
	if newest.Number != k {
		return handlers.Refusef("v%d was pushed meanwhile: review it before you decide.", newest.Number)
	}
	if d := newest.Decision; d != nil {
		verb := "rejected"
		if d.Approved {
			verb = "approved"
		}
		return handlers.Refusef("v%d was %s meanwhile by %s.", k, verb, d.By)
	}
	return err
}

// mirror records version v in the database unless the store sync has, and
// returns its row: the store sync's one path (db.RecordStoreVersion).
func mirror(ctx context.Context, tx *db.Tx, ticketID int64, v store.Version) (db.Version, error) {
	row, _, err := tx.RecordStoreVersion(ctx, ticketID, v.Number, v.Digest, v.Author, v.Created)
	return row, err
}

// Approve implements handlers.Cards: viewer signs version k, bound to
// digest. When the signature completes the approval under the
// repository's policy, the store records the decision, then the database.
func (s *Service) Approve(ctx context.Context, viewer string, ref handlers.TicketRef, k int, digest string) (handlers.Decided, error) {
	ct, err := s.resolveToAct(ctx, viewer, ref)
	if err != nil {
		return "", err
	}
	v, _, err := s.decisionTarget(ctx, ct, k, digest, "approved")
	if err != nil {
		return "", err
	}
	cfg, err := s.decisionConfig(ctx, ct.repo)
	if err != nil {
		return "", err
	}
	var state versionState
	if err := s.db.Tx(ctx, func(tx *db.Tx) error {
		if _, err := mirror(ctx, tx, ct.tk.ID, v); err != nil {
			return err
		}
		var err error
		state, err = s.versionState(ctx, tx, ct.tk.ID, k)
		return err
	}); err != nil {
		return "", err
	}
	me := viewerAccount(ctx, viewer)
	if me.ID == 0 {
		// A sign-in from before the card kept user ids: which account
		// signs must be known (a login can pass to someone else).
		return "", handlers.Refusef("Sign out and sign in again before you sign: this sign-in does not say which GitHub account you are.")
	}
	if why := approvalBlock(me, ct, v, v.Number, state, cfg); why != "" {
		return "", handlers.Refusef("%s", why)
	}

	at := s.now().UTC()
	review := max(at.Sub(state.row.ReadyAt).Round(time.Second), 0)
	sig := db.Approval{VersionID: state.row.ID, ApprovedBy: viewer, ApproverID: me.ID, ApprovedAt: at, Digest: digest, ReviewSeconds: int64(review.Seconds()),
		Fast: review < cfg.Config.FastApproval}
	accounts := append(signers(state.sigs), me)
	policy := cfg.Config.Policy
	audit := func(kind string, logins []string, complete bool) db.AuditEvent {
		detail, _ := json.Marshal(map[string]any{"version": k, "digest": digest, "review_seconds": sig.ReviewSeconds, "fast": sig.Fast,
			"fast_threshold_seconds": int64(cfg.Config.FastApproval.Seconds()), "policy": policy, "signers": logins, "complete": complete, "source": decisionSourceCard})
		return db.AuditEvent{At: at, Actor: viewer, TicketID: ct.tk.ID, Kind: kind, Detail: detail}
	}

	var done bool
	if pipeline.ApprovalComplete(policy, requesterAccount(ct.tk), accounts) {
		// This signature completes the approval: the store first (it
		// refuses a version that is no longer the newest), then the
		// database.
		if _, err := s.store.Approve(ctx, ct.st, k, digest, strings.Join(logins(accounts), ", ")); err != nil {
			return "", s.storeRefusal(ctx, ct, k, err)
		}
		done = true
		// The version's row first, then the signature: the store sync
		// mirroring this approval on another replica writes them in that
		// order, and the opposite order deadlocked the two.
		err = s.db.Tx(ctx, func(tx *db.Tx) error {
			if err := tx.SetVersionDecision(ctx, state.row.ID, pipeline.VersionApproved, ""); err != nil {
				return err
			}
			if _, err := tx.Approve(ctx, sig); err != nil {
				return err
			}
			return tx.AppendAudit(ctx, audit("version.approved", logins(accounts), true))
		})
		if errors.Is(err, db.ErrAlreadySigned) {
			// The store sync mirrored this very approval from the store
			// between the two writes (and audited it): it stands.
			s.log.InfoContext(ctx, "approval mirrored by the store sync first", "ticket", ct.tk.ID, "version", k, "login", viewer)
			err = nil
		}
		if err != nil {
			// The store holds the approval: it stands, and the store sync
			// mirrors it; only this signature's timing is lost.
			s.log.ErrorContext(ctx, "approval stored but not recorded in the database", "ticket", ct.tk.ID, "version", k, "login", viewer, "err", err)
			return "", err
		}
	} else {
		// A signature that waits for another. Someone may be signing at
		// the same moment: after recording ours, read the signatures again
		// and complete the approval if they now suffice.
		var now []db.Approval
		err = s.db.Tx(ctx, func(tx *db.Tx) error {
			if _, err := tx.Approve(ctx, sig); err != nil {
				return err
			}
			return tx.AppendAudit(ctx, audit("version.signed", logins(accounts), false))
		})
		if err == nil {
			err = s.db.Tx(ctx, func(tx *db.Tx) error {
				var err error
				now, err = tx.Approvals(ctx, state.row.ID)
				return err
			})
		}
		if errors.Is(err, db.ErrAlreadySigned) {
			return "", handlers.Refusef("You signed v%d already.", k)
		}
		if err != nil {
			return "", err
		}
		if all := signers(now); pipeline.ApprovalComplete(policy, requesterAccount(ct.tk), all) {
			if done, err = s.completeLate(ctx, ct, k, digest, state.row.ID, logins(all), audit("version.approved", logins(all), true)); err != nil {
				return "", err
			}
		}
	}
	s.metrics.approvals.WithLabelValues(fmt.Sprint(sig.Fast)).Inc()
	s.metrics.review.Observe(review.Seconds())
	s.log.InfoContext(ctx, "card approval", "ticket", ct.tk.ID, "repo", ct.repo.Owner+"/"+ct.repo.Name, "version", k, "digest", digest,
		"login", viewer, "review_seconds", sig.ReviewSeconds, "fast", sig.Fast, "complete", done)
	s.callHook(ctx, ct.tk.ID)
	if !done {
		return handlers.DecidedSigned, nil
	}
	return handlers.DecidedApproved, nil
}

// completeLate approves a version whose signatures suffice after a
// concurrent signature. It reports whether this call approved it; when
// another signer's call did, the version is approved all the same.
func (s *Service) completeLate(ctx context.Context, ct cardTicket, k int, digest string, versionID int64, logins []string, event db.AuditEvent) (bool, error) {
	if _, err := s.store.Approve(ctx, ct.st, k, digest, strings.Join(logins, ", ")); err != nil {
		v, verr := s.store.Version(ctx, ct.st, k)
		if verr == nil && v.Decision != nil && v.Decision.Approved && v.Decision.Digest == digest {
			return true, nil // the other signer completed it
		}
		return false, s.storeRefusal(ctx, ct, k, err)
	}
	return true, s.db.Tx(ctx, func(tx *db.Tx) error {
		if err := tx.SetVersionDecision(ctx, versionID, pipeline.VersionApproved, ""); err != nil {
			return err
		}
		return tx.AppendAudit(ctx, event)
	})
}

// Reject implements handlers.Cards: viewer rejects version k with a
// reason; the store records it, then the database.
func (s *Service) Reject(ctx context.Context, viewer string, ref handlers.TicketRef, k int, digest, reason string) (handlers.Decided, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "", handlers.Refusef("A rejection needs a reason: say what the writer should change.")
	}
	ct, err := s.resolveToAct(ctx, viewer, ref)
	if err != nil {
		return "", err
	}
	if !ct.decides() {
		return "", handlers.Refusef("Only the requester, %s, and the repository's maintainers and admins reject a version; with write access you may sign as the second approver under policy enforce.", ct.tk.Requester)
	}
	v, vs, err := s.decisionTarget(ctx, ct, k, digest, "rejected")
	if err != nil {
		return "", err
	}
	cfg, err := s.decisionConfig(ctx, ct.repo)
	if err != nil {
		return "", err
	}
	if _, err := s.store.Reject(ctx, ct.st, k, digest, viewer, reason); err != nil {
		return "", s.storeRefusal(ctx, ct, k, err)
	}
	at := s.now().UTC()
	n := rejections(vs) + 1
	err = s.db.Tx(ctx, func(tx *db.Tx) error {
		row, err := mirror(ctx, tx, ct.tk.ID, v)
		if err != nil {
			return err
		}
		if err := tx.SetVersionDecision(ctx, row.ID, pipeline.VersionRejected, reason); err != nil {
			return err
		}
		var review int64
		if !row.ReadyAt.IsZero() {
			review = int64(max(at.Sub(row.ReadyAt), 0).Seconds())
		}
		detail, _ := json.Marshal(map[string]any{"version": k, "digest": digest, "reason": reason, "review_seconds": review,
			"rejections": n, "max_rejections": cfg.Config.MaxRejections, "stopped": cfg.Config.RejectionCapReached(n), "source": decisionSourceCard})
		return tx.AppendAudit(ctx, db.AuditEvent{At: at, Actor: viewer, TicketID: ct.tk.ID, Kind: "version.rejected", Detail: detail})
	})
	if err != nil {
		s.log.ErrorContext(ctx, "rejection stored but not recorded in the database", "ticket", ct.tk.ID, "version", k, "login", viewer, "err", err)
		return "", err
	}
	s.metrics.rejections.Inc()
	s.log.InfoContext(ctx, "card rejection", "ticket", ct.tk.ID, "repo", ct.repo.Owner+"/"+ct.repo.Name, "version", k, "digest", digest, "login", viewer, "rejections", n)
	s.callHook(ctx, ct.tk.ID)
	return handlers.DecidedRejected, nil
}

// callHook tells the sync that a decision was recorded; a failure is
// logged, the decision stands.
func (s *Service) callHook(ctx context.Context, ticketID int64) {
	if s.hook == nil {
		return
	}
	if err := s.hook(ctx, ticketID); err != nil {
		s.log.ErrorContext(ctx, "card decision hook failed", "ticket", ticketID, "err", err)
	}
}
