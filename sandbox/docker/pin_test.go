package docker_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/image"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestRunKeepsTheImageItResolved: an engine resolves an image's tag to
// its id once, when it builds or first finds it (the grader image at
// startup, an environment's image on its first grade), and runs that id
// for as long as it lives. Someone who moves the tag to another image
// between two grades does not get their image run: today the next run
// followed the tag. The honest shapes beside it: an image the engine
// never resolved runs as its tag says now, and one it resolved runs after
// the tag moved as before.
func TestRunKeepsTheImageItResolved(t *testing.T) {
	g := testenv.Grading(t)
	d := testenv.Docker(t)
	cli := testenv.EngineClient(t)
	ctx := t.Context()
	// Images of this test's own, on the grader image: the tags other
	// tests use on this engine are left alone.
	name := "testfirst-test-pin-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	layer := func(name, marker string) sandbox.Layer {
		return sandbox.Layer{Name: name, Base: g.ImageID, Entrypoint: []string{"/bin/sh"},
			Files: []sandbox.LayerFile{{Path: "/marker", Mode: 0o644, Data: []byte(marker)}}}
	}
	ref, id, err := d.EnsureLayer(ctx, layer(name, "genuine"))
	if err != nil {
		t.Fatal(err)
	}
	// The other image, made by another engine (another process).
	otherRef, otherID, err := testenv.Docker(t).EnsureLayer(ctx, layer(name+"-other", "other"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range []string{ref, otherRef, id, otherID} {
			cli.ImageRemove(context.Background(), r, image.RemoveOptions{Force: true, PruneChildren: true})
		}
	})
	run := func(ref string) string {
		t.Helper()
		res, err := d.Run(ctx, sandbox.Spec{Image: ref, Entrypoint: []string{"/bin/sh", "-c", "cat /marker"}, Timeout: time.Minute,
			Limits: sandbox.DefaultLimits, Labels: map[string]string{"app.testfirst.test": t.Name()}, StdoutLimit: 1 << 10, StderrLimit: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Stdout)
	}
	if got := run(ref); got != "genuine" {
		t.Fatalf("the image's run printed %q, want genuine", got)
	}

	// The tag is moved to the other image between two runs.
	if err := cli.ImageTag(ctx, otherID, ref); err != nil {
		t.Fatal(err)
	}
	if got := run(ref); got != "genuine" {
		t.Errorf("after its tag was moved to another image, a run of %s printed %q: it ran that image", ref, got)
	}
	// A grade's environment asks for its layer again: the id resolved
	// before, not the tag's new one.
	if _, again, err := d.EnsureLayer(ctx, layer(name, "genuine")); err != nil || again != id {
		t.Errorf("EnsureLayer after the tag moved: %s, %v; want %s", again, err, id)
	}
	if found, _, ok, err := d.FindImage(ctx, ref); err != nil || !ok || found != id {
		t.Errorf("FindImage after the tag moved: %s, %t, %v; want %s", found, ok, err, id)
	}

	// Honest: an image this engine never resolved runs as its tag says,
	// and so does an id.
	if got := run(otherRef); got != "other" {
		t.Errorf("a run of %s printed %q, want other", otherRef, got)
	}
	if got := run(id); got != "genuine" {
		t.Errorf("a run of %s printed %q, want genuine", id, got)
	}

	// The resolved image is removed from the engine: a run of its tag
	// fails and says so (never the tag's image in its place); the layer,
	// asked for again, is built again from what it is made of.
	if _, err := cli.ImageRemove(ctx, id, image.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(ctx, sandbox.Spec{Image: ref, Entrypoint: []string{"/bin/true"}, Timeout: time.Minute, Limits: sandbox.DefaultLimits,
		Labels: map[string]string{"app.testfirst.test": t.Name()}}); err == nil || !strings.Contains(err.Error(), "is gone from the engine") {
		t.Errorf("a run of a removed pinned image: %v, want it to say the image is gone", err)
	}
	_, rebuilt, err := d.EnsureLayer(ctx, layer(name, "genuine"))
	if err != nil || rebuilt == id || rebuilt == otherID {
		t.Fatalf("EnsureLayer after the image was removed: %s, %v; want a new build", rebuilt, err)
	}
	t.Cleanup(func() { cli.ImageRemove(context.Background(), rebuilt, image.RemoveOptions{Force: true}) })
	if got := run(ref); got != "genuine" {
		t.Errorf("after the rebuild a run of %s printed %q, want genuine", ref, got)
	}
}
