package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

var sample = filepath.Join(testenv.RepoRoot(), "test", "testdata", "sample")

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "Usage:"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"grade without trees", []string{"grade"}, "--repo is required"},
		{"grade without tests", []string{"grade", "--repo", "."}, "--tests DIR, or --ticket and --digest"},
		{"reproduce with trees", []string{"grade", "--reproduce", "3", "--repo", "."}, "--reproduce takes the trees, tests and image from the recorded grade: drop --repo"},
		{"reproduce without id", []string{"grade", "--config", "x.yml"}, "--reproduce needs a grade id"},
		{"strength without base", []string{"grade", "--repo", ".", "--tests", ".", "--strength"}, "--strength needs --base"},
		{"grade with both", []string{"grade", "--repo", ".", "--tests", ".", "--ticket", "a/b#1", "--digest", "sha256:x"}, "give one"},
		{"ticket without digest", []string{"grade", "--repo", ".", "--ticket", "a/b#1"}, "--ticket and --digest go together"},
		{"tests without command", []string{"tests"}, "testfirst tests push"},
		{"push without ticket", []string{"tests", "push", "."}, "--ticket is required"},
		{"push bad ticket", []string{"tests", "push", "--ticket", "widgets", "."}, "want owner/repo#N"},
		{"reject without reason", []string{"tests", "reject", "--ticket", "a/b#1", "--version", "1", "--digest", "sha256:x", "--by", "me"}, "--reason is required"},
		{"keys without init", []string{"keys"}, "testfirst keys init"},
		{"bad format", []string{"grade", "--repo", ".", "--tests", ".", "--format", "xml"}, `--format "xml": want json or text`},
		{"reference without base", []string{"grade", "--repo", ".", "--tests", ".", "--reference", "x.patch"}, "--reference needs --base"},
		{"bad memory", []string{"grade", "--repo", ".", "--tests", ".", "--memory", "lots"}, `--memory "lots"`},
		{"bad cpus", []string{"grade", "--repo", ".", "--tests", ".", "--cpus", "0"}, "--cpus must be positive"},
		{"missing repo", []string{"grade", "--repo", "/nonexistent/pr", "--tests", "."}, "--repo: read tree /nonexistent/pr"},
		{"unknown flag", []string{"grade", "--colour"}, "flag provided but not defined: -colour"},
		{"stray argument", []string{"grade", "--repo", ".", "--tests", ".", "extra"}, `unexpected argument "extra"`},
		{"image without build", []string{"image"}, "usage: testfirst image build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tt.want)
			}
		})
	}
}

func TestEngineUnreachableExits2(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))
	code, _, stderr := runCLI(t, "grade", "--repo", filepath.Join(sample, "base"), "--tests", filepath.Join(sample, "hidden"))
	want := "Docker engine not reachable at unix:///nonexistent/docker.sock: start dockerd or set DOCKER_HOST"
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

// TestGradeExitStatus runs real grades through the command line: the
// reference implementation passes (0), the base fails (1), and the JSON
// report holds the contract's fields.
func TestGradeExitStatus(t *testing.T) {
	testenv.Grading(t) // builds the image or skips
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))
	base, err := tree.Load(filepath.Join(sample, "base"))
	if err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile(filepath.Join(sample, "reference.patch"))
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := tree.ApplyPatch(base, patch)
	if err != nil {
		t.Fatal(err)
	}
	pr := t.TempDir()
	mustWriteTree(t, pr, fixed)
	hidden := filepath.Join(sample, "hidden")

	code, stdout, stderr := runCLI(t, "grade", "--repo", pr, "--tests", hidden, "--base", filepath.Join(sample, "base"),
		"--reference", filepath.Join(sample, "reference.patch"), "--format", "json")
	if code != exitPass {
		t.Fatalf("grade of the reference implementation: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout)
	}
	for _, key := range []string{"verdict", "trust", "counts", "tests", "failed", "tamper_signals", "touched_tests", "contaminated",
		"base_check", "reference_check", "image", "tests_digest", "repo_digest", "output"} {
		if _, ok := rep[key]; !ok {
			t.Errorf("report lacks %q", key)
		}
	}
	if rep["verdict"] != "pass" || rep["trust"] != "isolated" {
		t.Errorf("verdict %v trust %v, want pass isolated", rep["verdict"], rep["trust"])
	}

	code, stdout, stderr = runCLI(t, "grade", "--repo", filepath.Join(sample, "base"), "--tests", hidden, "--format", "text")
	if code != exitOther {
		t.Fatalf("grade of the base: exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, want := range []string{"verdict       fail", "trust         isolated", "not passed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "NotImplementedError") {
		t.Errorf("text report shows runner output:\n%s", stdout)
	}
}

// TestBenchGrade runs the benchmark once: it must grade the bench suite
// sealed (a pass) and bare, and print the summary. Timings are recorded in
// docs/benchmarks.md, never asserted.
func TestBenchGrade(t *testing.T) {
	testenv.Grading(t)
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))
	bench := filepath.Join(testenv.RepoRoot(), "test", "testdata", "bench")
	code, stdout, stderr := runCLI(t, "bench", "grade", "--repo", filepath.Join(bench, "repo"), "--tests", filepath.Join(bench, "hidden"), "--runs", "1", "--runtime", "runsc")
	if code != exitPass || !strings.Contains(stdout, "median  sealed") || !strings.Contains(stdout, "sealed under runsc") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// mustWriteTree writes tree below dir or fails the test.
