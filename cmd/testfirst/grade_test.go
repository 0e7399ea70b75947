package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/sandbox"
)

// gradeRequestFlags parses grade's flags as the command does.
func gradeRequestFlags(t *testing.T, args ...string) *gradeFlags {
	t.Helper()
	var f gradeFlags
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f
}

func TestSandboxLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_a.py"), []byte("def test_a(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	custom := sandbox.DefaultLimits
	custom.Memory, custom.NanoCPUs, custom.Pids = 512<<20, 1.5e9, 64
	tests := []struct {
		name  string
		flags []string
		want  sandbox.Limits
	}{
		{"no flags are the defaults", nil, sandbox.DefaultLimits},
		{"defaults round trip", []string{"--memory", "1g", "--cpus", "2", "--pids", "256"}, sandbox.DefaultLimits},
		{"set ones replace the defaults, tmpfs sizes kept", []string{"--memory", "512m", "--cpus", "1.5", "--pids", "64"}, custom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := gradeRequestFlags(t, append([]string{"--repo", dir, "--tests", dir}, tt.flags...)...)
			req, _, err := f.request()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, req.Limits); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGradeRefusesTwoSourcesOfTests fails before any engine is reached:
// hidden tests come from a tree or from the store, not both.
func TestGradeRefusesTwoSourcesOfTests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test_a.py"), []byte("def test_a(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	f := gradeRequestFlags(t, "--repo", dir, "--tests", dir, "--store", "file://"+dir, "--ticket", "octo-org/widgets#12", "--digest", "sha256:00")
	_, _, err := f.request()
	if err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("grade with both: %v, want a refusal", err)
	}
}

func TestGradeNamesAMissingDirectory(t *testing.T) {
	f := gradeRequestFlags(t, "--repo", "/nonexistent/pr", "--tests", t.TempDir())
	_, _, err := f.request()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/pr") {
		t.Errorf("grade of a missing directory: %v, want an error naming it", err)
	}
}

// TestGradeEnvironmentFlags: a Python Debian does not give, a network
// other than none or mirror, and an image of one's own with environment
// flags are refused before any engine is reached.
func TestGradeEnvironmentFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--python", "3.9"}, `--python: python "3.9": pick one of ["3.11" "3.13"]`},
		{[]string{"--network", "host"}, `--network "host": want none or mirror`},
		{[]string{"--image", "mine:1", "--python", "3.13"}, "--image is an image of one's own"},
		{[]string{"--image", "mine:1", "--network", "mirror"}, "--image is an image of one's own"},
	} {
		f := gradeRequestFlags(t, append([]string{"--repo", dir, "--tests", dir}, tt.args...)...)
		_, _, err := f.request()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("grade %q: %v, want %q", tt.args, err, tt.want)
		}
	}
	f := gradeRequestFlags(t, "--repo", dir, "--tests", dir, "--python", "3.13", "--network", "mirror")
	req, _, err := f.request()
	if err != nil || req.Python != "3.13" || !req.Mirror {
		t.Errorf("grade --python 3.13 --network mirror: %+v, %v", req, err)
	}
}
