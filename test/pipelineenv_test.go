package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// The repository every pipeline test works on, as the fixtures name it.
const (
	pipeOwner  = "Codertocat"
	pipeRepo   = "Hello-World"
	pipeBranch = "master"
	pipeSecret = "pipeline-secret"
)

// pipelineEnv is a fake GitHub holding the sample project, the keys and
// the hidden-test store of a deployment, and the testfirst binary.
type pipelineEnv struct {
	gh       *fakegithub.Server
	bin      string
	dir      string
	storeURL string
	// base is the sample project's default branch; fixed is base with the
	// reference patch, which passes every hidden test.
	base, fixed       *tree.Tree
	baseSHA, fixedSHA string
	// noReference pushes versions without the reference patch: their base
	// check is one run of the base, without the reference's strength
	// checks (flaky reruns, mutants), for tests about something else.
	noReference bool
	// hiddenDir, when set, is the folder of the hidden tests push sends
	// instead of the sample's.
	hiddenDir string
	// regressions keeps the regression run on (withRegressions).
	regressions bool
}

// newPipelineEnv seeds the fake GitHub and the keys, and sets the store's
// key variables for this test (the binary and `tests` commands read them).
func newPipelineEnv(t *testing.T) *pipelineEnv {
	t.Helper()
	testenv.Grading(t) // the grader image, or skip without an engine
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))
	p := &pipelineEnv{gh: fakegithub.New(t), bin: buildBinary(t), dir: t.TempDir()}
	p.gh.AddInstallation(1, pipeOwner)
	p.gh.AddRepo(1, pipeOwner, pipeRepo, pipeBranch)
	var err error
	if p.base, err = tree.Load(filepath.Join(sampleDir, "base")); err != nil {
		t.Fatal(err)
	}
	p.baseSHA = p.commit(pipeBranch, p.base, nil)
	patch, _ := os.ReadFile(filepath.Join(sampleDir, "reference.patch"))
	if p.fixed, err = tree.ApplyPatch(p.base, patch); err != nil {
		t.Fatal(err)
	}
	p.fixedSHA = p.gh.Commit(pipeOwner, pipeRepo, "feature", files(p.fixed))

	graderID, cardID := filepath.Join(p.dir, "grader-identity.txt"), filepath.Join(p.dir, "card-identity.txt")
	out, err := exec.Command(p.bin, "keys", "init", "--identity", graderID, "--card-identity", cardID).Output()
	if err != nil {
		t.Fatal(err)
	}
	cardR, _ := os.ReadFile(filepath.Join(p.dir, "card-recipient.txt"))
	p.storeURL = "file://" + filepath.Join(p.dir, "hidden")
	// The app's credentials, as the service's configuration has them: the
	// tests commands find the installation with them.
	key, secret := filepath.Join(p.dir, "app.pem"), filepath.Join(p.dir, "webhook-secret")
	os.WriteFile(key, p.gh.PrivateKeyPEM(), 0o600)
	os.WriteFile(secret, []byte(pipeSecret+"\n"), 0o600)
	for k, v := range map[string]string{
		"TESTFIRST_GRADER_RECIPIENTS": strings.TrimSpace(string(out)), "TESTFIRST_GRADER_IDENTITY_FILE": graderID,
		"TESTFIRST_CARD_RECIPIENTS": strings.TrimSpace(string(cardR)), "TESTFIRST_CARD_IDENTITY_FILE": cardID,
		"TESTFIRST_GITHUB_API_URL": p.gh.URL(), "TESTFIRST_GITHUB_APP_ID": itoa(p.gh.AppID()),
		"TESTFIRST_GITHUB_PRIVATE_KEY_FILE": key, "TESTFIRST_WEBHOOK_SECRET_FILE": secret,
		"TESTFIRST_GITHUB_APP_FILE": filepath.Join(p.dir, "no-app-file.yml"),
	} {
		t.Setenv(k, v)
	}
	return p
}