func mustWriteTree(t *testing.T, dir string, tree *tree.Tree) {
	t.Helper()
	if err := testenv.WriteTree(dir, tree); err != nil {
		t.Fatal(err)
	}
}

// TestBenchIntake runs the intake benchmark small with a CPU profile: it
// must verify exactly-once delivery and write a profile pprof can read.
// Timings are recorded in docs/benchmarks.md, never asserted.
func TestBenchIntake(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	fixtures := filepath.Join(testenv.RepoRoot(), "..", "shared", "fixtures", "github-webhooks")
	code, stdout, stderr := runCLI(t, "bench", "intake", "--deliveries", "200", "--concurrency", "8", "--burst", "100", "--fixtures", fixtures, "--cpuprofile", prof)
	if code != exitPass || !strings.Contains(stdout, "exactly once: 300 deliveries recorded, 200 jobs") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// A pprof profile is a gzipped protocol buffer.
	data, err := os.ReadFile(prof)
	if err != nil || len(data) < 100 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("CPU profile: %d bytes, %v; want a gzipped pprof profile", len(data), err)
	}
}

// TestHelp: testfirst with no arguments lists every command the binary
// runs, each with a line on what it does, and help COMMAND shows its flags.
func TestHelp(t *testing.T) {
	_, _, usage := runCLI(t)
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`case "([a-z]+)":`).FindAllStringSubmatch(string(src), -1) {
		if !regexp.MustCompile(`(?m)^  ` + m[1] + ` +\S`).MatchString(usage) {
			t.Errorf("the usage does not list %q with a description:\n%s", m[1], usage)
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "serve"}, "-config"},
		{[]string{"help", "migrate"}, "-config"},
		{[]string{"help", "grade"}, "-reference"},
		{[]string{"help", "tests", "push"}, "-criteria"},
		{[]string{"help", "tests"}, "push, list, approve, reject"},
		{[]string{"help", "image", "build"}, "-wrapper"},
	} {
		code, stdout, _ := runCLI(t, tt.args...)
		if code != exitPass || !strings.Contains(stdout, tt.want) {
			t.Errorf("%v: %d, want %q in\n%s", tt.args, code, tt.want, stdout)
		}
	}
	if code, stdout, _ := runCLI(t, "help", "frobnicate"); code != exitUsage || !strings.Contains(stdout, `unknown command "frobnicate"`) {
		t.Errorf("help of an unknown command: %d %q", code, stdout)
	}
}

// TestServeRoleFlag: --role is validated with the configuration and wins
// over TESTFIRST_ROLE; a split role on the default SQLite database is
// refused before anything starts.
func TestServeRoleFlag(t *testing.T) {
	t.Setenv("TESTFIRST_ROLE", "all")
	t.Setenv("TESTFIRST_DATABASE_URL", "")
	code, _, stderr := runCLI(t, "serve", "--role", "grader")
	if code != exitUsage || !strings.Contains(stderr, "role grader") || !strings.Contains(stderr, "PostgreSQL") {
		t.Errorf("serve --role grader on SQLite: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "serve", "--role", "web")
	if code != exitUsage || !strings.Contains(stderr, `role "web"`) {
		t.Errorf("serve --role web: exit %d\n%s", code, stderr)
	}
}
