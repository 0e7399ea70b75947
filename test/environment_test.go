package test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/sandbox/egress"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// indexAddr is where the test's package index listens when it can: the
// index URL is part of an environment's hash, so a fixed one keeps the
// environment images of earlier runs usable.
const indexAddr = "127.0.0.1:38917"

// buildWheel builds a wheel of a one-module package with Debian's python3,
// setuptools and wheel, and returns its file name and bytes.
func buildWheel(t *testing.T, name, version string) (string, []byte) {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"setup.py":   fmt.Sprintf("from setuptools import setup\nsetup(name=%q, version=%q, py_modules=[%q])\n", name, version, name),
		name + ".py": fmt.Sprintf("VERSION = %q\n\ndef greet():\n    return 'hello from %s ' + VERSION\n", version, name),
	}
	for p, d := range files {
		if err := os.WriteFile(filepath.Join(src, p), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	cmd := exec.Command("/usr/bin/python3", "setup.py", "-q", "bdist_wheel", "--dist-dir", out)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=315532800")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build wheel %s %s with Debian's python3 (apt-get install python3-setuptools python3-wheel): %v\n%s", name, version, err, b)
	}
	ents, err := os.ReadDir(out)
	if err != nil || len(ents) != 1 {
		t.Fatalf("wheel output: %v %v", ents, err)
	}
	data, err := os.ReadFile(filepath.Join(out, ents[0].Name()))
	if err != nil {
		t.Fatal(err)
	}
	return ents[0].Name(), data
}

// packageIndex serves wheels as a PEP 503 simple index on 127.0.0.1 and
// returns its URL.
func packageIndex(t *testing.T, wheels map[string][]byte) string {
	t.Helper()
	return serveIndex(t, wheels, indexAddr, nil)
}

// serveIndex serves files (wheels and sdists, each listed under the
// project its name starts with) as a PEP 503 simple index on addr, or on a
// random loopback port when addr is taken, each request passed through
// wrap when it is set, and returns the index's URL.
func serveIndex(t *testing.T, wheels map[string][]byte, addr string, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	projects := map[string][]string{}
	for name := range wheels {
		// PEP 503's normalized name: a wheel's python_dateutil is
		// asked for as python-dateutil.
		project := strings.Join(strings.FieldsFunc(strings.ToLower(strings.SplitN(name, "-", 2)[0]), func(r rune) bool {
			return r == '_' || r == '.' || r == '-'
		}), "-")
		projects[project] = append(projects[project], name)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/", func(w http.ResponseWriter, r *http.Request) {
		project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		w.Header().Set("Content-Type", "text/html")
		if project == "" {
			fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
			for p := range projects {
				fmt.Fprintf(w, "<a href=\"/simple/%s/\">%s</a>\n", p, p)
			}
			fmt.Fprint(w, "</body></html>\n")
			return
		}
		if project == "slowpkg" {
			// An index that never answers: a build must time out.
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Minute):
			}
			return
		}
		names, ok := projects[project]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, n := range names {
			fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%x\">%s</a>\n", n, sha256.Sum256(wheels[n]), n)
		}
		fmt.Fprint(w, "</body></html>\n")
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		data, ok := wheels[path.Base(r.URL.Path)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
	})
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Logf("package index: %s is taken (%v): a random port, so environments are built afresh", addr, err)
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(mux)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/simple/"
}

// mountRecorder passes every call to the engine and keeps the host
// configuration of every container created, to check afterwards that no
// container had a network or a mount but the egress socket.
type mountRecorder struct {
	docker.Client
	mu    sync.Mutex
	hosts []container.HostConfig
	cfgs  []container.Config
}

func (m *mountRecorder) ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, netCfg *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error) {
	m.mu.Lock()
	m.hosts = append(m.hosts, *host)
	m.cfgs = append(m.cfgs, *cfg)
	m.mu.Unlock()
	return m.Client.ContainerCreate(ctx, cfg, host, netCfg, platform, name)
}

