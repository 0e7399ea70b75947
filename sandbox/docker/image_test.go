package docker_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// A container deployment has no mmdebstrap: a missing base image must say
// how to get it onto the engine, not only how to install mmdebstrap.
func TestEnsureDebianImageWithoutMmdebstrap(t *testing.T) {
	d := testenv.Docker(t)
	t.Setenv("PATH", t.TempDir())
	r := sandbox.DebianRecipe{Name: "testfirst-test-never-built", Suite: "bookworm", Variant: "apt", Packages: []string{"python3"}}
	_, err := d.EnsureDebianImage(context.Background(), r, io.Discard)
	if err == nil {
		t.Fatal("EnsureDebianImage succeeded without mmdebstrap")
	}
	for _, want := range []string{
		"build image " + r.Ref() + ": the engine at ",
		"mmdebstrap, which builds it from Debian's packages, is not installed here",
		"apt-get install mmdebstrap",
		"testfirst image build",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
}
