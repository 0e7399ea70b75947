package environment

import (
	"github.com/testfirst-app/testfirst/wrapper"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pipMissing is what Debian's pip 23 prints for a requirement the index
// has no distribution of.
const pipMissing = `Looking in indexes: http://127.0.0.1:38917/simple/
Collecting greetlib==1.0
  Downloading http://127.0.0.1:38917/files/greetlib-1.0-py3-none-any.whl (1.2 kB)
ERROR: Could not find a version that satisfies the requirement nosuchpkg>=1 (from versions: none)
ERROR: No matching distribution found for nosuchpkg>=1
`

func TestBuildErrorMessages(t *testing.T) {
	if got := missingPackages([]byte(pipMissing)); !cmp.Equal(got, []string{"nosuchpkg>=1"}) {
		t.Errorf("missingPackages = %q", got)
	}
	if got := wrapper.LastPipError([]byte(pipMissing)); got != "ERROR: No matching distribution found for nosuchpkg>=1" {
		t.Errorf("LastPipError = %q", got)
	}
	for _, tt := range []struct {
		err  BuildError
		want []string
	}{
		{BuildError{Index: "https://pypi.org/simple", Missing: []string{"nosuchpkg>=1"}},
			[]string{`the package index https://pypi.org/simple has no distribution of "nosuchpkg>=1"`, "--index-url, TESTFIRST_PACKAGE_INDEX"}},
		{BuildError{Index: "https://pypi.org/simple", TimedOut: true, Timeout: 10 * time.Minute},
			[]string{"timed out after 10m0s"}},
		{BuildError{Index: "https://pypi.org/simple", Reason: "pip exited 1: ERROR: boom"},
			[]string{"failed: pip exited 1: ERROR: boom"}},
	} {
		msg := tt.err.Error()
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%+v: %q lacks %q", tt.err, msg, w)
			}
		}
	}
}

// TestIndexShownWithoutCredentials: an index URL with credentials is
// shown without them, given to the sandbox without them (plain http at
// its port for https, the egress proxy adding them), and every way of
// writing its secret is redacted from what a build printed.
func TestIndexShownWithoutCredentials(t *testing.T) {
	u, _ := url.Parse("https://ci:s3c%2Fret@mirror.example/simple")
	if got := withoutCredentials(u); got != "https://redacted@mirror.example/simple" {
		t.Errorf("withoutCredentials = %q", got)
	}
	for in, want := range map[string]string{
		"https://ci:s3cret@mirror.example/simple":  "http://mirror.example:443/simple",
		"http://ci:s3cret@10.0.0.5:8080/simple/":   "http://10.0.0.5:8080/simple/",
		"https://TOKEN@mirror.example:8443/simple": "http://mirror.example:8443/simple",
		"https://mirror.example/simple":            "https://mirror.example/simple",
	} {
		v, _ := url.Parse(in)
		if got := sandboxIndexURL(v); got != want {
			t.Errorf("sandboxIndexURL(%s) = %q, want %q", in, got, want)
		}
	}
	e := &Environments{secrets: secretsOf(u)}
	if got := e.redact("index http://ci:s3c%2Fret@mirror, s3c/ret, s3c%2Fret"); strings.Contains(got, "s3c") {
		t.Errorf("redact left the secret: %q", got)
	}
	tok, _ := url.Parse("https://TOKEN@mirror.example/simple")
	if got := (&Environments{secrets: secretsOf(tok)}).redact("https://TOKEN@mirror.example"); got != "https://[redacted]@mirror.example" {
		t.Errorf("a token as user name: %q", got)
	}
}

// TestNewRefusesBadInput: an index that is not http(s), and no proxy.
func TestNewRefusesBadInput(t *testing.T) {
	if _, err := New(nil, nil, "ftp://mirror/simple", "/run/x.sock"); err == nil || !strings.Contains(err.Error(), "want an http or https URL") {
		t.Errorf("ftp index: %v", err)
	}
	if _, err := New(nil, nil, "", ""); err == nil || !strings.Contains(err.Error(), "egress proxy's socket is required") {
		t.Errorf("no proxy socket: %v", err)
	}
	e := &Environments{}
	WithMirror("/m.sock")(e)
	if e.mirror != "/m.sock" {
		t.Error("WithMirror")
	}
}
