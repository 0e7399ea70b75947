package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/docker/go-units"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/grader/environment"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/egress"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/tree"
)

// gradeFlags are the flags of "testfirst grade".
type gradeFlags struct {
	repo, tests, base, reference string
	timeout                      time.Duration
	memory                       string
	cpus                         float64
	pids                         int64
	image, wrapper               string
	format                       string
	command                      string
	noUIDSplit                   bool
	split                        bool
	store, ticket, digest        string
	installation                 int64
	reproduce                    int64
	config                       string
	strength                     bool
	runtime                      string
	indexURL, python, network    string
}

func (f *gradeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.repo, "repo", "", "tree under test (required)")
	fs.StringVar(&f.tests, "tests", "", "directory of hidden pytest files (required)")
	fs.StringVar(&f.base, "base", "", "base tree: enables the base check and touched_tests")
	fs.StringVar(&f.reference, "reference", "", "reference patch (git diff) against --base that must pass every hidden test")
	limits := sandbox.DefaultLimits
	fs.DurationVar(&f.timeout, "timeout", grader.DefaultTimeout, "wall clock for each sandbox run of the grade (the tree, the base, the reference, the rerun)")
	fs.StringVar(&f.memory, "memory", units.BytesSize(float64(limits.Memory)), "memory limit of each sandbox, e.g. 512m or 2g")
	fs.Float64Var(&f.cpus, "cpus", limits.CPUs(), "CPU limit of each sandbox")
	fs.Int64Var(&f.pids, "pids", limits.Pids, "process limit of each sandbox")
	fs.StringVar(&f.image, "image", "", "base image with python3 and pytest (default: built from Debian packages)")
	fs.StringVar(&f.wrapper, "wrapper", "", "path of the testfirst-wrapper binary (default: beside testfirst, then PATH)")
	fs.StringVar(&f.format, "format", "text", "report format: json or text")
	fs.StringVar(&f.command, "command", "", "a non-pytest test command, run in the repo (trust: low)")
	fs.StringVar(&f.runtime, "runtime", "", "OCI runtime of the engine the sandboxes run under, e.g. runsc (gVisor); the engine's default when empty (also $TESTFIRST_SANDBOX_RUNTIME)")
	fs.BoolVar(&f.noUIDSplit, "no-uid-split", false, "run tests as the wrapper's uid, for runtimes without SETUID (trust: best_effort)")
	fs.BoolVar(&f.split, "split", false, "split grading: the hidden tests and pytest in one process, every module of the tree in another, as another uid (trust: sealed or split)")
	fs.StringVar(&f.store, "store", app.DefaultStoreURL, "hidden test store, with --ticket and --digest instead of --tests")
	fs.StringVar(&f.ticket, "ticket", "", "ticket owner/repo#N whose approved tests to grade against (with --digest)")
	fs.StringVar(&f.digest, "digest", "", "digest of the ticket's approved version, sha256:…")
	fs.Int64Var(&f.installation, "installation", 0, "GitHub App installation id of the ticket's repository")
	fs.BoolVar(&f.strength, "strength", false, "with --base: also find flaky hidden tests and, with --reference, grade up to 40 mutants of the reference patch")
	fs.Int64Var(&f.reproduce, "reproduce", 0, "grade a recorded grade (by id) again from the same trees, tests and image, and show both reports; reads the service's configuration")
	fs.StringVar(&f.config, "config", "", "with --reproduce: the service's YAML configuration file (also $TESTFIRST_CONFIG)")
	fs.StringVar(&f.indexURL, "index-url", "", "package index the dependency environment is built from (default "+environment.DefaultIndex+", also $TESTFIRST_PACKAGE_INDEX)")
	fs.StringVar(&f.python, "python", "", "Python version of the grade: "+strings.Join(sandbox.PythonVersions(), " or ")+" (Debian's; default: the one the base's requires-python allows, "+sandbox.DefaultPython+" first)")
	fs.StringVar(&f.network, "network", report.NetworkNone, "none, or mirror: the grade may read the package index (GET, HEAD), and nothing else")
}

// approvedTests names a ticket's approved version of hidden tests in the
// store: the grader reads it with its identity and verifies digest.
type approvedTests struct {
	storeURL string
	ticket   store.Ticket
	digest   string
}

