package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"filippo.io/age"
)

// Writer is the store as the web and webhook side sees it: it creates
// versions, reads their metadata and masked card copies, and records
// decisions. No method returns a canaried test body, and it holds no key
// that could decrypt one.
type Writer struct {
	catalog
	grader []age.Recipient
	card   []age.Recipient
	cardID []age.Identity
	now    func() time.Time
}

// NewWriter returns a Writer that seals test bodies to the grader's
// recipients and card copies to the card's, and reads card copies with the
// card's identities.
func NewWriter(blobs Blobs, grader, card []age.Recipient, cardIdentities []age.Identity) (*Writer, error) {
	if len(grader) == 0 {
		return nil, errors.New("store writer: no grader recipients: run testfirst keys init, or set TESTFIRST_GRADER_RECIPIENTS")
	}
	if len(card) == 0 || len(cardIdentities) == 0 {
		return nil, errors.New("store writer: no card key: run testfirst keys init, or set TESTFIRST_CARD_RECIPIENTS and TESTFIRST_CARD_IDENTITY_FILE")
	}
	return &Writer{catalog: catalog{blobs: blobs}, grader: grader, card: card, cardID: cardIdentities, now: time.Now}, nil
}

// maxClaims bounds the search for a free version number under contention.
const maxClaims = 100

// Push stores d as the ticket's next version: it adds a fresh canary to
// every Python file, computes the digest, seals the bodies to the grader
// and a masked copy to the card and the grader, and returns the version's
// metadata. The token is kept only in the sealed bodies.
func (w *Writer) Push(ctx context.Context, t Ticket, d Draft) (Version, error) {
	if err := t.validate(); err != nil {
		return Version{}, err
	}
	if err := d.validate(); err != nil {
		return Version{}, fmt.Errorf("push tests for %s: %w", t, err)
	}
	token := newCanary()
	content := &Content{Files: addCanary(d.Files, token), Criteria: d.Criteria, Reference: d.Reference}
	if content.Criteria == nil {
		content.Criteria = map[string][]string{}
	}
	digest := content.Digest()
	sealed, err := seal(content.encode(), w.grader)
	if err != nil {
		return Version{}, err
	}
	card, err := json.Marshal(cardCopy{Digest: digest, Card: Card{Files: mask(content.Files, token), Criteria: content.Criteria, Reference: content.Reference}})
	if err != nil {
		return Version{}, err
	}
	// The card copy is sealed to the grader too: the grader checks that it
	// is the masked rendering of the tests it grades, so that an approval
	// binds what the requester reviewed, not only a digest.
	sealedCard, err := seal(card, slices.Concat(w.card, w.grader))
	if err != nil {
		return Version{}, err
	}

	k, err := w.claim(ctx, t)
	if err != nil {
		return Version{}, err
	}
	v := Version{
		Ticket:       t,
		Number:       k,
		Digest:       digest,
		State:        StatePending,
		Author:       strings.TrimSpace(d.Author),
		Created:      w.now().UTC(),
		Criteria:     content.Criteria,
		HasReference: len(content.Reference) > 0,
	}
	for _, f := range content.Files {
		v.Files = append(v.Files, FileInfo{Path: f.Path, Size: len(f.Data)})
	}
	meta, err := json.Marshal(v)
	if err != nil {
		return Version{}, err
	}
	prefix := versionPrefix(t, k)
	for _, obj := range []struct {
		name string
		data []byte
	}{{testsObject, sealed}, {cardObject, sealedCard}, {metaObject, meta}} {
		if err := w.blobs.Create(ctx, prefix+obj.name, obj.data); err != nil {
			return Version{}, fmt.Errorf("push tests for %s v%d: %w", t, k, err)
		}
	}
	return v, nil
}

// claim reserves the next free version number, refusing past maxVersion.
func (w *Writer) claim(ctx context.Context, t Ticket) (int, error) {
	l, err := w.list(ctx, t)
	if err != nil {
		return 0, fmt.Errorf("push tests for %s: %w", t, err)
	}
	k := 1
	if n := len(l.claimed); n > 0 {
		k = l.claimed[n-1] + 1
	}
	for range maxClaims {
		if k > maxVersion {
			return 0, fmt.Errorf("push tests for %s: no version number left: v%d is claimed and a ticket holds at most v%d", t, maxVersion, maxVersion)
		}
		err := w.blobs.Create(ctx, versionPrefix(t, k)+claimObject, nil)
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, ErrExists) {
			return 0, fmt.Errorf("push tests for %s: %w", t, err)
		}
		k++
	}
	return 0, fmt.Errorf("push tests for %s: no free version number after %d tries", t, maxClaims)
}

