package test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// unprovenEngine serves the local Docker engine's API on 127.0.0.1 with
// one change: every container is created without no-new-privileges, as by
// a runtime or an engine that does not apply it. The wrapper's test
// process then keeps a no_new_privs of 0, and the uid split is not proven
// (the sandbox runs the grade otherwise as usual). It returns DOCKER_HOST
// for a service to use.
func unprovenEngine(t *testing.T) string {
	t.Helper()
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		sock = strings.TrimPrefix(h, "unix://")
	} else if h != "" {
		t.Skipf("DOCKER_HOST %s: the proxy speaks to a local engine's socket only", h)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker"
			if r.In.Method != http.MethodPost || !strings.HasSuffix(r.In.URL.Path, "/containers/create") {
				return
			}
			body, err := io.ReadAll(r.In.Body)
			if err != nil {
				return
			}
			var cfg map[string]any
			if json.Unmarshal(body, &cfg) == nil {
				if host, ok := cfg["HostConfig"].(map[string]any); ok {
					var keep []any
					opts, _ := host["SecurityOpt"].([]any)
					for _, o := range opts {
						if s, _ := o.(string); !strings.HasPrefix(s, "no-new-privileges") {
							keep = append(keep, o)
						}
					}
					host["SecurityOpt"] = keep
				}
				body, _ = json.Marshal(cfg)
			}
			r.Out.Body = io.NopCloser(bytes.NewReader(body))
			r.Out.ContentLength = int64(len(body))
			r.Out.Header.Del("Content-Length")
		},
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "tcp://" + ln.Addr().String()
}

// TestUIDSplitRequired: a grade whose uid split was not proven is posted
// with trust best_effort by default (the attack: a sandbox without
// no-new-privileges passes the pull request all the same), and refused,
// saying why, when the repository (grading.uid_split: required) or the
// service (TESTFIRST_UID_SPLIT=required) requires the split.
func TestUIDSplitRequired(t *testing.T) {
	p := newPipelineEnv(t)
	p.gh.SetPermission(pipeOwner, pipeRepo, "alice", "write")
	engine := unprovenEngine(t)
	database := "sqlite://" + filepath.Join(p.dir, "uidsplit.db")
	env := []string{"DOCKER_HOST=" + engine, "TESTFIRST_STORE_SYNC_INTERVAL=1s"}
	s := p.serve(t, database, env...)
	deliver := func(s *service, event, id string, body []byte) {
		t.Helper()
		if code := s.deliver(t, pipeSecret, event, id, body); code != http.StatusAccepted {
			t.Fatalf("%s %s: %d", event, id, code)
		}
	}
	pull := func(s *service, action, id, head string) {
		t.Helper()
		deliver(s, "pull_request", id, patchFixture(t, "pull_request/"+action+".payload.json", map[string]any{
			"number": 2, "pull_request.number": 2, "pull_request.body": "Fixes #1", "pull_request.head.sha": head,
			"pull_request.state": "open", "installation.id": 1}))
	}
	deliver(s, "issues", "label", patchFixture(t, "issues/labeled.payload.json", map[string]any{
		"label.name": "test-first", "issue.number": 1, "installation.id": 1, "sender.login": "alice"}))
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)
	k, digest := p.push(t, "writer-bot", nil)
	p.decide(t, s, k, digest, "alice", "")
	p.gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Count words")
	p.gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)

	// Nothing requires the split: the unproven grade is posted.
	pull(s, "opened", "opened", p.fixedSHA)
	run := p.run(t, s, p.fixedSHA, "graded", func(r fakegithub.CheckRun) bool { return r.Status == "completed" })
	if run.Conclusion != "success" || run.Title != "10/10 hidden tests passed · trust: best_effort" {
		t.Fatalf("unproven uid split, nothing required: %s %q; want a best_effort pass (is the sandbox without no-new-privileges?)", run.Conclusion, run.Title)
	}

	refused := func(s *service, id, by string) {
		t.Helper()
		head := p.commit("feature", p.fixed, map[string]string{"NOTES.md": id + "\n"})
		pull(s, "synchronize", id, head)
		run := p.run(t, s, head, "graded", func(r fakegithub.CheckRun) bool { return r.Status == "completed" })
		if run.Conclusion != "action_required" || run.Title != "not graded: the uid split was not proven ("+by+")" {
			t.Errorf("required by %s: %s %q; want action_required, refused", by, run.Conclusion, run.Title)
		}
		for _, want := range []string{"refused", by, "best_effort", "no_new_privs false", "No verdict is posted"} {
			if !strings.Contains(run.Summary, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, run.Summary)
			}
		}
		if strings.Contains(run.Summary, "10/10") {
			t.Errorf("the refusal shows the result:\n%s", run.Summary)
		}
	}
	// The repository requires it.
	// No regression runs: their check runs' completions would take the
	// failures injected below for the grade's.
	p.commit(pipeBranch, p.base, map[string]string{".github/testfirst.yml": "grading:\n  uid_split: required\nregressions:\n  enabled: false\n"})
	refused(s, "repo-requires", "grading.uid_split: required")

	// The service requires it, whatever the repository says.
	p.commit(pipeBranch, p.base, map[string]string{".github/testfirst.yml": "grading:\n  uid_split: allowed\nregressions:\n  enabled: false\n"})
	s.kill(t) // one service at a time on the SQLite file
	s2 := p.serve(t, database, append(env, "TESTFIRST_UID_SPLIT=required")...)
	refused(s2, "service-requires", "TESTFIRST_UID_SPLIT=required")

	// The completion fails through every try of the call: the job's retry
	// completes the run from the recorded grade, and it is refused still.
	p.gh.FailNextWhere(5, "PATCH", checkRunsPath, `"status":"completed"`, http.StatusBadGateway)
	refused(s2, "service-requires-retried", "TESTFIRST_UID_SPLIT=required")
	// The line comes after the update that completed the run.
	waitFor(t, "the job's retry to have completed the refusal", 10*time.Second, func() bool {
		return strings.Contains(s2.log(), `"msg":"check run completed after a failed update"`)
	}, s2.log)
}
