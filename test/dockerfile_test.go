package test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestDockerfile builds the repository's Dockerfile on a machine without
// an image registry, with a local Go image passed as GO_IMAGE and the
// modules vendored into the context, then runs the image: the commands,
// its writable directories, the engine from inside it, and serve.
func TestDockerfile(t *testing.T) {
	began := time.Now()
	d := newDockerCLI(t)
	testenv.Grading(t) // the Debian base the Go image builds on
	ctxDir := dockerContext(t)
	builder := goBuilderImage(t, d, sandbox.PythonRecipe.Ref(), ctxDir)

	image := "testfirst-dockerfile-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	buildStart := time.Now()
	out, errOut, err := d.run(context.Background(), nil, "build", "--build-arg", "GO_IMAGE="+builder, "-t", image, ctxDir)
	stage := buildStageTop(out)
	t.Cleanup(func() {
		d.run(context.Background(), nil, "rmi", image)
		if stage != "" {
			// The build stage's layers, down to the Go image, which stays.
			d.run(context.Background(), nil, "rmi", stage)
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, tail(out+errOut, 60))
	}
	if stage == "" {
		t.Logf("the build stage's last image is not in docker build's output: its layers stay on the engine\n%s", tail(out, 20))
	}
	t.Logf("docker build with GO_IMAGE=%s: %s", builder, time.Since(buildStart).Round(time.Second))
	if !strings.Contains(out, "vendor/ in the build context: no module download") {
		t.Errorf("the build did not take the vendored path:\n%s", tail(out, 40))
	}

	t.Run("config", func(t *testing.T) {
		var cfg struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			WorkingDir   string
			ExposedPorts map[string]struct{}
			Env          []string
		}
		if err := json.Unmarshal([]byte(d.must(t, "image", "inspect", "-f", "{{json .Config}}", image)), &cfg); err != nil {
			t.Fatal(err)
		}
		want := cfg
		want.User = "65532:65532"
		want.Entrypoint = []string{"testfirst"}
		want.Cmd = []string{"serve"}
		want.WorkingDir = "/srv/testfirst"
		want.ExposedPorts = map[string]struct{}{"8080/tcp": {}}
		want.Env = []string{"PATH=/usr/local/bin", "TESTFIRST_WRAPPER=/usr/local/bin/testfirst-wrapper", "TESTFIRST_LISTEN=:8080"}
		if diff := cmp.Diff(want, cfg); diff != "" {
			t.Errorf("image config (-want +got):\n%s", diff)
		}
		t.Logf("image size: %s bytes", d.must(t, "image", "inspect", "-f", "{{.Size}}", image))
	})

	t.Run("commands", func(t *testing.T) {
		tests := []struct {
			name string
			args []string
			want string
		}{
			{"help", []string{image, "--help"}, "testfirst grades pull requests against hidden tests"},
			// The working directory's var/ belongs to the user the image runs as.
			{"migrate into var/", []string{image, "migrate"}, "migrations applied"},
			{"migrate into /tmp", []string{"-e", "TESTFIRST_DATABASE_URL=sqlite:///tmp/testfirst.db", image, "migrate"}, "migrations applied"},
			{"keys", []string{image, "keys", "init"}, "age1"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if out := d.must(t, append([]string{"run", "--rm"}, tt.args...)...); !strings.Contains(out, tt.want) {
					t.Errorf("docker run %s printed %q, want it to contain %q", strings.Join(tt.args, " "), out, tt.want)
				}
			})
		}
	})

	t.Run("engine", func(t *testing.T) { testEngineFromContainer(t, d, image) })

	t.Run("serve", func(t *testing.T) { testServeInContainer(t, d, image) })

	t.Logf("TestDockerfile: %s in all", time.Since(began).Round(time.Second))
}

