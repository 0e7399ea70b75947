package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Object names below a ticket's prefix, per version k: claim reserves the
// number, tests.age and card.age hold the sealed bodies, meta.json is
// written last (a version without it was never completed and does not
// exist), decision.json holds the one approval or rejection.
const (
	claimObject    = "claim"
	testsObject    = "tests.age"
	cardObject     = "card.age"
	metaObject     = "meta.json"
	decisionObject = "decision.json"
)

func versionPrefix(t Ticket, k int) string { return fmt.Sprintf("%sv%d/", t.prefix(), k) }

// catalog reads version metadata and decisions: what both the Writer and
// the Reader may know.
type catalog struct {
	blobs Blobs
}

// numbers lists the version numbers that have been claimed.
func (c *catalog) numbers(ctx context.Context, t Ticket) ([]int, error) {
	names, err := c.blobs.List(ctx, t.prefix())
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var ks []int
	for _, n := range names {
		rest := strings.TrimPrefix(n, t.prefix())
		dir, _, ok := strings.Cut(rest, "/")
		if !ok || !strings.HasPrefix(dir, "v") {
			continue
		}
		k, err := strconv.Atoi(dir[1:])
		if err != nil || k < 1 || seen[k] {
			continue
		}
		seen[k] = true
		ks = append(ks, k)
	}
	return ks, nil
}

// versions returns the ticket's completed versions in order, with their
// states derived: the newest version is approved or pending unless
// rejected; an older one is rejected or superseded.
func (c *catalog) versions(ctx context.Context, t Ticket) ([]Version, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	ks, err := c.numbers(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", t, err)
	}
	var vs []Version
	for k := 1; k <= maxNumber(ks); k++ {
		v, err := c.read(ctx, t, k)
		if errors.Is(err, ErrNotFound) {
			continue // claimed but never completed
		}
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	for i := range vs {
		latest := i == len(vs)-1
		d := vs[i].Decision
		switch {
		case d != nil && !d.Approved:
			vs[i].State = StateRejected
		case !latest:
			vs[i].State = StateSuperseded
		case d != nil:
			vs[i].State = StateApproved
		default:
			vs[i].State = StatePending
		}
	}
	return vs, nil
}

func maxNumber(ks []int) int {
	m := 0
	for _, k := range ks {
		m = max(m, k)
	}
	return m
}

// read reads version k's metadata and decision; ErrNotFound when k was
// never completed.
func (c *catalog) read(ctx context.Context, t Ticket, k int) (Version, error) {
	data, err := c.blobs.Read(ctx, versionPrefix(t, k)+metaObject)
	if err != nil {
		return Version{}, err
	}
	var v Version
	if err := json.Unmarshal(data, &v); err != nil {
		return Version{}, fmt.Errorf("read %s v%d: metadata: %w", t, k, err)
	}
	if v.Number != k {
		return Version{}, fmt.Errorf("read %s v%d: metadata names version %d", t, k, v.Number)
	}
	v.Ticket = t
	data, err = c.blobs.Read(ctx, versionPrefix(t, k)+decisionObject)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Version{}, err
	default:
		var d Decision
		if err := json.Unmarshal(data, &d); err != nil {
			return Version{}, fmt.Errorf("read %s v%d: decision: %w", t, k, err)
		}
		v.Decision = &d
	}
	return v, nil
}

// version returns version k with its state.
func (c *catalog) version(ctx context.Context, t Ticket, k int) (Version, error) {
	vs, err := c.versions(ctx, t)
	if err != nil {
		return Version{}, err
	}
	for _, v := range vs {
		if v.Number == k {
			return v, nil
		}
	}
	return Version{}, fmt.Errorf("%s has no version %d (it has %d): %w", t, k, len(vs), ErrNotFound)
}
