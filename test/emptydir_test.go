package test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/docker"
	"github.com/testfirst-app/testfirst/test/testenv"
	"github.com/testfirst-app/testfirst/tree"
)

// kubeletDirs passes every call to the real engine, but mounts the
// sandbox's /repo, /hidden and /tmp as the kubelet mounts a memory-backed
// emptyDir: a tmpfs of the same size, root-owned, mode 0777 with no sticky
// bit, no nosuid, nodev or noexec, and no owner for /repo. So a grade on
// the Docker engine meets the directories a Kubernetes pod gives the
// wrapper.
type kubeletDirs struct {
	docker.Client
	// hiddenOwner, when set, makes /hidden belong to that uid, which the
	// wrapper (no CAP_CHOWN) cannot take back.
	hiddenOwner int
}

var tmpfsSize = regexp.MustCompile(`(?:^|,)size=([0-9]+)`)

func (k kubeletDirs) ContainerCreate(ctx context.Context, cfg *container.Config, host *container.HostConfig, netCfg *network.NetworkingConfig, platform *ocispec.Platform, name string) (container.CreateResponse, error) {
	h := *host
	h.Tmpfs = map[string]string{}
	for path, opts := range host.Tmpfs {
		if path == sandbox.RepoMount || path == sandbox.HiddenMount || path == sandbox.TmpMount {
			m := tmpfsSize.FindStringSubmatch(opts)
			if m == nil {
				return container.CreateResponse{}, fmt.Errorf("tmpfs %s has no size in %q", path, opts)
			}
			opts = "rw,size=" + m[1] + ",mode=0777"
			if path == sandbox.HiddenMount && k.hiddenOwner != 0 {
				opts += fmt.Sprintf(",uid=%d,gid=%d", k.hiddenOwner, k.hiddenOwner)
			}
		}
		h.Tmpfs[path] = opts
	}
	return k.Client.ContainerCreate(ctx, cfg, &h, netCfg, platform, name)
}

