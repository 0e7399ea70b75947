package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/test/fakegithub"
)

// appEnv points the environment at the fake GitHub's app, as the
// service's configuration does, and returns the fake.
func appEnv(t *testing.T) *fakegithub.Server {
	t.Helper()
	gh := fakegithub.New(t)
	dir := t.TempDir()
	key, secret := filepath.Join(dir, "app.pem"), filepath.Join(dir, "webhook-secret")
	os.WriteFile(key, gh.PrivateKeyPEM(), 0o600)
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	t.Setenv("TESTFIRST_GITHUB_API_URL", gh.URL())
	t.Setenv("TESTFIRST_GITHUB_APP_ID", strconv.FormatInt(gh.AppID(), 10))
	t.Setenv("TESTFIRST_GITHUB_PRIVATE_KEY_FILE", key)
	t.Setenv("TESTFIRST_WEBHOOK_SECRET_FILE", secret)
	t.Setenv("TESTFIRST_GITHUB_APP_FILE", filepath.Join(dir, "none.yml"))
	t.Setenv("TESTFIRST_PUBLIC_URL", "https://testfirst.example.com")
	return gh
}

// TestTestsPushFindsInstallation: tests push, as the README has it (no
// --installation, flags after the directory), writes the version under
// the app's installation on the repository, which it asks GitHub for; a
// repository without the app and a machine without the app's credentials
// get a refusal that says what to do.
func TestTestsPushFindsInstallation(t *testing.T) {
	url := storeEnv(t)
	hidden := t.TempDir()
	os.WriteFile(filepath.Join(hidden, "test_a.py"), []byte("def test_a():\n    assert True\n"), 0o644)

	t.Run("without credentials", func(t *testing.T) {
		t.Setenv("TESTFIRST_GITHUB_APP_FILE", filepath.Join(t.TempDir(), "none.yml"))
		code, _, stderr := runCLI(t, "tests", "push", "--store", url, "--ticket", "octo-org/widgets#12", hidden)
		if code != exitUsage || !strings.Contains(stderr, "cannot be found") || !strings.Contains(stderr, "--installation ID") {
			t.Errorf("push without credentials: %d %q", code, stderr)
		}
	})

	gh := appEnv(t)
	gh.AddInstallation(41, "octo-org")
	gh.AddRepo(41, "octo-org", "widgets", "main")
	gh.AddInstallation(42, "other-org")

	code, stdout, stderr := runCLI(t, "tests", "push", hidden, "--store", url, "--ticket", "octo-org/widgets#12", "--author", "alice", "--format", "json")
	if code != exitPass {
		t.Fatalf("push with flags after the directory: %d %s %s", code, stdout, stderr)
	}
	var out struct{ Version int }
	json.Unmarshal([]byte(stdout), &out)
	if out.Version != 1 {
		t.Errorf("push printed %q", stdout)
	}
	code, stdout, _ = runCLI(t, "tests", "list", "--store", url, "--ticket", "octo-org/widgets#12", "--installation", "41", "--format", "json")
	if code != exitPass || !strings.Contains(stdout, `"number":1`) {
		t.Errorf("installation 41 does not hold v1: %d %s", code, stdout)
	}
	if code, stdout, _ = runCLI(t, "tests", "list", "--store", url, "--ticket", "octo-org/widgets#12", "--installation", "0", "--format", "json"); strings.Contains(stdout, `"number":1`) {
		t.Errorf("v1 was written under installation 0: %s", stdout)
	}

	code, _, stderr = runCLI(t, "tests", "push", "--store", url, "--ticket", "octo-org/gadgets#3", hidden)
	if code != exitUsage || !strings.Contains(stderr, "is not installed on octo-org/gadgets") {
		t.Errorf("push to a repository without the app: %d %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, "tests", "push", "--store", url, "--ticket", "octo-org/widgets#12", hidden, "extra"); code != exitUsage || !strings.Contains(stderr, "one directory") {
		t.Errorf("two directories: %d %q", code, stderr)
	}
}

// TestTestsApproveRefusesManagedTickets: an approval from the command line
// names someone it cannot prove; on a ticket the service manages it is
// refused, pointing to the card, and nothing is decided. Tickets only the
// command line knows (installation 0) are decided there.
func TestTestsApproveRefusesManagedTickets(t *testing.T) {
	url := storeEnv(t)
	hidden := t.TempDir()
	os.WriteFile(filepath.Join(hidden, "test_a.py"), []byte("def test_a():\n    assert True\n"), 0o644)
	gh := appEnv(t)
	gh.AddInstallation(41, "octo-org")
	gh.AddRepo(41, "octo-org", "widgets", "main")
	code, stdout, stderr := runCLI(t, "tests", "push", "--store", url, "--ticket", "octo-org/widgets#12", "--author", "writer-bot", "--format", "json", hidden)
	if code != exitPass {
		t.Fatalf("push: %d %s", code, stderr)
	}
	var v struct{ Digest string }
	json.Unmarshal([]byte(stdout), &v)
	for _, args := range [][]string{
		{"approve", "--by", "alice"},
		{"approve", "--by", "alice", "--installation", "41"},
		{"reject", "--by", "alice", "--reason", "no"},
	} {
		full := append([]string{"tests", args[0], "--store", url, "--ticket", "octo-org/widgets#12", "--version", "1", "--digest", v.Digest}, args[1:]...)
		code, _, stderr := runCLI(t, full...)
		if code != exitUsage || !strings.Contains(stderr, "which the service manages") || !strings.Contains(stderr, "https://testfirst.example.com/tickets/octo-org/widgets/12") {
			t.Errorf("%v: %d %q, want a refusal pointing to the card", args, code, stderr)
		}
	}
	_, stdout, _ = runCLI(t, "tests", "list", "--store", url, "--ticket", "octo-org/widgets#12", "--format", "json")
	if !strings.Contains(stdout, `"state":"pending"`) {
		t.Errorf("the version was decided from the command line: %s", stdout)
	}
}

// TestTestsPushOnlyIntoAServedStore: the push the bot's comment shows,
// run on a writer's own machine, must not "succeed" into a directory the
// service never reads. A store no service started on is refused before any
// key is asked for, saying where the tests go instead; the store the
// service's settings name is the default, and the output says which
// service reads it.
func TestTestsPushOnlyIntoAServedStore(t *testing.T) {
	hidden := t.TempDir()
	os.WriteFile(filepath.Join(hidden, "test_a.py"), []byte("def test_a():\n    assert True\n"), 0o644)

	t.Run("a writer's machine, no keys, no service", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("TESTFIRST_PUBLIC_URL", testServiceURL)
		code, stdout, stderr := runCLI(t, "tests", "push", "--ticket", "octo-org/widgets#12", "--installation", "41", hidden)
		for _, want := range []string{"file://./var/hidden is not the store of a testfirst service", "nothing was pushed",
			"TESTFIRST_STORE_URL", testServiceURL + "/tickets/octo-org/widgets/12"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("push into a store no service reads: %d %q %q; want it to say %q", code, stdout, stderr, want)
			}
		}
		if code != exitUsage || strings.Contains(stderr, "keys init") {
			t.Errorf("push into a store no service reads: %d %q", code, stderr)
		}
		if names, _ := filepath.Glob("var/hidden/*"); len(names) > 0 {
			t.Errorf("the refused push left %v", names)
		}
	})

	url := storeEnv(t)
	t.Run("with the keys, into another directory", func(t *testing.T) {
		other := "file://" + filepath.Join(t.TempDir(), "hidden")
		code, _, stderr := runCLI(t, "tests", "push", "--store", other, "--ticket", "octo-org/widgets#12", "--installation", "41", "--author", "alice", hidden)
		if code != exitUsage || !strings.Contains(stderr, other+" is not the store of a testfirst service") {
			t.Errorf("push into an unread directory: %d %q", code, stderr)
		}
	})

	t.Run("the service's store from its settings, the author from the machine", func(t *testing.T) {
		t.Chdir(t.TempDir())
		t.Setenv("TESTFIRST_STORE_URL", url)
		t.Setenv("USER", "")
		code, stdout, stderr := runCLI(t, "tests", "push", "--ticket", "octo-org/widgets#12", "--installation", "41", hidden)
		if code != exitPass || !strings.Contains(stdout, "v1 sha256:") || !strings.Contains(stdout, "pushed to "+url+", the store of the testfirst service at "+testServiceURL) {
			t.Fatalf("push with the service's settings: %d %q %q", code, stdout, stderr)
		}
		code, stdout, _ = runCLI(t, "tests", "list", "--ticket", "octo-org/widgets#12", "--installation", "41", "--format", "json")
		if code != exitPass || !strings.Contains(stdout, `"number":1`) || strings.Contains(stdout, `"author":""`) {
			t.Errorf("the service's store does not hold v1 with an author: %d %s", code, stdout)
		}
	})
}