// request checks the flags and reads the trees they name. approved is set
// when the hidden tests are to come from the store.
func (f *gradeFlags) request() (req grader.Request, approved *approvedTests, err error) {
	req, err = f.readRequest()
	if err != nil || f.ticket == "" {
		return req, nil, err
	}
	t, err := store.ParseTicket(f.ticket)
	if err != nil {
		return req, nil, usageError{"--ticket: " + err.Error()}
	}
	t.Installation = f.installation
	return req, &approvedTests{storeURL: f.store, ticket: t, digest: f.digest}, nil
}

// readRequest checks the flags and reads the trees they name.
func (f *gradeFlags) readRequest() (grader.Request, error) {
	var req grader.Request
	fromStore := f.ticket != "" || f.digest != ""
	switch {
	case f.repo == "":
		return req, usageError{"--repo is required"}
	case f.tests == "" && !fromStore:
		return req, usageError{"--tests DIR, or --ticket and --digest (with --store), say which hidden tests to grade against"}
	case f.tests != "" && fromStore:
		return req, usageError{"--tests and --ticket/--digest both name hidden tests: give one"}
	case fromStore && (f.ticket == "" || f.digest == ""):
		return req, usageError{"--ticket and --digest go together: the grader only grades a ticket's approved digest"}
	}
	if f.format != "json" && f.format != "text" {
		return req, usageError{fmt.Sprintf("--format %q: want json or text", f.format)}
	}
	if f.reference != "" && f.base == "" {
		return req, usageError{"--reference needs --base: the patch is applied to the base tree"}
	}
	if f.timeout <= 0 {
		return req, usageError{"--timeout must be positive, e.g. 10m"}
	}
	mem, err := units.RAMInBytes(f.memory)
	if err != nil || mem < 64<<20 {
		return req, usageError{fmt.Sprintf("--memory %q: want a size of at least 64m, e.g. 512m or 2g", f.memory)}
	}
	if f.cpus <= 0 || math.IsNaN(f.cpus) {
		return req, usageError{"--cpus must be positive, e.g. 1.5"}
	}
	if f.pids < 16 {
		return req, usageError{"--pids must be at least 16"}
	}
	if _, err := sandbox.PythonRecipeFor(f.python); f.python != "" && err != nil {
		return req, usageError{"--python: " + err.Error()}
	}
	if f.network != report.NetworkNone && f.network != report.NetworkMirror {
		return req, usageError{fmt.Sprintf("--network %q: want none or mirror", f.network)}
	}
	if f.image != "" && (f.python != "" || f.indexURL != "" || f.network != report.NetworkNone) {
		return req, usageError{"--image is an image of one's own, without dependency environments: drop --python, --index-url and --network, or --image"}
	}
	req = grader.Request{Timeout: f.timeout, Limits: sandbox.LimitsOf(mem, f.cpus, f.pids), NoUIDSplit: f.noUIDSplit, Split: f.split,
		Python: f.python, Mirror: f.network == report.NetworkMirror, TrustedCollection: true}
	if f.command != "" {
		req.Command = strings.Fields(f.command)
	}
	// Trees are read into memory; no symlink inside them is followed, any
	// .git directory is left out, and trees over the grader's limits are
	// refused.
	if req.Repo, err = tree.Load(f.repo); err != nil {
		return req, usageError{fmt.Sprintf("--repo: %v", err)}
	}
	if f.tests != "" {
		if req.Hidden, err = tree.Load(f.tests); err != nil {
			return req, usageError{fmt.Sprintf("--tests: %v", err)}
		}
	}
	if f.base != "" {
		if req.Base, err = tree.Load(f.base); err != nil {
			return req, usageError{fmt.Sprintf("--base: %v", err)}
		}
	}
	if f.strength && f.base == "" {
		return req, usageError{"--strength needs --base: the strength checks run the base tree (and the reference patch against it)"}
	}
	if f.strength {
		req.TestStrength = &grader.TestStrength{}
	}
	if f.reference != "" {
		if req.Reference, err = os.ReadFile(f.reference); err != nil {
			return req, usageError{fmt.Sprintf("--reference: %v", err)}
		}
	}
	return req, nil
}

