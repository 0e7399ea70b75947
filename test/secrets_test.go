package test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/fakemodel"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// The configured secrets of TestNoSecretLeaves, each distinctive, so that
// any copy of one in a request, a log line or a row is found.
const (
	leakIndexUser    = "tf-index-user-93ab17"
	leakIndexPass    = "IDXPASS-7d41e2c9b0"
	leakWebhook      = "whsec-5f0c2a9e81d7b3"
	leakModelKey     = "sk-model-key-b83f1c07e2"
	leakSessionKey   = "sesskey-0c8e1f9a7b2d4e6f8a1c3e5b7d9f0a2c4e6b8d0f"
	leakOperatorPass = operatorToken
)

// leak is a configured secret found where it must not be.
type leak struct{ secret, where string }

// secretScan finds each secret in each of texts (named by their keys).
func secretScan(secrets map[string]string, texts map[string]string) []leak {
	var found []leak
	for name, secret := range secrets {
		for where, text := range texts {
			if strings.Contains(text, secret) {
				found = append(found, leak{name, where})
			}
		}
	}
	return found
}

// gitHubTexts is every request the fake GitHub received, as text: method,
// path, query, headers and body. The OAuth token exchange is left out for
// the client secret alone, which it exists to carry.
func gitHubTexts(reqs []fakegithub.Request) (all, exceptOAuth map[string]string) {
	all, exceptOAuth = map[string]string{}, map[string]string{}
	for i, r := range reqs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s?%s\n", r.Method, r.Path, r.Query.Encode())
		for k, vs := range r.Header {
			fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(vs, ", "))
		}
		b.Write(r.Body)
		where := fmt.Sprintf("GitHub request %d (%s %s)", i, r.Method, r.Path)
		all[where] = b.String()
		if r.Path != "/login/oauth/access_token" {
			exceptOAuth[where] = b.String()
		}
	}
	return all, exceptOAuth
}

// databaseRows is every row of every table of the SQLite database at
// path, as text.
func databaseRows(t *testing.T, path string) map[string]string {
	t.Helper()
	c, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rows, err := c.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string]string{}
	for _, table := range tables {
		rs, err := c.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		n := 0
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%v\n", cols[i], v)
			}
			out[fmt.Sprintf("row %d of %s", n, table)] = b.String()
			n++
		}
		rs.Close()
	}
	return out
}