// Versions lists the ticket's versions, oldest first.
func (w *Writer) Versions(ctx context.Context, t Ticket) ([]Version, error) {
	return w.versions(ctx, t)
}

// Version returns version k; the error wraps ErrNotFound when there is
// none.
func (w *Writer) Version(ctx context.Context, t Ticket, k int) (Version, error) {
	return w.version(ctx, t, k)
}

// cardCopy is the sealed card object: the masked copy and the digest of
// the version it belongs to.
type cardCopy struct {
	Digest string `json:"digest"`
	Card
}

// Card returns the masked copy of version k for the approval card.
func (w *Writer) Card(ctx context.Context, t Ticket, k int) (*Card, error) {
	v, err := w.version(ctx, t, k)
	if err != nil {
		return nil, err
	}
	data, err := w.blobs.Read(ctx, versionPrefix(t, k)+cardObject)
	if err != nil {
		return nil, fmt.Errorf("card of %s v%d: %w", t, k, err)
	}
	plain, err := unseal(data, w.cardID)
	if err != nil {
		return nil, fmt.Errorf("card of %s v%d: %w", t, k, err)
	}
	var cc cardCopy
	if err := json.Unmarshal(plain, &cc); err != nil {
		return nil, fmt.Errorf("card of %s v%d: %w", t, k, err)
	}
	if cc.Digest != v.Digest {
		return nil, fmt.Errorf("card of %s v%d belongs to %s, not to the version's %s", t, k, cc.Digest, v.Digest)
	}
	return &cc.Card, nil
}

// Approve records that by approved version k, bound to digest. It refuses a
// digest that is not version k's, a version that is not the newest, and a
// version already decided.
func (w *Writer) Approve(ctx context.Context, t Ticket, k int, digest, by string) (Version, error) {
	return w.decide(ctx, t, k, Decision{Approved: true, By: by, Digest: digest})
}

// Reject records that by rejected version k with a reason. The version is
// kept for the audit log and never graded.
func (w *Writer) Reject(ctx context.Context, t Ticket, k int, digest, by, reason string) (Version, error) {
	if strings.TrimSpace(reason) == "" {
		return Version{}, fmt.Errorf("reject %s v%d: a reason is required", t, k)
	}
	return w.decide(ctx, t, k, Decision{By: by, Digest: digest, Reason: reason})
}

func (w *Writer) decide(ctx context.Context, t Ticket, k int, d Decision) (Version, error) {
	verb := "approve"
	if !d.Approved {
		verb = "reject"
	}
	if strings.TrimSpace(d.By) == "" {
		return Version{}, fmt.Errorf("%s %s v%d: who decides is required", verb, t, k)
	}
	vs, err := w.versions(ctx, t)
	if err != nil {
		return Version{}, err
	}
	if len(vs) == 0 {
		return Version{}, fmt.Errorf("%s %s v%d: the ticket has no versions: %w", verb, t, k, ErrNotFound)
	}
	latest := vs[len(vs)-1]
	var v *Version
	for i := range vs {
		if vs[i].Number == k {
			v = &vs[i]
		}
	}
	switch {
	case v == nil:
		return Version{}, fmt.Errorf("%s %s v%d: no such version (the newest is v%d): %w", verb, t, k, latest.Number, ErrNotFound)
	case d.Digest != v.Digest:
		return Version{}, fmt.Errorf("%s %s v%d: digest %s does not match the version's %s", verb, t, k, d.Digest, v.Digest)
	case v.Decision != nil:
		return Version{}, fmt.Errorf("%s %s v%d: already %s by %s", verb, t, k, v.State, v.Decision.By)
	case v.Number != latest.Number:
		return Version{}, fmt.Errorf("%s %s v%d: a newer version v%d exists: review that one", verb, t, k, latest.Number)
	}
	d.At = w.now().UTC()
	data, err := json.Marshal(d)
	if err != nil {
		return Version{}, err
	}
	if err := w.blobs.Create(ctx, versionPrefix(t, k)+decisionObject, data); err != nil {
		if errors.Is(err, ErrExists) {
			return Version{}, fmt.Errorf("%s %s v%d: decided meanwhile by someone else", verb, t, k)
		}
		return Version{}, fmt.Errorf("%s %s v%d: %w", verb, t, k, err)
	}
	return w.version(ctx, t, k)
}