// kubeletGrading is a grader on the local engine whose sandboxes get the
// kubelet's directories.
func kubeletGrading(t *testing.T, hiddenOwner int) *app.Grading {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		testenv.Unavailable(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	engine, err := docker.NewWithClient(ctx, kubeletDirs{Client: cli, hiddenOwner: hiddenOwner})
	if err != nil {
		testenv.Unavailable(t, err)
	}
	g, err := app.OpenGrading(ctx, app.GradingConfig{Wrapper: testenv.Wrapper(t), Progress: os.Stderr, Docker: engine})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// emptyDirHidden is a hidden set of three modules: test_a and test_z test
// add, which the tree gets right; test_b tests slug against the cases of a
// data file beside it, which the tree gets wrong. test_b's assertion sits
// in a loop, so it has no twin: only the hidden files decide it.
var emptyDirHidden = map[string]string{
	"test_a.py": "from calc import add\n\n\ndef test_add_small():\n    assert add(2, 3) == 5\n",
	"test_b.py": `import json
import os

from calc import slug

HERE = os.path.dirname(os.path.abspath(__file__))


def test_slug_cases():
    with open(os.path.join(HERE, "slug_cases.json")) as f:
        cases = json.load(f)
    for text, want in cases:
        assert slug(text) == want
`,
	"slug_cases.json": `[["Hello World", "hello-world"], ["  Trim me ", "trim-me"]]` + "\n",
	"test_z.py":       "from calc import add\n\n\ndef test_add_negative():\n    assert add(-2, -3) == -5\n",
}

// emptyDirCalc is the tree under test: add is right, slug is not, and at
// import (by test_a, the first hidden module collected) it bends what
// comes later, through the directory test_a sits in. It never names that
// directory, so no tamper signal points at it.
const emptyDirCalc = `import ast
import json
import os
import sys


def add(a, b):
    return a + b


def slug(text):
    return text


def _say(what):
    print("emptydir-attack: " + what, flush=True)


def _replace(path, data):
    tmp = os.path.join(os.path.dirname(path), ".bent-" + os.path.basename(path))
    try:
        with open(tmp, "w") as f:
            f.write(data)
        os.replace(tmp, path)
        _say("replaced " + os.path.basename(path))
    except OSError as e:
        _say("refused " + os.path.basename(path) + ": " + type(e).__name__ + " errno " + str(e.errno))


def _is_sentinel(fn):
    # The wrapper's sentinels: try: result = <call> except BaseException: ...
    return (fn.body and isinstance(fn.body[0], ast.Try)
            and any(isinstance(h.type, ast.Name) and h.type.id == "BaseException" for h in fn.body[0].handlers))


def _bend(mode):
    first = sys.modules.get("test_a")
    if first is None:
        return
    here = os.path.dirname(first.__file__)
    if mode == "data":
        path = os.path.join(here, "slug_cases.json")
        with open(path) as f:
            cases = json.load(f)
        _replace(path, json.dumps([[text, slug(text)] for text, _ in cases]))
    else:
        path = os.path.join(here, "test_b.py")
        with open(path) as f:
            tree = ast.parse(f.read())
        kept = 0
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                if _is_sentinel(node):
                    kept += 1
                else:
                    node.body = [ast.Pass()]
        _say("sentinels kept %d" % kept)
        _replace(path, ast.unparse(tree) + "\n")


_bend(MODE)
`

// TestKubeletEmptyDirs grades a tree that, from the first hidden module's
// import, replaces a later hidden file, in sandboxes whose /hidden, /repo
// and /tmp start as the kubelet makes an emptyDir: root-owned, 0777, no
// sticky bit. Its data file of expected values ("data"), or the test
// bodies of a later module with its sentinels kept ("module"). The wrapper
// seals the directories itself before it writes anything, so the
// replacement is refused and the grade is the tree's honest fail.
func TestKubeletEmptyDirs(t *testing.T) {
	g := kubeletGrading(t, 0)
	var hidden []tree.File
	for p, body := range emptyDirHidden {
		hidden = append(hidden, tree.File{Path: p, Mode: 0o644, Data: []byte(body)})
	}
	hiddenTree, err := tree.New(hidden)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"data", "module"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(emptyDirCalc, "_bend(MODE)", fmt.Sprintf("_bend(%q)", mode), 1)
			repo, err := tree.New([]tree.File{{Path: "calc.py", Mode: 0o644, Data: []byte(src)}})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: repo, Hidden: hiddenTree, Timeout: 3 * time.Minute})
			if err != nil {
				t.Fatalf("grade: %v", err)
			}
			checkReportInvariants(t, rep, hiddenTree)
			t.Logf("%s: verdict %s, trust %s, %d/%d passed, sentinels %s, reasons %q, evidence %v, isolation %+v",
				mode, rep.Verdict, rep.Trust, rep.Counts.Passed, rep.Counts.Total, rep.Sentinels, rep.Reasons, rep.Evidence, rep.Isolation)
			for _, line := range strings.Split(rep.Output, "\n") {
				if strings.HasPrefix(line, "emptydir-attack: ") {
					t.Log(line)
				}
			}
			if rep.Verdict == report.VerdictPass {
				t.Errorf("the tree replaced a hidden file and graded pass at trust %s", rep.Trust)
			}
			if !strings.Contains(rep.Output, "emptydir-attack: refused") || !strings.Contains(rep.Output, "errno 13") {
				t.Errorf("the replacement of a hidden file was not refused with EACCES; output:\n%s", rep.Output)
			}
			if strings.Contains(rep.Output, "emptydir-attack: replaced") {
				t.Errorf("a hidden file was replaced")
			}
			if rep.Verdict != report.VerdictFail || rep.Trust != report.TrustIsolated {
				t.Errorf("verdict %s at trust %s, want the honest fail at trust isolated (reasons %q)", rep.Verdict, rep.Trust, rep.Reasons)
			}
			sealed := map[string]string{}
			for _, d := range rep.Isolation.Dirs {
				sealed[d.Path] = fmt.Sprintf("%d %s %v", d.UID, d.Mode, d.Sealed)
			}
			want := map[string]string{"/hidden": "0 0755 true", "/tmp": "0 1777 true", "/repo": "0 1777 true"}
			if !rep.Isolation.DirsSealed || fmt.Sprint(sealed) != fmt.Sprint(want) {
				t.Errorf("directories seen before the tests: %v (sealed %v), want %v", sealed, rep.Isolation.DirsSealed, want)
			}
		})
	}
	t.Run("hidden dir the wrapper cannot take back", func(t *testing.T) {
		t.Parallel()
		g := kubeletGrading(t, 4242)
		repo, err := tree.New([]tree.File{{Path: "calc.py", Mode: 0o644, Data: []byte("def add(a, b):\n    return a + b\n\n\ndef slug(t):\n    return t\n")}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := g.Grader.Grade(context.Background(), grader.Request{Repo: repo, Hidden: hiddenTree, Timeout: 3 * time.Minute})
		if err != nil {
			t.Fatalf("grade: %v", err)
		}
		t.Logf("verdict %s, trust %s, reasons %q", rep.Verdict, rep.Trust, rep.Reasons)
		if rep.Verdict != report.VerdictError || !strings.Contains(strings.Join(rep.Reasons, "\n"), "seal /hidden: it is owned by 4242:4242") {
			t.Errorf("verdict %s (reasons %q): want error, the wrapper refusing a /hidden it cannot seal", rep.Verdict, rep.Reasons)
		}
		if rep.Counts.Passed != 0 || len(rep.Runner) != 0 {
			t.Errorf("tests ran in an unsealed sandbox: %+v, runner %v", rep.Counts, rep.Runner)
		}
	})
}
