package store

import (
	"context"
	"fmt"
)

// OpenGraded returns the content of a version a grade was made against,
// fresh from the store, to grade it again: the version whose digest is
// digest, if it was approved with that digest, even when a newer version
// has superseded it since. It refuses a version that was never approved
// (a grade was never made against it), stored content that does not hash
// to its digest, and a card copy that is not its masked rendering.
func (r *Reader) OpenGraded(ctx context.Context, t Ticket, digest string) (*Content, Version, error) {
	vs, err := r.versions(ctx, t)
	if err != nil {
		return nil, Version{}, err
	}
	for _, v := range vs {
		if v.Digest != digest {
			continue
		}
		if d := v.Decision; d == nil || !d.Approved || d.Digest != digest {
			return nil, Version{}, fmt.Errorf("refusing to open %s v%d for a regrade: it was never approved with %s, so no grade was made against it", t, v.Number, digest)
		}
		c, err := r.content(ctx, t, v)
		if err != nil {
			return nil, Version{}, err
		}
		return c, v, nil
	}
	return nil, Version{}, fmt.Errorf("%s has no version with digest %s: %w", t, digest, ErrNotFound)
}