// TestNoSecretLeaves: a service with every secret configured, each to a
// distinctive value (the package index's credentials, the webhook secret,
// the app's private key, a model API's key, the OAuth client secret, the
// session key, the operator token), takes a ticket through grading: the
// label, a version's base check, its approval on the card, a pull
// request graded in an environment built from the index. The version is
// the writer agent's, which asks the model API first: the proxy adds the
// model key, which the scripted model API sees. Then no request
// the fake GitHub received (the client secret aside, in the OAuth token
// exchange it exists for), no log line, and no row of the database (every
// grade's report and requester-only output among them) holds any of them.
func TestNoSecretLeaves(t *testing.T) {
	p := newPipelineEnv(t)
	gh := p.gh
	name, wheel := buildWheel(t, "tfsecretdep", "1.0")
	index, err := url.Parse(packageIndex(t, map[string][]byte{name: wheel}))
	if err != nil {
		t.Fatal(err)
	}
	index.User = url.UserPassword(leakIndexUser, leakIndexPass)

	base, fixed := files(p.base), files(p.fixed)
	// A line of this run's own makes the environment's key new, so the
	// environment is built from the index here, not found from a run
	// before (the index answers at one port from run to run).
	reqs := fmt.Sprintf("# run %d\ntfsecretdep==1.0\n", time.Now().UnixNano())
	base["requirements.txt"], fixed["requirements.txt"] = reqs, reqs
	base[".github/testfirst.yml"], fixed[".github/testfirst.yml"] = "writer: leak-writer\n", "writer: leak-writer\n"
	gh.Commit(pipeOwner, pipeRepo, pipeBranch, base)
	head := gh.Commit(pipeOwner, pipeRepo, "feature-secrets", fixed)
	gh.AddIssue(pipeOwner, pipeRepo, 1, "alice", "Word statistics")
	gh.SetPermission(pipeOwner, pipeRepo, "alice", "admin")

	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	webhookFile := write("leak-webhook-secret", leakWebhook+"\n")
	sessionFile := write("leak-session-key", leakSessionKey+"\n")
	modelKeyFile := write("leak-model-key", leakModelKey+"\n")
	model := fakemodel.New(nil, fakemodel.WithKey(leakModelKey), fakemodel.WithAddr("127.0.0.2:0"))
	t.Cleanup(model.Close)
	writerDir := filepath.Join(p.dir, "agents", "leak-writer")
	for path, content := range files(testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden"))) {
		writeFile(t, filepath.Join(writerDir, "hidden", path), content, 0o644)
	}
	writeFile(t, filepath.Join(writerDir, "run.sh"), leakWriter, 0o755)
	config := write("leak-testfirst.yml", fmt.Sprintf(`model_apis:
  scripted: {url: %q, key_file: %s, header: x-api-key, vendor: anthropic}
harnesses:
  leak-writer: {preset: command, command: ["/agent/run.sh"], files: %s, model_api: scripted}
agents: {timeout: 5m, memory: 512MiB, cpus: 1, pids: 256}
`, model.URL, modelKeyFile, writerDir))
	if _, err := testenv.Docker(t).EnsureDebianImage(context.Background(), agent.CommandRecipe, io.Discard); err != nil {
		t.Fatal(err)
	}
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s", "TESTFIRST_PACKAGE_INDEX="+index.String(),
		"TESTFIRST_WEBHOOK_SECRET_FILE="+webhookFile, "TESTFIRST_SESSION_KEY_FILE="+sessionFile, "TESTFIRST_CONFIG="+config)

	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1,
		"sender.login": "alice", "issue.number": 1})
	if code := s.deliver(t, leakWebhook, "issues", "d-secrets-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	waitFor(t, "the ticket", time.Minute, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)
	v1 := p.waitVersion(t, s, 1, 1)
	if v1.Author != "writer:leak-writer" {
		t.Fatalf("v1's author is %q, want the writer agent", v1.Author)
	}
	p.decide(t, s, v1.Number, v1.Digest, "alice", "")
	gh.AddPull(pipeOwner, pipeRepo, 2, head, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"number": 2, "pull_request.number": 2,
		"pull_request.body": "Fixes #1", "pull_request.head.sha": head, "pull_request.state": "open", "installation.id": 1})
	if code := s.deliver(t, leakWebhook, "pull_request", "d-secrets-pr", opened); code != http.StatusAccepted {
		t.Fatalf("pull request: %d", code)
	}
	run := p.run(t, s, head, "the pull request graded", completed("success"))
	if !strings.Contains(s.log(), "tfsecretdep") {
		t.Errorf("no environment was built from the index (no tfsecretdep in the log): the index's credentials were not used; check run:\n%s", run.Summary)
	}
	// A moment for the last lines and rows after the check run.
	time.Sleep(2 * time.Second)
	// The model key was used: the writer's request reached the model API
	// with it, put there by the proxy.
	if reqs := model.Requests(); len(reqs) == 0 || reqs[0].Key != leakModelKey {
		t.Errorf("the model API saw %d requests (first key %q): the writer's request did not reach it with the configured key", len(reqs), firstKey(reqs))
	}

	key := strings.Split(strings.TrimSpace(string(gh.PrivateKeyPEM())), "\n")
	secrets := map[string]string{
		"index user": leakIndexUser, "index password": leakIndexPass, "webhook secret": leakWebhook,
		"model key": leakModelKey, "session key": leakSessionKey, "operator token": leakOperatorPass,
		"private key": key[len(key)/2], "client secret": gh.ClientSecret(),
	}
	all, exceptOAuth := gitHubTexts(gh.Requests())
	texts := map[string]string{"the log": s.log()}
	for where, text := range databaseRows(t, filepath.Join(s.dir, "testfirst.db")) {
		texts[where] = text
	}
	for where, text := range exceptOAuth {
		texts[where] = text
	}
	leaks := secretScan(secrets, texts)
	for _, l := range leaks {
		t.Errorf("the %s is in %s", l.secret, l.where)
	}
	if len(texts) < 20 {
		t.Errorf("only %d texts scanned: the scan saw too little", len(texts))
	}
	// The scan finds a leak: each secret planted in a copy of a request
	// and a row is found there.
	for name, secret := range secrets {
		planted := map[string]string{"planted request": "POST /repos/x/y/check-runs\n" + `{"summary":"` + secret + `"}`,
			"planted row": "report=" + secret}
		if got := secretScan(map[string]string{name: secret}, planted); len(got) != 2 {
			t.Errorf("a planted %s is found %d times, want 2", name, len(got))
		}
	}
	// The OAuth exchange carried the client secret, and nothing else did.
	if n := len(all) - len(exceptOAuth); n == 0 {
		t.Errorf("no OAuth token exchange seen: the card's sign-in was not exercised")
	}
	var joined bytes.Buffer
	for _, text := range all {
		joined.WriteString(text)
	}
	if !strings.Contains(joined.String(), "check-runs") {
		t.Errorf("no check run request recorded")
	}
}

// leakWriter is the writer harness of TestNoSecretLeaves: it asks the
// model API through the proxy, with the placeholder key its sandbox holds,
// then hands in the sample's hidden tests.
const leakWriter = `#!/bin/sh
set -eu
python3 - <<'PY'
import json, os, urllib.request
body = json.dumps({"model": "scripted", "max_tokens": 16, "messages": [{"role": "user", "content": "name a test"}]}).encode()
req = urllib.request.Request(os.environ["TESTFIRST_MODEL_URL"] + "/v1/messages", data=body, headers={
    "content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": os.environ.get("ANTHROPIC_API_KEY", "")})
print(urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=60).read().decode())
PY
mkdir -p /out/tests
cp -R /agent/hidden/. /out/tests/
echo "# Hidden tests" > /out/RESULT.md
`

// writeFile writes content to path, making its directories.
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// firstKey is the key of the first of reqs, "" without one.
func firstKey(reqs []fakemodel.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].Key
}
