package test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// TestMakeRunServes: `make run` starts testfirst serve (after the image and
// the keys), and serve on its embedded defaults, in an empty directory
// with no TESTFIRST_* setting but the port, prints the URL of the page
// that registers the GitHub App, which answers. The sample tour stays as
// make demo, and the README's quick start is exactly make run and make
// test.
func TestMakeRunServes(t *testing.T) {
	root := testenv.RepoRoot()
	out, err := exec.Command("make", "-s", "-n", "-C", root, "run").Output()
	if err != nil {
		t.Fatalf("make -n run: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); !strings.HasSuffix(lines[len(lines)-1], "/bin/testfirst serve") {
		t.Errorf("make run does not end in testfirst serve:\n%s", out)
	}
	if out, err := exec.Command("make", "-s", "-n", "-C", root, "demo").Output(); err != nil || !strings.Contains(string(out), "testfirst grade --repo") {
		t.Errorf("make demo does not grade the sample: %v\n%s", err, out)
	}
	readme, _ := os.ReadFile(root + "/README.md")
	quick := regexp.MustCompile("(?s)## Quick start.*?```\n(.*?)```").FindSubmatch(readme)
	if quick == nil {
		t.Fatal("README has no quick start block")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(string(quick[1])), "\n") {
		cmds = append(cmds, strings.TrimSpace(strings.SplitN(l, "#", 2)[0]))
	}
	if strings.Join(cmds, ";") != "make run;make test" {
		t.Errorf("the quick start is %q, want make run and make test", cmds)
	}

	bin := buildBinary(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TESTFIRST_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("TESTFIRST_LISTEN=127.0.0.1:%d", port))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-line:
		// Only the listen address is set: the address printed is where
		// it listens, not the default public URL's port.
		want := fmt.Sprintf("testfirst serves on 127.0.0.1:%d. Open http://127.0.0.1:%d/ to register the GitHub App.", port, port)
		if l != want {
			t.Errorf("serve printed %q, want %q", l, want)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve printed nothing within 60s")
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Register testfirst as a GitHub App") || !strings.Contains(string(body), "people label issues") {
		t.Errorf("GET / on the defaults: %d\n%s", resp.StatusCode, body)
	}
	// Without an app no delivery can be taken: not ready; why is the
	// operator's to read (no operator token here), and / says it.
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || string(body) != "not ready\n" {
		t.Errorf("GET /readyz without an app: %d %s", resp.StatusCode, body)
	}
}