// testEngineFromContainer reaches the host's engine from the image, as a
// deployment does to run sandboxes: without the socket and without its
// group the error says what to fix; with both, the grader image is built
// over the engine API (its Debian base exists, so no mmdebstrap is needed).
func testEngineFromContainer(t *testing.T, d *dockerCLI, image string) {
	socket := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != "unix://"+socket {
		t.Skipf("the engine is at DOCKER_HOST=%s, not the socket a container can mount", h)
	}
	info, err := os.Stat(socket)
	if err != nil {
		t.Fatal(err)
	}
	gid := info.Sys().(*syscall.Stat_t).Gid
	mount := "-v=" + socket + ":/var/run/docker.sock"

	fails := []struct {
		name string
		args []string
		want string
	}{
		{"no socket", nil, "Docker engine not reachable at unix:///var/run/docker.sock: start dockerd or set DOCKER_HOST; in a container, mount the engine's socket"},
		{"socket without its group", []string{mount}, "uid 65532 may not open its socket: add the user to the socket's group (in a container: docker run --group-add GID"},
	}
	for _, tt := range fails {
		t.Run(tt.name, func(t *testing.T) {
			if tt.args != nil && info.Mode().Perm()&0o006 == 0o006 {
				t.Skipf("%s is open to every user", socket)
			}
			args := append(append([]string{"run", "--rm"}, tt.args...), image, "image", "build")
			out, errOut, err := d.run(context.Background(), nil, args...)
			if err == nil {
				t.Fatalf("docker %s succeeded:\n%s", strings.Join(args, " "), out)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q\nwant it to contain %q", errOut, tt.want)
			}
		})
	}

	t.Run("socket and group", func(t *testing.T) {
		before := d.must(t, "images", "--format", "{{.Repository}}:{{.Tag}}", environment.GraderImageName)
		out := d.must(t, "run", "--rm", mount, "--group-add", strconv.FormatUint(uint64(gid), 10), image, "image", "build")
		fields := strings.Fields(out)
		if len(fields) != 2 || !strings.HasPrefix(fields[0], environment.GraderImageName+":") || !strings.HasPrefix(fields[1], "sha256:") {
			t.Fatalf("image build printed %q, want the grader image's reference and id", out)
		}
		if !strings.Contains("\n"+before+"\n", "\n"+fields[0]+"\n") {
			t.Cleanup(func() { d.run(context.Background(), nil, "rmi", fields[0]) })
		}
		if id := d.must(t, "image", "inspect", "-f", "{{.Id}}", fields[0]); id != fields[1] {
			t.Errorf("the engine has %s as %s, image build said %s", fields[0], id, fields[1])
		}
	})

	// The sample's base graded from inside the container: sandboxes on the
	// host's engine, trees and tests sent to them over the API.
	t.Run("grade", func(t *testing.T) {
		sample, err := filepath.Abs(sampleDir)
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, err := d.run(context.Background(), nil, "run", "--rm", mount, "--group-add", strconv.FormatUint(uint64(gid), 10),
			"-v", sample+":/sample:ro", image, "grade", "--repo", "/sample/base", "--tests", "/sample/hidden",
			"--base", "/sample/base", "--reference", "/sample/reference.patch", "--format", "json")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("grade: %v, want exit status 1 (verdict fail)\n%s%s", err, out, errOut)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("grade's report: %v\n%s", err, out)
		}
		got := struct {
			Verdict       report.Verdict
			Trust         report.Trust
			AllFailed     bool
			ReferencePass bool
			UIDSplit      bool
		}{rep.Verdict, rep.Trust, rep.Counts.Total > 0 && rep.Counts.Passed == 0, rep.ReferenceCheck != nil && rep.ReferenceCheck.AllPass, rep.Isolation.UIDSplit}
		want := got
		want.Verdict, want.Trust, want.AllFailed, want.ReferencePass, want.UIDSplit = report.VerdictFail, report.TrustIsolated, true, true, true
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("grade of the sample's base (-want +got):\n%s\nreasons: %v", diff, rep.Reasons)
		}
	})
}

// testServeInContainer runs the image's default command, serve, without
// app credentials, and asks it for its health and its registration page
// through a published port; docker stop ends it cleanly.
func testServeInContainer(t *testing.T, d *dockerCLI, image string) {
	id := d.must(t, "run", "-d", "-p", "127.0.0.1::8080", image)
	t.Cleanup(func() { d.run(context.Background(), nil, "rm", "-f", id) })
	addr := strings.Fields(d.must(t, "port", id, "8080/tcp"))[0]

	var health string
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				health = string(body)
				break
			}
		}
		if time.Now().After(deadline) {
			logs, errLogs, _ := d.run(context.Background(), nil, "logs", id)
			t.Fatalf("GET /healthz did not answer 200 within 30s (last error %v)\n%s%s", err, logs, errLogs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if strings.TrimSpace(health) != "ok" {
		t.Errorf("GET /healthz = %q, want ok", health)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Register testfirst as a GitHub App") {
		t.Errorf("GET / = %d, want 200 with the registration page:\n%s", resp.StatusCode, page)
	}

	stopped := time.Now()
	d.must(t, "stop", id)
	if took := time.Since(stopped); took > 8*time.Second {
		t.Errorf("docker stop took %s: serve did not stop on SIGTERM", took)
	}
	if code := d.must(t, "inspect", "-f", "{{.State.ExitCode}}", id); code != "0" {
		t.Errorf("serve exited with %s after docker stop, want 0", code)
	}
	_, logs, _ := d.run(context.Background(), nil, "logs", id)
	for _, want := range []string{`"msg":"listening"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("serve's log lacks %s:\n%s", want, logs)
		}
	}
}
