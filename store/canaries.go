package store

import (
	"context"
	"fmt"

	"github.com/testfirst-app/testfirst/grader/detect"
)

// Canaries returns the canary of every file of every version of the
// ticket, whatever the version's state, each HiddenFile named with its
// version ("tests/test_x.py (v2)"): what an implementer hands back is
// scanned for all of them, since a rejected version's tests may have
// leaked as well as the approved one's. The tokens leave the Reader only
// to be searched for; no test body does.
func (r *Reader) Canaries(ctx context.Context, t Ticket) ([]detect.Canary, error) {
	vs, err := r.versions(ctx, t)
	if err != nil {
		return nil, err
	}
	var out []detect.Canary
	for _, v := range vs {
		data, err := r.blobs.Read(ctx, versionPrefix(t, v.Number)+testsObject)
		if err != nil {
			return nil, fmt.Errorf("canaries of %s v%d: %w", t, v.Number, err)
		}
		plain, err := unseal(data, r.ids)
		if err != nil {
			return nil, fmt.Errorf("canaries of %s v%d: the stored tests cannot be opened: %w", t, v.Number, err)
		}
		c, err := decodeContent(plain)
		if err != nil {
			return nil, fmt.Errorf("canaries of %s v%d: %w", t, v.Number, err)
		}
		hidden, err := c.HiddenTree()
		if err != nil {
			return nil, fmt.Errorf("canaries of %s v%d: %w", t, v.Number, err)
		}
		for _, cn := range detect.Canaries(hidden) {
			cn.HiddenFile = fmt.Sprintf("%s (v%d)", cn.HiddenFile, v.Number)
			out = append(out, cn)
		}
	}
	return out, nil
}