// serve starts `testfirst serve` on the store, with databaseURL when set
// (SQLite in its own directory otherwise), the approval card on (sign-in
// through the fake GitHub) and extra environment, which wins.
func (p *pipelineEnv) serve(t *testing.T, databaseURL string, env ...string) *service {
	t.Helper()
	clientSecret, sessionKey := filepath.Join(p.dir, "client-secret"), filepath.Join(p.dir, "session-key")
	os.WriteFile(clientSecret, []byte(p.gh.ClientSecret()+"\n"), 0o600)
	os.WriteFile(sessionKey, []byte(strings.Repeat("0123456789abcdef", 4)+"\n"), 0o600)
	port := freePort(t)
	env = append([]string{"TESTFIRST_STORE_URL=" + p.storeURL,
		fmt.Sprintf("TESTFIRST_LISTEN=127.0.0.1:%d", port),
		fmt.Sprintf("TESTFIRST_PUBLIC_URL=http://127.0.0.1:%d", port),
		"TESTFIRST_GITHUB_URL=" + p.gh.WebURL(),
		"TESTFIRST_GITHUB_CLIENT_ID=" + p.gh.ClientID(),
		"TESTFIRST_GITHUB_CLIENT_SECRET_FILE=" + clientSecret,
		"TESTFIRST_SESSION_KEY_FILE=" + sessionKey,
	}, env...)
	if databaseURL != "" {
		env = append(env, "TESTFIRST_DATABASE_URL="+databaseURL)
	}
	return startServe(t, p.gh, pipeSecret, env...)
}

// withRegressions turns the regression run on, on the default branch.
// Every other served test runs without it: a regression run is one more
// sandbox run of the base's own suite after each grade (about a sixth of
// the served tests' CPU), and the fault cases count a grade's check-run
// calls, which a regression run's check run would share.
func (p *pipelineEnv) withRegressions() {
	p.regressions = true
	p.baseSHA = p.commit(pipeBranch, p.base, nil)
}

// commit pushes a tree to a branch of the repository and returns its SHA.
// On the default branch, unless withRegressions was called, the
// repository's configuration turns the regression run off (appended to
// a .github/testfirst.yml in extra that says nothing of regressions).
func (p *pipelineEnv) commit(branch string, tree *tree.Tree, extra map[string]string) string {
	fs := files(tree)
	for k, v := range extra {
		fs[k] = v
	}
	const config = ".github/testfirst.yml"
	if branch == pipeBranch && !p.regressions && !strings.Contains(fs[config], "regressions:") {
		fs[config] += "regressions:\n  enabled: false\n"
	}
	return p.gh.Commit(pipeOwner, pipeRepo, branch, fs)
}

// push stores the sample's hidden tests (and reference patch) as the next
// version of issue #1's ticket, with a criteria map when given, and
// returns its number and digest.
func (p *pipelineEnv) push(t *testing.T, author string, criteria map[string][]string) (int, string) {
	t.Helper()
	hidden := filepath.Join(p.dir, "tests")
	os.RemoveAll(hidden)
	src := filepath.Join(sampleDir, "hidden")
	if p.hiddenDir != "" {
		src = p.hiddenDir
	}
	if err := testenv.WriteTree(hidden, testenv.SampleHidden(t, src)); err != nil {
		t.Fatal(err)
	}
	args := []string{"tests", "push", "--store", p.storeURL, "--ticket", pipeOwner + "/" + pipeRepo + "#1",
		"--author", author, "--format", "json"}
	if !p.noReference {
		args = append(args, "--reference", filepath.Join(sampleDir, "reference.patch"))
	}
	if criteria != nil {
		cf := filepath.Join(t.TempDir(), "criteria.json")
		data, _ := json.Marshal(criteria)
		if err := os.WriteFile(cf, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--criteria", cf)
	}
	out, err := exec.Command(p.bin, append(args, hidden)...).Output()
	if err != nil {
		t.Fatalf("tests push: %v", err)
	}
	var v struct {
		Version int    `json:"version"`
		Digest  string `json:"digest"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("tests push printed %q: %v", out, err)
	}
	return v.Version, v.Digest
}

// decide approves or, with a reason, rejects version k on s's approval
// card, signed in through the fake GitHub as by: the command line does not
// decide tickets the service manages.
func (p *pipelineEnv) decide(t *testing.T, s *service, k int, digest, by, reason string) {
	t.Helper()
	c := p.signIn(t, s, by)
	action, form := "approve", url.Values{"digest": {digest}}
	if reason != "" {
		action = "reject"
		form.Set("reason", reason)
	}
	path := fmt.Sprintf("%s/versions/%d/%s", pipelineTicketPath, k, action)
	// The card decides once the version's base check made it ready.
	for deadline := time.Now().Add(8 * time.Minute); ; time.Sleep(time.Second) {
		resp, err := c.PostForm(s.url+path, form)
		if err != nil {
			t.Fatalf("%s v%d: %v", action, k, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(resp.Request.URL.RawQuery, "decided=") {
			return
		}
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "not ready for review yet") || time.Now().After(deadline) {
			t.Fatalf("%s v%d on the card as %s: %d at %s\n%s\n%s", action, k, by, resp.StatusCode, resp.Request.URL, body, s.log())
		}
	}
}

// page signs in through the fake GitHub as login and returns the status
// and body of the service's page at link (a path, or a whole URL on s).
func (p *pipelineEnv) page(t *testing.T, s *service, login, link string) (int, string) {
	t.Helper()
	c := p.signIn(t, s, login)
	if strings.HasPrefix(link, "/") {
		link = s.url + link
	}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatalf("GET %s as %s: %v", link, login, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// pipelineTicketPath is issue #1's ticket on the card.
const pipelineTicketPath = "/tickets/" + pipeOwner + "/" + pipeRepo + "/1"

// state is version k's state in the store, as testfirst tests list says.
func (p *pipelineEnv) state(t *testing.T, k int) string {
	t.Helper()
	out, err := exec.Command(p.bin, "tests", "list", "--store", p.storeURL, "--ticket", pipeOwner+"/"+pipeRepo+"#1", "--installation", "1", "--format", "json").Output()
	if err != nil {
		t.Fatalf("tests list: %v", err)
	}
	var list []struct {
		Number int    `json:"number"`
		State  string `json:"state"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("tests list printed %q: %v", out, err)
	}
	for _, v := range list {
		if v.Number == k {
			return v.State
		}
	}
	return ""
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool, logs func() string) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s\n%s", within, what, logs())
		}
	}
}

