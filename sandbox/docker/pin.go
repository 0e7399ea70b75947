package docker

import (
	"context"
	"strings"
	"sync"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/errdefs"
)

// pins holds the image id each tag named when this engine built or first
// found it (the grader image at startup, an environment's image on its
// first grade). A tag is a name anyone with the engine's socket can move to
// another image; the engine runs, builds on and reports the id it
// resolved, for as long as it lives, so an image tagged in between two
// grades is never run in place of the one resolved.
type pins struct {
	mu  sync.Mutex
	ids map[string]string // tag → image id
}

// pinned is the id ref was pinned to, if it was.
func (p *pins) pinned(ref string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok := p.ids[ref]
	return id, ok
}

// pin records that ref names id; an id itself is not pinned.
func (p *pins) pin(ref, id string) {
	if ref == "" || id == "" || ref == id || strings.HasPrefix(ref, "sha256:") {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]string{}
	}
	p.ids[ref] = id
}

// unpin forgets ref's pin, if it is still id.
func (p *pins) unpin(ref, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[ref] == id {
		delete(p.ids, ref)
	}
}

// runImage is the image a container of ref is made from: the id ref was
// pinned to, or ref itself.
func (d *Engine) runImage(ref string) string {
	if id, ok := d.pins.pinned(ref); ok {
		return id
	}
	return ref
}

// inspect inspects the image ref names, pinning ref to its id. A pinned
// ref is inspected by its pinned id whatever the tag names now; when that
// image is gone (removed on the engine) the answer is not found, and the
// ref is unpinned, so that the caller builds the image again rather than
// take whatever the tag names.
func (d *Engine) inspect(ctx context.Context, ref string) (image.InspectResponse, error) {
	if id, ok := d.pins.pinned(ref); ok {
		info, err := d.eng.ImageInspect(ctx, id)
		if errdefs.IsNotFound(err) {
			d.pins.unpin(ref, id)
			return info, errdefs.NotFound(errImageGone{ref: ref, id: id})
		}
		return info, err
	}
	info, err := d.eng.ImageInspect(ctx, ref)
	if err != nil {
		return info, err
	}
	d.pins.pin(ref, info.ID)
	return info, nil
}

// errImageGone says a pinned image was removed from the engine.
type errImageGone struct{ ref, id string }

func (e errImageGone) Error() string {
	return "image " + e.ref + " was " + e.id + " when first resolved, and that image is gone from the engine"
}
