package agent

import (
	"context"
	"strings"
	"testing"
)

// named is a runner that says which it is: what a provider runner chose.
type named string

func (n named) Run(context.Context, Request) (Result, error) { return Result{Summary: []byte(n)}, nil }

// TestProviderRunner: a harness with sandbox: e2b runs on the E2B runner,
// the others on Docker's; a harness on E2B without an E2B runner is a
// configuration error that names the settings.
func TestProviderRunner(t *testing.T) {
	cfg, err := Parse([]byte(`
harnesses:
  here: {preset: command, command: [/bin/true]}
  there: {preset: command, command: [/bin/true], sandbox: e2b}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProviderRunner(cfg, named("docker"), named("e2b"))
	if err != nil {
		t.Fatal(err)
	}
	for harness, want := range map[string]string{"here": "docker", "there": "e2b"} {
		res, err := p.Run(context.Background(), Request{Harness: harness})
		if err != nil || string(res.Summary) != want {
			t.Errorf("%s ran on %q (%v), want %s", harness, res.Summary, err, want)
		}
	}
	if _, err := p.Run(context.Background(), Request{Harness: "nowhere"}); err == nil {
		t.Error("an unknown harness ran")
	}
	if _, err := NewProviderRunner(cfg, named("docker"), nil); err == nil || !strings.Contains(err.Error(), "harnesses.there.sandbox is e2b: configure e2b") {
		t.Errorf("no E2B runner: %v", err)
	}
}
