package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"filippo.io/age"
)

// Reader is the store as the grader sees it: it opens the approved version
// of a ticket for grading, and a pending version for its base check;
// nothing else.
type Reader struct {
	catalog
	ids []age.Identity
}

// NewReader returns a Reader that decrypts with the grader's identities.
func NewReader(blobs Blobs, grader []age.Identity) (*Reader, error) {
	if len(grader) == 0 {
		return nil, errors.New("store reader: no grader identity: set TESTFIRST_GRADER_IDENTITY_FILE or run testfirst keys init")
	}
	return &Reader{catalog: catalog{blobs: blobs}, ids: grader}, nil
}

// Open returns the content of the ticket's approved version, fresh from
// the store, if digest is that version's digest. It refuses a digest that
// belongs to a pending, rejected or superseded version, or to none, stored
// content that does not hash to its digest, and a version whose card copy
// (what the requester reviewed) is not the masked rendering of that
// content.
func (r *Reader) Open(ctx context.Context, t Ticket, digest string) (*Content, Version, error) {
	vs, err := r.versions(ctx, t)
	if err != nil {
		return nil, Version{}, err
	}
	if len(vs) == 0 {
		return nil, Version{}, fmt.Errorf("%s has no hidden tests: %w", t, ErrNotFound)
	}
	var approved *Version
	if latest := vs[len(vs)-1]; latest.State == StateApproved {
		approved = &latest
	}
	if approved == nil || approved.Digest != digest {
		for _, v := range vs {
			if v.Digest == digest && (approved == nil || v.Number != approved.Number) {
				return nil, Version{}, fmt.Errorf("refusing to grade %s with %s: that is v%d, which is %s, not the approved version%s", t, digest, v.Number, v.State, approvedSuffix(approved))
			}
		}
		return nil, Version{}, fmt.Errorf("refusing to grade %s with %s: no version has that digest%s", t, digest, approvedSuffix(approved))
	}
	v := *approved
	if v.Decision.Digest != v.Digest {
		return nil, Version{}, fmt.Errorf("refusing to grade %s v%d: the approval binds %s, the version is %s", t, v.Number, v.Decision.Digest, v.Digest)
	}
	c, err := r.content(ctx, t, v)
	if err != nil {
		return nil, Version{}, err
	}
	return c, v, nil
}

// OpenForCheck returns the content of version k for its base check, which
// runs before anyone decides on it: it refuses a version that is not
// pending, whose digest is not digest, whose stored content does not hash
// to it, or whose card copy is not its masked rendering. What the base
// check learns goes to the card, never to the implementer.
func (r *Reader) OpenForCheck(ctx context.Context, t Ticket, k int, digest string) (*Content, Version, error) {
	v, err := r.version(ctx, t, k)
	if err != nil {
		return nil, Version{}, err
	}
	if v.State != StatePending {
		return nil, Version{}, fmt.Errorf("refusing to check %s v%d: it is %s, not pending", t, k, v.State)
	}
	if v.Digest != digest {
		return nil, Version{}, fmt.Errorf("refusing to check %s v%d: its digest is %s, not %s", t, k, v.Digest, digest)
	}
	c, err := r.content(ctx, t, v)
	if err != nil {
		return nil, Version{}, err
	}
	return c, v, nil
}

// content reads, unseals and verifies version v's tests.
func (r *Reader) content(ctx context.Context, t Ticket, v Version) (*Content, error) {
	data, err := r.blobs.Read(ctx, versionPrefix(t, v.Number)+testsObject)
	if err != nil {
		return nil, fmt.Errorf("open %s v%d: %w", t, v.Number, err)
	}
	plain, err := unseal(data, r.ids)
	if err != nil {
		return nil, fmt.Errorf("refusing to grade %s v%d: the stored tests cannot be opened (changed after they were written, or sealed to another key): %w", t, v.Number, err)
	}
	c, err := decodeContent(plain)
	if err != nil {
		return nil, fmt.Errorf("refusing to grade %s v%d: %w", t, v.Number, err)
	}
	if got := c.Digest(); got != v.Digest {
		return nil, fmt.Errorf("refusing to grade %s v%d: the stored tests hash to %s, not to the approved %s", t, v.Number, got, v.Digest)
	}
	if err := r.checkCard(ctx, t, v.Number, c, v.Digest); err != nil {
		return nil, err
	}
	return c, nil
}

// checkCard checks that version k's card copy, the one the requester
// reviewed before approving, is exactly the masked rendering of c: the
// approval then binds what the requester saw, not only a digest string.
func (r *Reader) checkCard(ctx context.Context, t Ticket, k int, c *Content, digest string) error {
	token := c.Canary()
	if token == "" {
		return fmt.Errorf("refusing to grade %s v%d: the stored tests carry no canary token, or several", t, k)
	}
	data, err := r.blobs.Read(ctx, versionPrefix(t, k)+cardObject)
	if err != nil {
		return fmt.Errorf("refusing to grade %s v%d: the card copy the requester reviewed: %w", t, k, err)
	}
	plain, err := unseal(data, r.ids)
	if err != nil {
		return fmt.Errorf("refusing to grade %s v%d: the card copy the requester reviewed cannot be opened (changed after it was written, or not sealed to the grader): %w", t, k, err)
	}
	var cc cardCopy
	if err := json.Unmarshal(plain, &cc); err != nil {
		return fmt.Errorf("refusing to grade %s v%d: the card copy the requester reviewed: %w", t, k, err)
	}
	want := Content{Files: mask(c.Files, token), Criteria: c.Criteria, Reference: c.Reference}
	got := Content{Files: cc.Files, Criteria: cc.Criteria, Reference: cc.Reference}
	if cc.Digest != digest || !bytes.Equal(got.encode(), want.encode()) {
		return fmt.Errorf("refusing to grade %s v%d: the card copy the requester reviewed does not match the tests", t, k)
	}
	return nil
}

func approvedSuffix(v *Version) string {
	if v == nil {
		return " (the ticket has no approved version)"
	}
	return fmt.Sprintf(" (approved: v%d %s)", v.Number, v.Digest)
}