// envGrading opens a grader with dependency environments from index.
func envGrading(t *testing.T, index string) (*app.Grading, *mountRecorder, func() []egress.Entry) {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		testenv.Unavailable(t, err)
	}
	rec := &mountRecorder{Client: cli}
	ctx := context.Background()
	engine, err := docker.NewWithClient(ctx, rec)
	if err != nil {
		testenv.Unavailable(t, err)
	}
	var mu sync.Mutex
	var log []egress.Entry
	g, err := app.OpenGrading(ctx, app.GradingConfig{Wrapper: testenv.Wrapper(t), Progress: os.Stderr, Docker: engine,
		Environments: true, PackageIndex: index, EgressLog: func(e egress.Entry) {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, e)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, rec, func() []egress.Entry {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(log)
	}
}

// TestEnvironments grades a project that imports a third-party package,
// served by a local package index the test builds from its own wheels: the
// environment is built once from the base's requirements and reused, a
// pull request that edits them is graded with the base's, a package the
// index lacks is a clear error, and the grade itself reaches the index only
// with network mirror, read-only.
func TestEnvironments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dependency environments")
	}
	n1, w1 := buildWheel(t, "greetlib", "1.0")
	n2, w2 := buildWheel(t, "greetlib", "2.0")
	// A "pytest" the index offers: installed, it would replace the
	// grader's runner.
	n3, w3 := buildWheel(t, "pytest", "99.0")
	// A package whose module Python runs at every start, before the
	// grader's plugin.
	n4, w4 := buildWheel(t, "sitecustomize", "1.0")
	index := packageIndex(t, map[string][]byte{n1: w1, n2: w2, n3: w3, n4: w4})
	g, rec, egressLog := envGrading(t, index)
	ctx := context.Background()

	project := map[string]string{
		"app.py":           "import greetlib\n\ndef hello():\n    return greetlib.greet()\n",
		"requirements.txt": "greetlib==1.0\n",
	}
	hidden := treeOf(t, map[string]string{"test_hello.py": `from app import hello


def test_hello():
    assert hello() == "hello from greetlib 1.0"


def test_twice():
    assert hello() + hello() == "hello from greetlib 1.0hello from greetlib 1.0"
`})

	t.Run("built once, then reused", func(t *testing.T) {
		// A requirements file of its own, so this run builds afresh; the
		// image is removed after.
		fresh := maps(project, "requirements.txt", fmt.Sprintf("greetlib==1.0  # run %d\n", time.Now().UnixNano()))
		base := treeOf(t, fresh)
		req := grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute}
		// Two grades of one new environment at once build it once.
		var wg sync.WaitGroup
		reps := make([]*report.Report, 2)
		errs := make([]error, 2)
		secs := make([]float64, 2)
		for i := range reps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				began := time.Now()
				reps[i], errs[i] = g.Grader.Grade(ctx, req)
				secs[i] = time.Since(began).Seconds()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("grade %d: %v", i, err)
			}
		}
		t.Cleanup(func() {
			cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
			if err == nil {
				cli.ImageRemove(context.Background(), reps[0].Environment.Image, image.RemoveOptions{PruneChildren: true, Force: true})
			}
		})
		built := 0
		for i, rep := range reps {
			if rep.Verdict != report.VerdictPass || rep.Environment == nil {
				t.Fatalf("grade %d: %s %q\n%s", i, rep.Verdict, rep.Reasons, rep.Output)
			}
			if !rep.Environment.Cached {
				built++
			}
			if !slices.Equal(rep.Environment.Packages, []string{"greetlib==1.0"}) || !slices.Equal(rep.Environment.BuiltFrom, []string{"requirements.txt"}) {
				t.Errorf("grade %d environment = %+v", i, rep.Environment)
			}
		}
		if built != 1 || reps[0].Environment.Image != reps[1].Environment.Image {
			t.Errorf("two grades at once: %d built, images %s %s; want one build of one image", built, reps[0].Environment.Image, reps[1].Environment.Image)
		}
		began := time.Now()
		again, err := g.Grader.Grade(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if again.Verdict != report.VerdictPass || !again.Environment.Cached || again.Environment.BuildSeconds != 0 {
			t.Errorf("second grade: %s, environment %+v; want a pass in the cached image", again.Verdict, again.Environment)
		}
		buildSecs := max(reps[0].Environment.BuildSeconds, reps[1].Environment.BuildSeconds)
		t.Logf("first grades (building): %.1fs and %.1fs, build %.1fs; second grade (cached): %.1fs", secs[0], secs[1], buildSecs, time.Since(began).Seconds())

		var paths []string
		for _, e := range egressLog() {
			if e.Status == 200 {
				paths = append(paths, e.Method+" "+e.Path)
			}
		}
		if !slices.Contains(paths, "GET /simple/greetlib/") || !slices.Contains(paths, "GET /files/"+n1) {
			t.Errorf("egress log %q: want the index page and the wheel", paths)
		}
	})

	t.Run("a cancelled grade does not fail the others waiting on its build", func(t *testing.T) {
		fresh := maps(project, "requirements.txt", fmt.Sprintf("greetlib==1.0  # cancelled run %d\n", time.Now().UnixNano()))
		req := grader.Request{Repo: treeOf(t, fresh), Hidden: hidden, Timeout: 5 * time.Minute}
		first, cancel := context.WithCancel(ctx)
		firstErr := make(chan error, 1)
		go func() {
			_, err := g.Grader.Grade(first, req)
			firstErr <- err
		}()
		// The second grade joins the build the first one started; the
		// first is then cancelled while the build runs.
		time.Sleep(300 * time.Millisecond)
		second := make(chan *report.Report, 1)
		secondErr := make(chan error, 1)
		go func() {
			rep, err := g.Grader.Grade(ctx, req)
			second <- rep
			secondErr <- err
		}()
		time.Sleep(300 * time.Millisecond)
		cancel()
		if err := <-firstErr; err == nil {
			t.Log("the first grade finished before it was cancelled")
		}
		rep, err := <-second, <-secondErr
		if err != nil {
			t.Fatalf("the second grade failed with the first one's cancellation: %v", err)
		}
		t.Cleanup(func() {
			cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
			if err == nil && rep.Environment != nil {
				cli.ImageRemove(context.Background(), rep.Environment.Image, image.RemoveOptions{PruneChildren: true, Force: true})
			}
		})
		if rep.Verdict != report.VerdictPass {
			t.Fatalf("second grade: %s %q\n%s", rep.Verdict, rep.Reasons, rep.Output)
		}
	})

	t.Run("a pull request that edits requirements.txt", func(t *testing.T) {
		// The base does not greet yet; the pull request does, and asks for
		// greetlib 2.0, which would fail the hidden tests.
		base := treeOf(t, maps(project, "app.py", "def hello():\n    return 'not yet'\n"))
		head := treeOf(t, maps(project, "requirements.txt", "greetlib==2.0\n"))
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: head, Base: base, Hidden: hidden, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != report.VerdictPass || !slices.Equal(rep.Environment.Packages, []string{"greetlib==1.0"}) {
			t.Fatalf("verdict %s %q, environment %+v: want a pass with the base's greetlib 1.0\n%s", rep.Verdict, rep.Reasons, rep.Environment, rep.Output)
		}
		if !slices.Equal(rep.Environment.IgnoredChanges, []string{"requirements.txt"}) ||
			!slices.Contains(rep.Reasons, "the pull request changes requirements.txt: graded with the base's environment") {
			t.Errorf("report does not say the change was ignored: %+v %q", rep.Environment, rep.Reasons)
		}
	})

	t.Run("a package the index lacks", func(t *testing.T) {
		// The rest is installed and the grade goes on: the hidden tests
		// need greetlib only.
		base := treeOf(t, maps(project, "requirements.txt", "greetlib==1.0\nnosuchpkg>=1\n"))
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		wantWhy := fmt.Sprintf("nosuchpkg>=1: the package index %s has no distribution that meets it", index)
		if rep.Verdict != report.VerdictPass || rep.Environment == nil || !slices.Equal(rep.Environment.Unavailable, []string{wantWhy}) ||
			!slices.Contains(rep.Environment.Packages, "greetlib==1.0") {
			t.Fatalf("verdict %s %q, environment %+v: want a pass in greetlib's environment, nosuchpkg named as not installed\n%s", rep.Verdict, rep.Reasons, rep.Environment, rep.Output)
		}
		if !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, wantWhy) }) {
			t.Errorf("reasons %q do not name nosuchpkg", rep.Reasons)
		}
	})

	t.Run("a hidden test that needs a package the index lacks", func(t *testing.T) {
		base := treeOf(t, maps(project, "requirements.txt", "greetlib==1.0\nnosuchpkg>=1\n"))
		needs := treeOf(t, map[string]string{"test_needs.py": "import nosuchpkg\n\n\ndef test_it():\n    assert nosuchpkg\n"})
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: needs, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != report.VerdictError || !slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, `for want of the import "nosuchpkg"`) }) {
			t.Fatalf("verdict %s %q: want an error naming the import nosuchpkg\n%s", rep.Verdict, rep.Reasons, rep.Output)
		}
	})

	t.Run("a requirement that would replace the runner", func(t *testing.T) {
		// A pin on pytest is the repository's word about its own runs,
		// not an error: it is set aside, said so, and the grade goes on
		// with the grader's pytest (the index's pytest 99.0 would replace
		// it): on the Python whose pytest meets the pin (3.13's 8.3.5,
		// where 3.11's is 7.2.1), which the hidden test checks.
		base := treeOf(t, maps(project, "requirements.txt", "greetlib==1.0\npytest>=8\n"))
		hidden8 := treeOf(t, map[string]string{"test_hello.py": "import pytest\nfrom app import hello\n\n\n" +
			"def test_hello():\n    assert hello() == 'hello from greetlib 1.0'\n\n\n" +
			"def test_runner_meets_the_pin():\n    assert int(pytest.__version__.split('.')[0]) >= 8, pytest.__version__\n"})
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: hidden8, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != report.VerdictPass || rep.Environment == nil ||
			!slices.Equal(rep.Environment.SetAside, []string{"pytest>=8 (the grader's own pytest runs the hidden tests)"}) ||
			slices.ContainsFunc(rep.Environment.Packages, func(p string) bool { return strings.HasPrefix(p, "pytest==") }) ||
			rep.Environment.Python != "3.13" || !strings.Contains(rep.Environment.PythonFrom, "pytest>=8") {
			t.Fatalf("verdict %s %q, environment %+v: want a pass on Python 3.13 with pytest>=8 set aside and said so\n%s", rep.Verdict, rep.Reasons, rep.Environment, rep.Output)
		}
	})

	t.Run("a package that runs before the runner", func(t *testing.T) {
		base := treeOf(t, maps(project, "requirements.txt", "greetlib==1.0\nsitecustomize\n"))
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		want := "the environment would run code before the grader's runner, or in its place: sitecustomize installs sitecustomize.py"
		if rep.Verdict != report.VerdictError || len(rep.Reasons) != 1 || !strings.Contains(rep.Reasons[0], want) {
			t.Fatalf("verdict %s %q: want an error that says %q", rep.Verdict, rep.Reasons, want)
		}
	})

	t.Run("a build that times out", func(t *testing.T) {
		envs, _ := buildsOn(t, index, 30*time.Second)
		began := time.Now()
		_, err := envs.Ensure(ctx, treeOf(t, maps(project, "requirements.txt", "slowpkg\n")), "", nil)
		var be *environment.BuildError
		if !errors.As(err, &be) || !be.TimedOut || !strings.Contains(err.Error(), "timed out after 30s") {
			t.Fatalf("a build against an index that never answers: %v, want a timeout that says so", err)
		}
		t.Logf("timed out after %.1fs: %v", time.Since(began).Seconds(), err)
	})

	t.Run("a build a rescue removes", func(t *testing.T) {
		// A grade's build carries its job's label, so the replica that
		// takes a dead one's job over removes the build the dead one left
		// running (jobs.removeRescued) instead of letting it run to its
		// deadline beside its own.
		envs, engine := buildsOn(t, index, 3*time.Minute)
		job := fmt.Sprintf("env-test-%d", time.Now().UnixNano())
		ended := make(chan error, 1)
		go func() {
			_, err := envs.Ensure(ctx, treeOf(t, maps(project, "requirements.txt", "slowpkg\n")), "",
				map[string]string{sandbox.LabelJob: job, sandbox.LabelGrade: "1"})
			ended <- err
		}()
		var removed time.Time
		for deadline := time.Now().Add(60 * time.Second); removed.IsZero(); time.Sleep(250 * time.Millisecond) {
			select {
			case err := <-ended:
				t.Fatalf("the build ended before it was removed: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("no sandbox labelled %s=%s within 60 s: the build does not carry its job's label", sandbox.LabelJob, job)
			}
			n, err := engine.RemoveLabelled(ctx, sandbox.LabelJob, job)
			if err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				removed = time.Now()
			}
		}
		select {
		case err := <-ended:
			if err == nil {
				t.Fatal("a build whose container was removed succeeded")
			}
			t.Logf("ended %.1f s after its removal: %v", time.Since(removed).Seconds(), err)
		case <-time.After(30 * time.Second):
			t.Fatal("the build did not end within 30 s of its container's removal")
		}
	})

	reach := treeOf(t, map[string]string{"test_reach.py": fmt.Sprintf(`import urllib.error
import urllib.request

INDEX = %q


def test_reads_index():
    with urllib.request.urlopen(INDEX + "greetlib/", timeout=10) as r:
        assert b"greetlib-1.0" in r.read()


def test_cannot_write_index():
    try:
        urllib.request.urlopen(urllib.request.Request(INDEX, data=b"x", method="POST"), timeout=10)
    except urllib.error.HTTPError as e:
        assert e.code == 403
    except OSError:
        pass
    else:
        raise AssertionError("the index took a POST")
`, index)})
	for _, mirror := range []bool{false, true} {
		t.Run(fmt.Sprintf("the hidden tests reach the index, mirror %t", mirror), func(t *testing.T) {
			rep, err := g.Grader.Grade(ctx, grader.Request{Repo: treeOf(t, project), Hidden: reach, Timeout: 5 * time.Minute, Mirror: mirror})
			if err != nil {
				t.Fatal(err)
			}
			outcome := map[string]report.Outcome{}
			for _, tr := range rep.Tests {
				outcome[tr.ID] = tr.Outcome
			}
			wantRead, wantNet := report.OutcomeFailed, report.NetworkNone
			if mirror {
				wantRead, wantNet = report.OutcomePassed, report.NetworkMirror
			}
			if outcome["test_reach.py::test_reads_index"] != wantRead || outcome["test_reach.py::test_cannot_write_index"] != report.OutcomePassed || rep.Network != wantNet {
				t.Errorf("outcomes %v, network %q: want reads_index %s, cannot_write passed, network %s\n%s", outcome, rep.Network, wantRead, wantNet, rep.Output)
			}
		})
	}

	// No container had a network, and none a mount but the egress socket.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	mounted := 0
	for _, h := range rec.hosts {
		if h.NetworkMode != "none" || len(h.Binds) > 0 {
			t.Errorf("container with network %q, binds %v", h.NetworkMode, h.Binds)
		}
		for _, m := range h.Mounts {
			if m.Target != sandbox.ProxyMount || !strings.HasSuffix(m.Source, "/egress.sock") {
				t.Errorf("container mounts %s at %s", m.Source, m.Target)
			}
			mounted++
		}
	}
	t.Logf("%d containers, %d with the egress socket", len(rec.hosts), mounted)
}

// maps returns a copy of m with k set to v.
func maps(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for mk, mv := range m {
		if mk != k {
			out[mk] = mv
		}
	}
	return out
}

// buildsOn returns environments built from index through an egress proxy
// of their own, each build bounded by timeout, and the engine they use.
func buildsOn(t *testing.T, index string, timeout time.Duration) (*environment.Environments, *docker.Engine) {
	t.Helper()
	engine := testenv.Docker(t)
	allowed, err := egress.AllowedFor(index)
	if err != nil {
		t.Fatal(err)
	}
	p, err := egress.New(allowed, egress.WithIndexCredentials(index))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := p.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	bin, err := os.ReadFile(testenv.Wrapper(t))
	if err != nil {
		t.Fatal(err)
	}
	envs, err := environment.New(engine, bin, index, srv.Socket, environment.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return envs, engine
}