// comment waits for a comment on issue containing text and returns it.
func (p *pipelineEnv) comment(t *testing.T, s *service, issue int, text string) string {
	t.Helper()
	var found string
	waitFor(t, fmt.Sprintf("a comment on #%d saying %q", issue, text), 120*time.Second, func() bool {
		for _, c := range p.gh.Comments(pipeOwner, pipeRepo, issue) {
			if strings.Contains(c.Body, text) {
				found = c.Body
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("comments: %+v\n%s", p.gh.Comments(pipeOwner, pipeRepo, issue), s.log())
	})
	return found
}

// run waits for a check run on head that satisfies ok and returns it:
// up to 5 minutes, a rescued job's wait (job_rescue_after) and its grade
// under make test's load.
func (p *pipelineEnv) run(t *testing.T, s *service, head string, what string, ok func(fakegithub.CheckRun) bool) fakegithub.CheckRun {
	t.Helper()
	return p.checkRun(t, s, head, what, func(r fakegithub.CheckRun) bool { return pipeline.IsCheckRunName(r.Name) && ok(r) })
}

// regressionRun waits for the regression check run on head that ok
// accepts.
func (p *pipelineEnv) regressionRun(t *testing.T, s *service, head string, what string, ok func(fakegithub.CheckRun) bool) fakegithub.CheckRun {
	t.Helper()
	return p.checkRun(t, s, head, "regressions "+what, func(r fakegithub.CheckRun) bool { return r.Name == pipeline.RegressionsCheckRunName && ok(r) })
}

// checkRun waits for a check run on head, of any name, that ok accepts.
func (p *pipelineEnv) checkRun(t *testing.T, s *service, head string, what string, ok func(fakegithub.CheckRun) bool) fakegithub.CheckRun {
	t.Helper()
	var found fakegithub.CheckRun
	waitFor(t, "a check run on "+head[:7]+" "+what, 300*time.Second, func() bool {
		for _, r := range p.gh.CheckRuns(pipeOwner, pipeRepo) {
			if r.HeadSHA == head && ok(r) {
				found = r
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("check runs: %+v\n%s", p.gh.CheckRuns(pipeOwner, pipeRepo), s.log()) })
	return found
}

// runsOn returns the grades' check runs on head (not the regression
// runs').
func (p *pipelineEnv) runsOn(head string) []fakegithub.CheckRun {
	var out []fakegithub.CheckRun
	for _, r := range p.gh.CheckRuns(pipeOwner, pipeRepo) {
		if r.HeadSHA == head && pipeline.IsCheckRunName(r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// gradeRuns are the grades' check runs of runs: not the regression
// runs'.
func gradeRuns(runs []fakegithub.CheckRun) []fakegithub.CheckRun {
	var out []fakegithub.CheckRun
	for _, r := range runs {
		if pipeline.IsCheckRunName(r.Name) {
			out = append(out, r)
		}
	}
	return out
}

func completed(conclusion string) func(fakegithub.CheckRun) bool {
	return func(r fakegithub.CheckRun) bool { return r.Status == "completed" && r.Conclusion == conclusion }
}
