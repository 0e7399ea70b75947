package test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
)

// leakyBackend is an in-tree build backend whose every hook prints the
// command lines of the processes above it (pip's, with its --index-url)
// and PIP_INDEX_URL, writes them as an "ERROR:" line straight into pip's
// own output, and fails: what any sdist on the index could do.
const leakyBackend = `import os


def _leak(*args, **kwargs):
    lines, pid = [], os.getppid()
    for _ in range(4):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                lines.append(f.read().replace(b"\0", b" ").decode())
            with open("/proc/%d/stat" % pid) as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    text = " | ".join(lines) + " | PIP_INDEX_URL=" + os.environ.get("PIP_INDEX_URL", "")
    print("ERROR: my index is " + text, flush=True)
    try:
        with open("/proc/%d/fd/1" % os.getppid(), "w") as f:
            f.write("ERROR: my index is " + text + "\n")
    except OSError as e:
        print("cannot write into pip's output:", e)
    raise SystemExit(1)


get_requires_for_build_wheel = prepare_metadata_for_build_wheel = build_wheel = build_sdist = _leak
`

// leakySdist is the sdist of leaky 1.0, built by leakyBackend.
func leakySdist(t *testing.T) []byte {
	t.Helper()
	files := map[string]string{
		"leaky-1.0/PKG-INFO":         "Metadata-Version: 2.1\nName: leaky\nVersion: 1.0\n",
		"leaky-1.0/pyproject.toml":   "[build-system]\nrequires = []\nbuild-backend = \"leaky_backend\"\nbackend-path = [\".\"]\n",
		"leaky-1.0/leaky_backend.py": leakyBackend,
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(315532800, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(data))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIndexCredentialsNeverShown: the operator's package index needs
// credentials (user:password@ in its URL). A private package installs
// with them, and an sdist on that index whose build reads pip's command
// line and environment and writes them into pip's output, then fails,
// finds no secret to show: nothing of the grade (reasons, environment,
// pip's output kept for the requester) nor the egress log holds it.
func TestIndexCredentialsNeverShown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dependency environments")
	}
	const user, secret = "ci-user", "S3CRET-TOKEN"
	n1, w1 := buildWheel(t, "greetlib", "1.0")
	var mu sync.Mutex
	var authed, refused int
	index := serveIndex(t, map[string][]byte{n1: w1, "leaky-1.0.tar.gz": leakySdist(t)}, "127.0.0.1:0", func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			mu.Lock()
			if ok && u == user && p == secret {
				authed++
			} else {
				refused++
			}
			mu.Unlock()
			if !ok || u != user || p != secret {
				w.Header().Set("WWW-Authenticate", `Basic realm="private index"`)
				http.Error(w, "credentials required", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	private := strings.Replace(index, "http://", "http://"+user+":"+secret+"@", 1)
	g, _, egressLog := envGrading(t, private)
	ctx := context.Background()
	hidden := treeOf(t, map[string]string{"test_hello.py": "from app import hello\n\n\ndef test_hello():\n    assert hello() == \"hello from greetlib 1.0\"\n"})
	shows := func(what string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the index's password: %s", what, b)
		}
	}

	t.Run("a private package installs", func(t *testing.T) {
		base := treeOf(t, map[string]string{
			"app.py":           "import greetlib\n\ndef hello():\n    return greetlib.greet()\n",
			"requirements.txt": "greetlib==1.0\n",
		})
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != report.VerdictPass {
			t.Fatalf("verdict %s %q, environment %+v: want a pass with greetlib from the private index\n%s", rep.Verdict, rep.Reasons, rep.Environment, rep.Output)
		}
		shows("the report", rep)
	})

	t.Run("a build that prints its index URL", func(t *testing.T) {
		base := treeOf(t, map[string]string{"app.py": "def hello():\n    return 1\n", "requirements.txt": "leaky==1.0\n"})
		rep, err := g.Grader.Grade(ctx, grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		// The build of leaky fails; the grade goes on without it, and
		// says why in pip's last words, which the build wrote.
		if rep.Environment == nil || len(rep.Environment.Unavailable) != 1 || !strings.HasPrefix(rep.Environment.Unavailable[0], "leaky==1.0: pip could not install it: ERROR: my index is") {
			t.Fatalf("verdict %s %q, environment %+v: want leaky named as not installed, in the words its build wrote", rep.Verdict, rep.Reasons, rep.Environment)
		}
		t.Logf("reasons: %q", rep.Reasons)
		shows("the report", rep)
	})

	for _, e := range egressLog() {
		shows("the egress log", e)
	}
	mu.Lock()
	defer mu.Unlock()
	if authed == 0 {
		t.Errorf("the index saw no request with its credentials (%d without)", refused)
	}
	t.Logf("the index answered %d requests with its credentials, refused %d without", authed, refused)
}

// TestUnreachableIndexSaysSo: an index that refuses every connection is
// said to, in the egress proxy's words, not taken for an index without
// the package; the grade goes on, and errs only because the hidden tests
// cannot import what could not be installed, naming that import.
func TestUnreachableIndexSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dependency environments")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	g, _, _ := envGrading(t, "http://"+addr+"/simple/")
	base := treeOf(t, map[string]string{
		"app.py":           "import greetlib\n\ndef hello():\n    return greetlib.greet()\n",
		"requirements.txt": fmt.Sprintf("greetlib==1.0  # %d\n", time.Now().UnixNano()),
	})
	hidden := treeOf(t, map[string]string{"test_hello.py": "from app import hello\n\n\ndef test_hello():\n    assert hello()\n"})
	rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: base, Hidden: hidden, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := addr + " refused the connection"
	if rep.Verdict != report.VerdictError || rep.Environment == nil || len(rep.Environment.Unavailable) != 1 ||
		!strings.Contains(rep.Environment.Unavailable[0], want) ||
		!slices.ContainsFunc(rep.Reasons, func(r string) bool { return strings.Contains(r, `for want of the import "greetlib"`) }) {
		t.Fatalf("verdict %s %q, environment %+v: want an error naming the import greetlib, and %q said\n%s", rep.Verdict, rep.Reasons, rep.Environment, want, rep.Output)
	}
	for _, r := range rep.Reasons {
		if strings.Contains(r, "has no distribution") {
			t.Errorf("reason %q: the index was never reached", r)
		}
	}
	t.Logf("reasons: %q", rep.Reasons)
}
