package test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/fakegithub"
	"github.com/testfirst-app/testfirst/test/testenv"
)

// fixtures holds real webhook payloads as GitHub sends them.
var fixtures = filepath.Join("..", "..", "shared", "fixtures", "github-webhooks")

// builtBinary is the testfirst binary this test process built, once: a
// link of the whole service costs seconds of CPU and a gigabyte of memory,
// and every test of the process runs the same source.
var builtBinary struct {
	once      sync.Once
	dir, path string
	err       error
}

// buildBinary returns the testfirst binary, building it on the first call
// of the test process into a directory TestMain removes at the end.
func buildBinary(t *testing.T) string {
	t.Helper()
	builtBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "testfirst-bin-")
		if err != nil {
			builtBinary.err = err
			return
		}
		builtBinary.dir = dir
		bin := filepath.Join(dir, "testfirst")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/testfirst")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			builtBinary.err = fmt.Errorf("build testfirst: %v\n%s", err, out)
			return
		}
		builtBinary.path = bin
	})
	if builtBinary.err != nil {
		t.Fatal(builtBinary.err)
	}
	return builtBinary.path
}

// service is a running `testfirst serve`.
type service struct {
	url string
	// listening receives the address of every "listening" log line after
	// the first: serve listens again after registering its app.
	listening chan string
	proc      *os.Process
	// dir and env are the directory and environment serve runs in, for
	// commands that must see the same configuration.
	dir  string
	env  []string
	mu   sync.Mutex
	logs bytes.Buffer
}

// kill ends the service with SIGKILL: no shutdown, no cleanup, as a crash.
func (s *service) kill(t *testing.T) {
	t.Helper()
	if err := s.proc.Kill(); err != nil {
		t.Fatal(err)
	}
}

// log returns what the service has logged so far.
func (s *service) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// startServe runs the real binary on 127.0.0.1:0 against the fake GitHub
// and a SQLite database, and waits until it listens.
// Entries of env come last, so they win over the defaults here.
func startServe(t *testing.T, gh *fakegithub.Server, secret string, env ...string) *service {
	t.Helper()
	dir := t.TempDir()
	key := filepath.Join(dir, "app.pem")
	secrets := filepath.Join(dir, "webhook-secret")
	os.WriteFile(key, gh.PrivateKeyPEM(), 0o600)
	os.WriteFile(secrets, []byte(secret+"\n"), 0o600)
	return runServe(t, dir, append([]string{
		"TESTFIRST_GITHUB_API_URL=" + gh.URL(),
		"TESTFIRST_GITHUB_APP_ID=" + itoa(gh.AppID()),
		"TESTFIRST_GITHUB_PRIVATE_KEY_FILE=" + key,
		"TESTFIRST_WEBHOOK_SECRET_FILE=" + secrets,
	}, env...)...)
}

// operatorToken is the operator token runServe configures; service.get
// sends it, as an operator's monitoring does.
const operatorToken = "operator-token-for-tests-3c9d"

// runServe runs the real binary in dir on 127.0.0.1:0 with a SQLite
// database, a hidden store and the operator token in dir, and waits until
// it listens. Entries of env come last, so they win.
func runServe(t *testing.T, dir string, env ...string) *service {
	t.Helper()
	bin := buildBinary(t)
	tokenFile := filepath.Join(dir, "operator-token")
	if err := os.WriteFile(tokenFile, []byte(operatorToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TESTFIRST_LISTEN=127.0.0.1:0",
		"TESTFIRST_DATABASE_URL=sqlite://"+filepath.Join(dir, "testfirst.db"),
		"TESTFIRST_STORE_URL=file://"+filepath.Join(dir, "hidden"),
		"TESTFIRST_OPERATOR_TOKEN_FILE="+tokenFile,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &service{listening: make(chan string, 8), proc: cmd.Process, dir: dir, env: cmd.Env}
	addr := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		first := true
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs.WriteString(line + "\n")
			s.mu.Unlock()
			var entry struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &entry) != nil || entry.Msg != "listening" {
				continue
			}
			if first {
				addr <- entry.Addr
				first = false
				continue
			}
			select {
			case s.listening <- entry.Addr:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("serve logs:\n%s", s.log())
		}
	})
	select {
	case a := <-addr:
		s.url = "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60s:\n%s", s.log())
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (s *service) deliver(t *testing.T, secret, event, id string, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/webhook", bytes.NewReader(body))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// get GETs path as the operator: with the operator token.
func (s *service) get(t *testing.T, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestServeInstallation drives the real binary: an installation.created
// delivery, signed, is recorded once and its job creates the app's labels
// in the installed repository; a redelivery is acknowledged and not
// processed again.
func TestServeInstallation(t *testing.T) {
	gh := fakegithub.New(t)
	gh.AddInstallation(957387, "Codertocat")
	gh.AddRepo(957387, "Codertocat", "Hello-World", "main")
	const secret = "serve-secret"
	s := startServe(t, gh, secret)

	if code, _ := s.get(t, "/healthz"); code != 200 {
		t.Errorf("healthz %d", code)
	}
	if code, body := s.get(t, "/readyz"); code != 200 {
		t.Errorf("readyz %d %s", code, body)
	}
	body, err := os.ReadFile(filepath.Join(fixtures, "installation", "created.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code := s.deliver(t, secret, "installation", "d-install-1", body); code != http.StatusAccepted {
		t.Fatalf("delivery answered %d", code)
	}
	want := []string{"lane:pair", "test-first", "test-first:approved"}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Join(gh.RepoLabels("Codertocat", "Hello-World"), ",") != strings.Join(want, ",") {
		if time.Now().After(deadline) {
			t.Fatalf("labels %v, want %v", gh.RepoLabels("Codertocat", "Hello-World"), want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	labelCalls := func() int {
		n := 0
		for _, r := range gh.Requests() {
			if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/labels") {
				n++
			}
		}
		return n
	}
	before := labelCalls()
	if code := s.deliver(t, secret, "installation", "d-install-1", body); code != http.StatusAccepted {
		t.Fatalf("redelivery answered %d", code)
	}
	if code := s.deliver(t, "wrong", "installation", "d-install-2", body); code != http.StatusUnauthorized {
		t.Errorf("wrong signature answered %d", code)
	}
	time.Sleep(2 * time.Second)
	if after := labelCalls(); after != before {
		t.Errorf("a redelivery was processed again: %d label calls, then %d", before, after)
	}
	_, metrics := s.get(t, "/metrics")
	for _, line := range []string{
		`testfirst_webhook_deliveries_total{event="installation",result="accepted"} 1`,
		`testfirst_webhook_deliveries_total{event="installation",result="duplicate"} 1`,
		`testfirst_webhook_deliveries_total{event="installation",result="bad_signature"} 1`,
	} {
		if !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	if !strings.Contains(s.log(), `"delivery":"d-install-1"`) {
		t.Errorf("logs do not carry the delivery id:\n%s", s.log())
	}
}
