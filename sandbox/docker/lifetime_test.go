package docker_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// Environment of the child process TestRunRemovedAfterItsProcessDied
// starts: the image to run and the label that finds the container.
const (
	childImageEnv = "TESTFIRST_TEST_SANDBOX_IMAGE"
	childLabelEnv = "TESTFIRST_TEST_SANDBOX_LABEL"
	childLabel    = "app.testfirst.test"
)

// TestSandboxOfADyingProcess is not a test of its own: it is the process
// TestRunRemovedAfterItsProcessDied starts and kills while its sandbox
// runs.
func TestSandboxOfADyingProcess(t *testing.T) {
	image := os.Getenv(childImageEnv)
	if image == "" {
		t.Skip("the child of TestRunRemovedAfterItsProcessDied")
	}
	d, err := docker.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Run(context.Background(), sandbox.Spec{
		Image:      image,
		Entrypoint: []string{"/bin/sh", "-c", "sleep 3; exit 7"},
		Timeout:    time.Minute,
		Limits:     sandbox.DefaultLimits,
		Labels:     map[string]string{childLabel: os.Getenv(childLabelEnv)},
	})
	t.Fatal("the sandbox ended before its process was killed")
}

// TestRunRemovedAfterItsProcessDied kills the process running a sandbox
// (SIGKILL: no deferred clean-up runs) and watches the container: once it
// ends, the engine removes it; nothing is left for a sweep.
func TestRunRemovedAfterItsProcessDied(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	label := t.Name() + "-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	t.Cleanup(func() { testenv.RemoveLabelled(cli, childLabel+"="+label) })
	child := exec.Command(os.Args[0], "-test.run=^TestSandboxOfADyingProcess$", "-test.count=1")
	child.Env = append(os.Environ(), childImageEnv+"="+g.Image, childLabelEnv+"="+label)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var running []container.Summary
	for deadline := time.Now().Add(30 * time.Second); len(running) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the child's sandbox never ran")
		}
		time.Sleep(100 * time.Millisecond)
		running = testenv.Labelled(t, cli, childLabel+"="+label, "running")
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	// The container runs on without its process; once it ends (3 s), it
	// must go.
	var left []container.Summary
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if left = testenv.Labelled(t, cli, childLabel+"="+label, ""); len(left) == 0 {
			return
		}
	}
	t.Errorf("the sandbox of a killed process is still there 20 s later: %s (%s)", left[0].ID, left[0].Status)
}

// TestRunReadsAnInstantExit: a sandbox that ends at once still has its
// exit status and output read, however fast the engine removes it.
func TestRunReadsAnInstantExit(t *testing.T) {
	for i := range 3 {
		res, err := shell(t, context.Background(), "echo out; echo err >&2; exit 5", nil)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.ExitCode != 5 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
			t.Errorf("run %d: exit %d, stdout %q, stderr %q; want 5, out, err", i, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	if l := leftovers(t); len(l) != 0 {
		t.Errorf("containers not removed: %v", l)
	}
}

// TestBuildCommitsAfterTheEnd: a build's container is not auto-removed (it
// is committed once it ended), and it is removed after the commit.
func TestBuildCommitsAfterTheEnd(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	ref := "testfirst-test-build:" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	t.Cleanup(func() { cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true}) })
	res, id, err := g.Docker.Build(context.Background(), sandbox.Build{
		Spec: sandbox.Spec{Image: g.Image, Entrypoint: []string{"/bin/sh", "-c", "cat /in.txt > /built.txt; echo done; exit 0"},
			Timeout: time.Minute, Limits: sandbox.DefaultLimits, StdoutLimit: 1 << 10, StderrLimit: 1 << 10,
			Labels: map[string]string{childLabel: t.Name()}},
		Ref:   ref,
		Files: []sandbox.LayerFile{{Path: "/in.txt", Mode: 0o644, Data: []byte("kept\n")}},
		Keep: func(r sandbox.Result) (map[string]string, bool) {
			return map[string]string{"app.testfirst.test": "1"}, r.ExitCode == 0
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if id == "" || string(res.Stdout) != "done\n" {
		t.Fatalf("image %q, stdout %q: want an image and done", id, res.Stdout)
	}
	if l := testenv.Labelled(t, cli, childLabel+"="+t.Name(), ""); len(l) != 0 {
		t.Errorf("build container not removed: %v", l)
	}
	out, err := shell(t, context.Background(), "cat /built.txt", func(s *sandbox.Spec) { s.Image = id })
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Stdout) != "kept\n" {
		t.Errorf("the committed image holds %q, want kept", out.Stdout)
	}
}

// TestRemoveLabelled kills and removes the running sandboxes of one job
// and leaves another job's; Running counts what runs.
func TestRemoveLabelled(t *testing.T) {
	g := testenv.Grading(t)
	cli := testenv.EngineClient(t)
	ctx := context.Background()
	job := strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	t.Cleanup(func() { testenv.RemoveLabelled(cli, childLabel+"="+t.Name()) })
	start := func(job string) string {
		resp, err := cli.ContainerCreate(ctx, &container.Config{Image: g.Image, Entrypoint: []string{"/bin/sleep", "1000"}, Labels: map[string]string{
			sandbox.LabelSandbox: "1", sandbox.LabelDeadline: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
			sandbox.LabelJob: job, childLabel: t.Name(),
		}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		return resp.ID
	}
	start(job)
	start(job)
	other := start(job + "0")
	if n, err := g.Docker.Running(ctx); err != nil || n < 3 {
		t.Errorf("Running = %d, %v; want at least the 3 this test started", n, err)
	}
	n, err := g.Docker.RemoveLabelled(ctx, sandbox.LabelJob, job)
	if err != nil || n != 2 {
		t.Errorf("RemoveLabelled = %d, %v; want 2", n, err)
	}
	left := testenv.Labelled(t, cli, childLabel+"="+t.Name(), "")
	if len(left) != 1 || left[0].ID != other || left[0].State != "running" {
		t.Errorf("left: %+v; want only the other job's, running", left)
	}
}
