package test

import (
	"archive/zip"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// writeZip writes files (path to content) as a zip archive.
func writeZip(t *testing.T, path string, files map[string][]byte) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// TestCardUploadInBrowser: the requester uploads the sample's hidden tests
// on the card in Chromium, as one zip with a criteria map prefilled with
// the issue's criteria and the reference patch; the version is stored as
// tests push stores it, and the service's base check announces it ready.
// An archive whose paths leave it, and one without a test file, are
// refused with what to fix, the criteria typed kept, nothing stored; so
// are a test module with a syntax error and a mistyped test id. A
// collaborator with write access is not offered the upload.
func TestCardUploadInBrowser(t *testing.T) {
	browser := browserContext(t)
	shots := filepath.Join(testenv.RepoRoot(), "test", "screenshots")
	os.MkdirAll(shots, 0o755)
	const requester = "alice"
	p := newPipelineEnv(t)
	p.gh.AddIssue(pipeOwner, pipeRepo, 1, requester, wordstatsIssue)
	p.gh.SetPermission(pipeOwner, pipeRepo, requester, "write")
	s := p.serve(t, "", "TESTFIRST_STORE_SYNC_INTERVAL=1s")
	labeled := patchFixture(t, "issues/labeled.payload.json", map[string]any{"label.name": "test-first", "installation.id": 1,
		"sender.login": requester, "issue.number": 1, "issue.title": "Word statistics", "issue.body": wordstatsIssue})
	if code := s.deliver(t, pipeSecret, "issues", "d-upload-label", labeled); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	waitFor(t, "the ticket", 60*time.Second, func() bool { return strings.Contains(s.log(), `"msg":"ticket opened"`) }, s.log)

	dir := t.TempDir()
	tree := testenv.SampleHidden(t, filepath.Join(sampleDir, "hidden"))
	good := map[string][]byte{}
	for _, f := range tree.Files {
		good[f.Path] = f.Data
	}
	goodZip := writeZip(t, filepath.Join(dir, "hidden.zip"), good)
	evilZip := writeZip(t, filepath.Join(dir, "evil.zip"), map[string][]byte{"../evil/test_x.py": []byte("def test_x(): pass\n")})
	readme := filepath.Join(dir, "README.md")
	os.WriteFile(readme, []byte("no tests here\n"), 0o644)
	broken := map[string][]byte{}
	for p, data := range good {
		broken[p] = data
	}
	broken["tests/test_more.py"] = []byte("from wordstats import bigrams\n\n\ndef test_empty()\n    assert bigrams('') == []\n")
	brokenZip := writeZip(t, filepath.Join(dir, "broken.zip"), broken)
	reference := filepath.Join(sampleDir, "reference.patch")
	reference, err := filepath.Abs(reference)
	if err != nil {
		t.Fatal(err)
	}

	cardPath := "/tickets/" + pipeOwner + "/" + pipeRepo + "/1"
	p.gh.SignInWeb(requester)
	step(t, browser, "sign in and open the card",
		chromedp.Navigate(s.url+"/login?next="+cardPath),
		chromedp.WaitVisible(`a[href="`+cardPath+`/upload"]`),
	)
	step(t, browser, "open the upload page", chromedp.Click(`a[href="`+cardPath+`/upload"]`), chromedp.WaitVisible(`#upload`))
	page := text(t, browser, "main")
	for _, want := range []string{"frequencies counts words case-insensitively", "bigrams lists the adjacent word pairs", "AC4"} {
		if !strings.Contains(page, want) {
			t.Errorf("the upload page lacks the issue's criterion %q:\n%s", want, page)
		}
	}
	screenshot(t, browser, filepath.Join(shots, "upload.png"))

	// Refused uploads keep what was typed and store nothing.
	for _, bad := range []struct{ file, criterion, want string }{
		{evilZip, wordstatsIDs[8], `"../evil/test_x.py" is not a clean relative path`},
		{readme, wordstatsIDs[8], "None of the files is a pytest test file"},
		// A test module Python cannot compile, and a mistyped test id, are
		// refused before a version number is used.
		{brokenZip, wordstatsIDs[8], `file "tests/test_more.py" line 4: expected ':'`},
		{goodZip, wordstatsIDs[8] + "s", `AC4 names "` + wordstatsIDs[8] + `s", but`},
	} {
		// The page before the click is marked, so the wait is for the
		// answer's page, not the refusal the previous upload left shown.
		step(t, browser, "a bad upload",
			chromedp.SetUploadFiles(`input[name="files"]`, []string{bad.file}),
			chromedp.SetValue(`input[name="criterion.AC4"]`, bad.criterion),
			chromedp.Evaluate[chromedp.Void](`document.body.dataset.before = "submit"`),
			chromedp.Click(`#upload button`),
			chromedp.WaitVisible(`body:not([data-before]) .refusal`),
		)
		if page := text(t, browser, "main"); !strings.Contains(page, bad.want) || !strings.Contains(page, "Nothing was stored") {
			t.Errorf("upload of %s: want %q in\n%s", filepath.Base(bad.file), bad.want, page)
		}
		if v, _ := chromedp.Run(browser, chromedp.Value(`input[name="criterion.AC4"]`)); v != bad.criterion {
			t.Errorf("the criteria typed were lost: %q", v)
		}
	}
	screenshot(t, browser, filepath.Join(shots, "upload-refused.png"))
	out, _ := p.listJSON(t)
	if strings.Contains(out, `"number"`) {
		t.Fatalf("a refused upload stored a version: %s", out)
	}

	step(t, browser, "upload the tests",
		chromedp.SetUploadFiles(`input[name="files"]`, []string{goodZip}),
		chromedp.SetUploadFiles(`input[name="reference"]`, []string{reference}),
		chromedp.SetValue(`input[name="criterion.AC1"]`, wordstatsIDs[0]+" "+wordstatsIDs[1]),
		chromedp.SetValue(`input[name="criterion.AC4"]`, strings.Join(wordstatsIDs[8:], " ")),
		chromedp.Click(`#upload button`),
		chromedp.WaitVisible(`.notice`),
	)
	page = text(t, browser, "main")
	for _, want := range []string{"Uploaded.", "Hidden tests v1", "tests/test_bigrams.py", "tfc-masked"} {
		if !strings.Contains(page, want) {
			t.Errorf("the card after the upload lacks %q:\n%s", want, page)
		}
	}
	if st := p.state(t, 1); st != "pending" {
		t.Errorf("v1 is %s in the store, want pending", st)
	}
	out, _ = p.listJSON(t)
	if !strings.Contains(out, `"author":"alice"`) || !strings.Contains(out, `"has_reference":true`) {
		t.Errorf("the stored version: %s", out)
	}
	p.comment(t, s, 1, "**v1** are ready for review")
	step(t, browser, "the card of the checked version", chromedp.Navigate(s.url+cardPath), chromedp.WaitVisible(`button.approve`))
	page = text(t, browser, "main")
	if !strings.Contains(page, "2 acceptance criteria have no test") {
		t.Errorf("the criteria map uploaded is not the card's:\n%s", page)
	}
	screenshot(t, browser, filepath.Join(shots, "upload-v1.png"))

	// Approved, a pull request that fixes the issue is graded; its check
	// run's Details link works for a reader (what the check run says) and
	// for the requester (with the runner's output).
	step(t, browser, "approve v1", chromedp.Click(`button.approve`), chromedp.WaitVisible(`.notice`))
	p.gh.AddPull(pipeOwner, pipeRepo, 2, p.fixedSHA, pipeBranch, "Fixes #1", pipeOwner+"/"+pipeRepo)
	opened := patchFixture(t, "pull_request/opened.payload.json", map[string]any{"pull_request.body": "Fixes #1", "pull_request.head.sha": p.fixedSHA, "installation.id": 1})
	if code := s.deliver(t, pipeSecret, "pull_request", "d-upload-pr", opened); code != http.StatusAccepted {
		t.Fatalf("pull request: %d", code)
	}
	run := p.run(t, s, p.fixedSHA, "graded", completed("success"))
	details, err := url.Parse(run.DetailsURL)
	if err != nil || !strings.HasPrefix(details.Path, "/grades/") {
		t.Fatalf("details URL %q", run.DetailsURL)
	}
	step(t, browser, "the requester opens Details", chromedp.Navigate(s.url+details.Path), chromedp.WaitVisible(`pre.output`))
	page = text(t, browser, "main")
	if !strings.Contains(page, "Runner output") || strings.Contains(page, "sentinel") || !strings.Contains(page, "collected 10 items") {
		t.Errorf("the requester's grade page:\n%s", page)
	}
	screenshot(t, browser, filepath.Join(shots, "details-requester.png"))
	p.gh.SetPermission(pipeOwner, pipeRepo, "sam", "read")
	p.gh.SignInWeb("sam")
	step(t, browser, "a reader opens Details", chromedp.Navigate(s.url+"/login?next="+details.Path), chromedp.WaitVisible(`p.trust`))
	page = text(t, browser, "main")
	for _, want := range []string{"trust isolated", "Trust isolated: the hidden tests ran as root-owned files", wordstatsIDs[0], "What the grader checked besides the tests", "Grader's own check tests", "shown to the requester and the repository's maintainers only"} {
		if !strings.Contains(page, want) {
			t.Errorf("the reader's grade page lacks %q:\n%s", want, page)
		}
	}
	if html := outerHTML(t, browser, "main"); strings.Contains(html, `class="output"`) {
		t.Error("a reader sees the runner's output")
	}
	screenshot(t, browser, filepath.Join(shots, "details-reader.png"))

	// Write access signs under enforce; it does not upload.
	p.gh.SetPermission(pipeOwner, pipeRepo, "wes", "write")
	p.gh.SignInWeb("wes")
	step(t, browser, "sign in as wes", chromedp.Navigate(s.url+"/login?next="+cardPath), chromedp.WaitVisible(`#files`))
	if html := outerHTML(t, browser, "main"); strings.Contains(html, cardPath+"/upload") {
		t.Error("a collaborator with write access is offered the upload")
	}

	// The next upload starts from v1: its criteria map and, unless
	// unticked, its reference patch.
	p.gh.SignInWeb(requester)
	step(t, browser, "the requester opens the upload page again",
		chromedp.Navigate(s.url+"/login?next="+cardPath+"/upload"), chromedp.WaitVisible(`#upload`))
	if v, _ := chromedp.Run(browser, chromedp.Value(`input[name="criterion.AC1"]`)); v != wordstatsIDs[0]+" "+wordstatsIDs[1] {
		t.Errorf("AC1 starts as %q; want v1's map", v)
	}
	if html := outerHTML(t, browser, "main"); !strings.Contains(html, `name="keep_reference" checked`) || !strings.Contains(html, "Keep v1's reference patch") {
		t.Errorf("the upload page does not offer v1's reference patch:\n%s", html)
	}
	step(t, browser, "upload v2 without choosing a reference patch",
		chromedp.SetUploadFiles(`input[name="files"]`, []string{goodZip}),
		chromedp.Click(`#upload button`),
		chromedp.WaitVisible(`.notice`),
	)
	out, _ = p.listJSON(t)
	var versions []struct {
		Number       int  `json:"number"`
		HasReference bool `json:"has_reference"`
	}
	if err := json.Unmarshal([]byte(out), &versions); err != nil || len(versions) != 2 || !versions[1].HasReference {
		t.Errorf("v2 did not keep v1's reference patch: %v %s", err, out)
	}
}

// listJSON is `testfirst tests list --format json` of issue #1's ticket.
func (p *pipelineEnv) listJSON(t *testing.T) (string, error) {
	t.Helper()
	out, err := exec.Command(p.bin, "tests", "list", "--store", p.storeURL, "--ticket", pipeOwner+"/"+pipeRepo+"#1", "--installation", "1", "--format", "json").Output()
	return string(out), err
}
