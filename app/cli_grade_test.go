package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/sandbox"
)

func TestSandboxLimits(t *testing.T) {
	custom := sandbox.DefaultLimits
	custom.Memory, custom.NanoCPUs, custom.Pids = 512<<20, 1.5e9, 64
	tests := []struct {
		name string
		in   SandboxLimits
		want sandbox.Limits
	}{
		{"zero is the defaults", SandboxLimits{}, sandbox.DefaultLimits},
		{"defaults round trip", DefaultSandboxLimits(), sandbox.DefaultLimits},
		{"set ones replace the defaults, tmpfs sizes kept", SandboxLimits{Memory: 512 << 20, CPUs: 1.5, Pids: 64}, custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.sandboxLimits()); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGradeLocalRefusesTwoSourcesOfTests fails before any engine is
// reached: hidden tests come from a tree or from the store, not both.
func TestGradeLocalRefusesTwoSourcesOfTests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_a.py"), []byte("def test_a(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := ReadLocalTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := ParseTestsTicket("octo-org/widgets#12", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	_, err = GradeLocal(t.Context(), GradingConfig{}, LocalGradeRequest{
		Repo: tree, Tests: tree, Approved: &ApprovedTests{StoreURL: "file://" + dir, Ticket: tk, Digest: "sha256:00"},
	})
	if err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("GradeLocal with both: %v, want a refusal", err)
	}
}

func TestReadLocalTreeNamesAMissingDirectory(t *testing.T) {
	_, err := ReadLocalTree("/nonexistent/pr")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/pr") {
		t.Errorf("ReadLocalTree of a missing directory: %v, want an error naming it", err)
	}
}