// fill sets req's hidden tests (and, with a base and no reference, the
// reference patch) from the approved version, verified against a.digest.
func (a *approvedTests) fill(ctx context.Context, req *grader.Request) error {
	r, closeFn, err := app.OpenStoreReader(ctx, a.storeURL)
	if err != nil {
		return err
	}
	defer closeFn()
	content, _, err := r.Open(ctx, a.ticket, a.digest)
	if err != nil {
		return err
	}
	if req.Hidden, err = content.HiddenTree(); err != nil {
		return err
	}
	req.TestsDigest = a.digest
	if req.Base != nil && req.Reference == nil && len(content.Reference) > 0 {
		req.Reference = content.Reference
	}
	return nil
}

func gradeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var f gradeFlags
	fs := newFlags("grade", stderr)
	f.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	if f.reproduce != 0 || f.config != "" {
		return reproduceCmd(ctx, fs, f, stdout)
	}
	req, approved, err := f.request()
	if err != nil {
		return exitUsage, err
	}
	if approved != nil {
		if err := approved.fill(ctx, &req); err != nil {
			return exitUsage, err
		}
	}
	index := f.indexURL
	if index == "" {
		index = os.Getenv("TESTFIRST_PACKAGE_INDEX")
	}
	runtime := f.runtime
	if runtime == "" {
		runtime = os.Getenv("TESTFIRST_SANDBOX_RUNTIME")
	}
	// An index on loopback or a private network named by its name is
	// reached only with its address in TESTFIRST_EGRESS_INTERNAL, as in
	// the service.
	peerUIDs, internal, err := app.EgressFromEnv(os.Getenv)
	if err != nil {
		return exitUsage, err
	}
	g, err := app.OpenGrading(ctx, app.GradingConfig{Wrapper: f.wrapper, BaseImage: f.image, Progress: stderr, Runtime: runtime,
		EgressPeerUIDs: peerUIDs, EgressInternal: internal,
		Environments: f.image == "", PackageIndex: index, EgressLog: func(e egress.Entry) {
			fmt.Fprintf(stderr, "egress: %s %s%s %d %d bytes%s\n", e.Method, e.Host, e.Path, e.Status, e.Bytes, deniedNote(e.Denied))
		}})
	if err != nil {
		return exitUsage, err
	}
	defer g.Close()
	// An error is bad input or an engine failure; whatever the code under
	// test does ends in the report.
	rep, err := g.Grader.Grade(ctx, req)
	if err != nil {
		return exitUsage, err
	}
	if f.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = report.WriteText(stdout, rep)
	}
	if err != nil {
		return exitUsage, err
	}
	if rep.Verdict == report.VerdictPass {
		return exitPass, nil
	}
	return exitOther, nil
}

func deniedNote(why string) string {
	if why == "" {
		return ""
	}
	return " (denied: " + why + ")"
}

// reproduceCmd runs "testfirst grade --reproduce GRADE": the recorded grade
// again, both reports side by side. It exits 0 when the grade reproduced.
func reproduceCmd(ctx context.Context, fs *flag.FlagSet, f gradeFlags, stdout io.Writer) (int, error) {
	if f.reproduce <= 0 {
		return exitUsage, usageError{"--reproduce needs a grade id (a positive number); --config goes with it"}
	}
	var other []string
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name != "reproduce" && fl.Name != "config" && fl.Name != "format" {
			other = append(other, "--"+fl.Name)
		}
	})
	if len(other) > 0 {
		return exitUsage, usageError{"--reproduce takes the trees, tests and image from the recorded grade: drop " + strings.Join(other, ", ")}
	}
	cfg, err := app.LoadConfig(f.config, os.Getenv)
	if err != nil {
		return exitUsage, err
	}
	rp, err := app.ReproduceGrade(ctx, cfg, f.reproduce)
	if err != nil {
		return exitUsage, err
	}
	if f.format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rp)
	} else {
		err = report.WriteSideBySide(stdout, rp)
	}
	if err != nil {
		return exitUsage, err
	}
	if rp.Same {
		return exitPass, nil
	}
	return exitOther, nil
}
