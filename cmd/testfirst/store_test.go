package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// storeEnv creates keys in a temporary directory and points the
// environment at them, as a deployment would.
func storeEnv(t *testing.T) (storeURL string) {
	t.Helper()
	dir := t.TempDir()
	graderID, cardID := filepath.Join(dir, "keys", "grader-identity.txt"), filepath.Join(dir, "keys", "card-identity.txt")
	code, stdout, stderr := runCLI(t, "keys", "init", "--identity", graderID, "--card-identity", cardID)
	if code != exitPass || !strings.HasPrefix(stdout, "age1") {
		t.Fatalf("keys init: %d %q %q", code, stdout, stderr)
	}
	card, err := os.ReadFile(filepath.Join(dir, "keys", "card-recipient.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TESTFIRST_GRADER_RECIPIENTS", strings.TrimSpace(stdout))
	t.Setenv("TESTFIRST_GRADER_IDENTITY_FILE", graderID)
	t.Setenv("TESTFIRST_CARD_RECIPIENTS", strings.TrimSpace(string(card)))
	t.Setenv("TESTFIRST_CARD_IDENTITY_FILE", cardID)
	url := "file://" + filepath.Join(dir, "hidden")
	served(t, url)
	return url
}

// served leaves in the store at url the record a service leaves when it
// starts on it, as testfirst serve at testServiceURL would.
func served(t *testing.T, url string) {
	t.Helper()
	blobs, closeFn, err := store.OpenBlobs(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	if err := store.MarkServed(t.Context(), blobs, testServiceURL, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// testServiceURL is where the service of the tests' stores answers.
const testServiceURL = "https://testfirst.example"

// TestStoreCommands walks the store from the command line: push two
// versions, reject one, approve the other, grade against the approved
// digest, and see a changed byte in the store refused.
func TestStoreCommands(t *testing.T) {
	url := storeEnv(t)
	hidden := t.TempDir()
	if err := testenv.WriteTree(hidden, testenv.SampleHidden(t, filepath.Join(sample, "hidden"))); err != nil {
		t.Fatal(err)
	}
	tk := "octo-org/wordstats#7"

	push := func() (int, string) {
		code, stdout, stderr := runCLI(t, "tests", "push", "--store", url, "--ticket", tk, "--installation", "0", "--author", "writer-bot",
			"--reference", filepath.Join(sample, "reference.patch"), "--format", "json", hidden)
		if code != exitPass {
			t.Fatalf("push: %d %s %s", code, stdout, stderr)
		}
		var out struct {
			Version int    `json:"version"`
			Digest  string `json:"digest"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("push output %q: %v", stdout, err)
		}
		return out.Version, out.Digest
	}
	v1, d1 := push()
	if v1 != 1 || !strings.HasPrefix(d1, "sha256:") {
		t.Fatalf("first push: v%d %s", v1, d1)
	}
	code, _, stderr := runCLI(t, "tests", "reject", "--store", url, "--ticket", tk, "--installation", "0", "--version", "1", "--digest", d1, "--by", "alice", "--reason", "bigrams of one word untested")
	if code != exitPass {
		t.Fatalf("reject: %s", stderr)
	}
	v2, d2 := push()
	if code, _, stderr := runCLI(t, "tests", "approve", "--store", url, "--ticket", tk, "--installation", "0", "--version", "2", "--digest", d1, "--by", "alice"); code != exitUsage || !strings.Contains(stderr, "does not match") {
		t.Errorf("approve with the wrong digest: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "tests", "approve", "--store", url, "--ticket", tk, "--installation", "0", "--version", "2", "--digest", d2, "--by", "alice"); code != exitPass {
		t.Fatalf("approve v%d: %s", v2, stderr)
	}
	code, stdout, _ := runCLI(t, "tests", "list", "--store", url, "--ticket", tk, "--installation", "0")
	for _, want := range []string{"v1       rejected", "v2       approved", "by alice: bigrams of one word untested"} {
		if code != exitPass || !strings.Contains(stdout, want) {
			t.Errorf("list lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "def test_") {
		t.Errorf("list shows a test body:\n%s", stdout)
	}

	testenv.Grading(t)
	t.Setenv("TESTFIRST_WRAPPER", testenv.Wrapper(t))
	base, err := tree.Load(filepath.Join(sample, "base"))
	if err != nil {
		t.Fatal(err)
	}
	patch, _ := os.ReadFile(filepath.Join(sample, "reference.patch"))
	fixed, err := tree.ApplyPatch(base, patch)
	if err != nil {
		t.Fatal(err)
	}
	pr := t.TempDir()
	mustWriteTree(t, pr, fixed)

	grade := func(digest string) (int, string, string) {
		return runCLI(t, "grade", "--repo", pr, "--base", filepath.Join(sample, "base"), "--store", url, "--ticket", tk, "--installation", "0", "--digest", digest, "--format", "json")
	}
	code, stdout, stderr = grade(d2)
	if code != exitPass {
		t.Fatalf("grade against the approved digest: %d\n%s\n%s", code, stdout, stderr)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.TestsDigest != d2 || rep.ReferenceCheck == nil || !rep.ReferenceCheck.AllPass || rep.Counts.Total != 10 {
		t.Errorf("report: digest %s reference %+v counts %+v", rep.TestsDigest, rep.ReferenceCheck, rep.Counts)
	}
	if code, _, stderr := grade(d1); code != exitUsage || !strings.Contains(stderr, "rejected") {
		t.Errorf("grade against the rejected digest: %d %s", code, stderr)
	}

	// One changed byte in the sealed tests: the grader refuses.
	sealed := filepath.Join(strings.TrimPrefix(url, "file://"), "tickets", "0", "octo-org", "wordstats", "7", "v2", "tests.age")
	data, err := os.ReadFile(sealed)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(sealed, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := grade(d2); code != exitUsage || !strings.Contains(stderr, "refusing to grade") {
		t.Errorf("grade after tampering: %d %s", code, stderr)
	}
}
