package jobs

import (
	"slices"
	"testing"

	"github.com/testfirst-app/testfirst/github"
)

// TestEventsCoverHandled: every event testfirst handles is one it
// subscribes to, or one GitHub sends every app; the webhook reads the
// payloads of exactly the events of the table.
func TestEventsCoverHandled(t *testing.T) {
	sentToAll := []string{"installation", "installation_repositories", "ping"}
	for _, e := range github.HandledEvents {
		if !slices.Contains(Events(), e) && !slices.Contains(sentToAll, e) {
			t.Errorf("handled event %s is not in Events", e)
		}
	}
	for _, e := range Events() {
		if !slices.Contains(github.HandledEvents, e) {
			t.Errorf("Events subscribes to %s, which is not handled", e)
		}
	}
	handled := slices.Sorted(slices.Values(github.HandledEvents))
	if !slices.Equal(handled, HandledEvents()) {
		t.Errorf("github.HandledEvents %v, the event table's %v", handled, HandledEvents())
	}
	for _, h := range eventHandlers {
		for _, a := range h.actions {
			if !NeedsJob(h.event, a) {
				t.Errorf("%s.%s is in the table but needs no job", h.event, a)
			}
		}
	}
	if NeedsJob("issues", "assigned") || NeedsJob("ping", "") || NeedsJob("push", "") {
		t.Error("a delivery outside the table needs a job")
	}
}
