package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
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

// maxVersion is the highest version number a ticket can have. Version
// directories are named v1 … v999999, without leading zeros; anything else
// under a ticket's prefix is ignored, so that no object name can make the
// store loop, overflow or read a million objects.
const maxVersion = 999999

var versionDir = regexp.MustCompile(`^v[1-9][0-9]{0,5}$`)

// catalog reads version metadata and decisions: what both the Writer and
// the Reader may know.
type catalog struct {
	blobs Blobs
}

// listing is what one List of a ticket's prefix says about its versions.
type listing struct {
	// claimed lists, sorted, the numbers of the version directories that
	// hold any object.
	claimed []int
	// completed says which of them hold a meta.json.
	completed map[int]bool
}

// list lists the ticket's version directories. Only the names it lists
// are ever read: the cost of reading a ticket is bounded by the objects it
// has, never by the numbers they carry.
func (c *catalog) list(ctx context.Context, t Ticket) (listing, error) {
	names, err := c.blobs.List(ctx, t.prefix())
	if err != nil {
		return listing{}, err
	}
	l := listing{completed: map[int]bool{}}
	seen := map[int]bool{}
	for _, n := range names {
		rest := strings.TrimPrefix(n, t.prefix())
		dir, obj, ok := strings.Cut(rest, "/")
		if !ok || !versionDir.MatchString(dir) {
			continue
		}
		k, err := strconv.Atoi(dir[1:])
		if err != nil || k < 1 || k > maxVersion {
			continue
		}
		if obj == metaObject {
			l.completed[k] = true
		}
		if !seen[k] {
			seen[k] = true
			l.claimed = append(l.claimed, k)
		}
	}
	slices.Sort(l.claimed)
	return l, nil
}

// versions returns the ticket's completed versions in order, with their
// states derived: the newest version is approved or pending unless
// rejected; an older one is rejected or superseded.
func (c *catalog) versions(ctx context.Context, t Ticket) ([]Version, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	l, err := c.list(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", t, err)
	}
	var vs []Version
	for _, k := range l.claimed {
		if !l.completed[k] {
			continue // claimed but never completed
		}
		v, err := c.read(ctx, t, k)
		if errors.Is(err, ErrNotFound) {
			continue
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
