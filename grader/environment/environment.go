package environment

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// DefaultIndex is the package index unless the operator sets another.
const DefaultIndex = "https://pypi.org/simple"

// ImageName is the name of environment images; the tag is Key's hash.
const ImageName = "testfirst-env"

// DefaultTimeout bounds one environment build.
const DefaultTimeout = 10 * time.Minute

// Labels of an environment image.
const (
	labelPackages = "app.testfirst.packages"
	labelFiles    = "app.testfirst.built_from"
	// labelUnavailable holds, as a JSON list, the requirements a build
	// could not install: such an image serves the grade that built it and
	// is built again by the next.
	labelUnavailable = "app.testfirst.unavailable"
)

// outputLimit bounds the pip output kept of a build.
const outputLimit = 1 << 20

// Engine is what building environments needs of the sandbox engine;
// sandbox/docker's Engine implements it. Each method fails only when the
// engine does.
type Engine interface {
	// EnsureDebianImage returns the id of the recipe's image, building it
	// when missing.
	EnsureDebianImage(ctx context.Context, r sandbox.DebianRecipe, progress io.Writer) (string, error)
	// FindImage returns an image's id and labels; found is false when the
	// engine does not have it.
	FindImage(ctx context.Context, ref string) (id string, labels map[string]string, found bool, err error)
	// Build runs a build and commits its container when Keep says so.
	Build(ctx context.Context, b sandbox.Build) (sandbox.Result, string, error)
	// EnsureLayer returns the layer's image, committing it when missing:
	// the grader image on an environment.
	EnsureLayer(ctx context.Context, l sandbox.Layer) (ref, id string, err error)
}

// BuilderRecipe is the image environments are built in for a Python
// version: the grader's base image for it plus Debian's python3-pip.
func BuilderRecipe(python string) (sandbox.DebianRecipe, error) {
	r, err := sandbox.PythonRecipeFor(python)
	if err != nil {
		return r, err
	}
	r.Name = "testfirst-pybuild"
	r.Packages = append(r.Packages, "python3-pip")
	return r, nil
}

// Environments builds and reuses environment images.
type Environments struct {
	eng     Engine
	wrapper []byte
	index   string
	// shown is the index as reports say it: without credentials.
	shown string
	// secrets are the index URL's credentials, as they may appear in a
	// tool's output: never shown.
	secrets  []string
	socket   string
	timeout  time.Duration
	limits   sandbox.Limits
	progress io.Writer
	mirror   string
	flight   singleflight.Group
	// upstream says what went wrong between the build's egress proxy and
	// the index since a time, in the proxy's words (WithUpstreamFailures).
	upstream func(since time.Time) []string
}

// WithUpstreamFailures lets a build that could not install something say
// what really happened upstream, as the build's egress proxy saw it
// (egress.Proxy.Failures): the index's host could not be resolved,
// refused, timed out.
func WithUpstreamFailures(f func(since time.Time) []string) Option {
	return func(e *Environments) { e.upstream = f }
}

// WithMirror lets grades with network mirror read the index through the
// read-only egress proxy listening on the unix socket at socket.
func WithMirror(socket string) Option { return func(e *Environments) { e.mirror = socket } }

// Option changes Environments.
type Option func(*Environments)

// WithTimeout bounds each build; DefaultTimeout otherwise.
func WithTimeout(d time.Duration) Option { return func(e *Environments) { e.timeout = d } }

// WithProgress sends image build progress to w.
func WithProgress(w io.Writer) Option { return func(e *Environments) { e.progress = w } }

// WithLimits bounds each build's sandbox; sandbox.DefaultLimits with a
// 1 GiB /tmp otherwise.
func WithLimits(l sandbox.Limits) Option { return func(e *Environments) { e.limits = l } }

// New returns Environments that build in eng's sandboxes with the wrapper
// binary, from the package index at indexURL (DefaultIndex when empty),
// reached only through the egress proxy listening on the unix socket at
// proxySocket (a host path; the proxy must allow the index).
func New(eng Engine, wrapperBinary []byte, indexURL, proxySocket string, opts ...Option) (*Environments, error) {
	if indexURL == "" {
		indexURL = DefaultIndex
	}
	u, err := url.Parse(indexURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("package index %q: want an http or https URL such as %s", indexURL, DefaultIndex)
	}
	if proxySocket == "" {
		return nil, errors.New("environments: the egress proxy's socket is required: builds have no other way to the index")
	}
	if err := wrapper.CheckStatic(wrapperBinary); err != nil {
		return nil, err
	}
	limits := sandbox.DefaultLimits
	limits.TmpSize = 1 << 30
	e := &Environments{eng: eng, wrapper: wrapperBinary, index: sandboxIndexURL(u), shown: withoutCredentials(u), secrets: secretsOf(u), socket: proxySocket, timeout: DefaultTimeout, limits: limits, progress: io.Discard}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// withoutCredentials is u as a report may show it: a user name or
// password in it is replaced.
func withoutCredentials(u *url.URL) string {
	shown := *u
	if shown.User != nil {
		shown.User = url.User("redacted")
	}
	return shown.String()
}

// sandboxIndexURL is the index as the build sandbox asks for it: without
// credentials, which the egress proxy adds (egress.WithIndexCredentials);
// an https index with credentials is asked for as plain http at its port
// (http://host:443/...), so that the proxy, which goes upstream over TLS,
// can add them to what it forwards. pip never holds them: no build script
// can print them.
func sandboxIndexURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	s := *u
	s.User = nil
	if s.Scheme == "https" {
		s.Scheme = "http"
		if s.Port() == "" {
			s.Host = net.JoinHostPort(s.Hostname(), "443")
		}
	}
	return s.String()
}

// secretsOf are the credentials of u as they may be written: the password
// (or the user name when it stands alone, as a token does), plain and
// URL-escaped.
func secretsOf(u *url.URL) []string {
	if u.User == nil {
		return nil
	}
	secret, ok := u.User.Password()
	if !ok {
		secret = u.User.Username()
	}
	if secret == "" {
		return nil
	}
	out := []string{secret}
	for _, esc := range []string{url.QueryEscape(secret), url.PathEscape(secret), url.UserPassword("", secret).String()[1:]} {
		if !slices.Contains(out, esc) {
			out = append(out, esc)
		}
	}
	return out
}

// redact replaces every secret in s.
func (e *Environments) redact(s string) string {
	for _, x := range e.secrets {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	return s
}

// IndexURL is the package index environments are built from, its
// credentials, if any, left out.
func (e *Environments) IndexURL() string { return e.shown }

// Built is an environment ready to grade in.
type Built struct {
	// ImageID is the image to build the grader image on.
	ImageID string
	// Report is what the grade's report says of it.
	Report report.Environment
}

// Key is the tag of an environment image: a hash of the builder image, the
// declaration files, the requirements read from them (so a change to what
// is read of the same files names a new image), the Python version, the
// package index and how the build runs pip (wrapper.EnvironmentRecipe).
func Key(builderImageID string, files []tree.File, requirements []string, python, indexURL string) string {
	h := sha256.New()
	fmt.Fprintf(h, "testfirst-env\x00%s\x00%s\x00%s\x00%s\x00", builderImageID, python, indexURL, wrapper.EnvironmentRecipe())
	for _, r := range requirements {
		fmt.Fprintf(h, "%s\x00", r)
	}
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "%s\x00%x\x00", f.Path, sum)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Ensure returns the environment base declares for python (DefaultPython
// when empty), building its image when the engine does not have it. Grades
// of one new environment that ask at once wait for the one build. A tree
// that declares nothing gets the grader's base image for python. labels go
// on the build's sandbox when this call starts it (a grade's job and
// grade, so that whoever takes a dead process's job over removes the build
// it left running). A build that fails is a *BuildError; any other error
// is bad input or the engine's.
func (e *Environments) Ensure(ctx context.Context, base *tree.Tree, python string, labels map[string]string) (*Built, error) {
	if python == "" {
		python = sandbox.DefaultPython
	}
	decl, err := Declarations(base)
	if err != nil {
		return nil, fmt.Errorf("dependency declarations of the base tree: %w", err)
	}
	began := time.Now()
	rep := report.Environment{Python: python, BuiltFrom: decl.Files, IndexURL: e.shown, Packages: []string{}, SetAside: decl.SetAside}
	if len(decl.Requirements) == 0 {
		recipe, err := sandbox.PythonRecipeFor(python)
		if err != nil {
			return nil, err
		}
		id, err := e.eng.EnsureDebianImage(ctx, recipe, e.progress)
		if err != nil {
			return nil, fmt.Errorf("grader base image for python %s: %w", python, err)
		}
		rep.Image, rep.Cached = recipe.Ref(), true
		if rep.BuiltFrom == nil {
			rep.BuiltFrom = []string{}
		}
		return &Built{ImageID: id, Report: rep}, nil
	}
	recipe, err := BuilderRecipe(python)
	if err != nil {
		return nil, err
	}
	builderID, err := e.eng.EnsureDebianImage(ctx, recipe, e.progress)
	if err != nil {
		return nil, fmt.Errorf("environment builder image for python %s: %w", python, err)
	}
	var files []tree.File
	for _, name := range decl.Files {
		f, _ := base.Lookup(name)
		files = append(files, *f)
	}
	ref := ImageName + ":" + Key(builderID, files, decl.Requirements, python, e.index)
	rep.Image = ref
	built := false
	// One build serves every grade that waits for it, so it runs on a
	// context of its own (the build sandbox's timeout bounds it): the first
	// caller's cancellation must not fail the others. A caller that is
	// cancelled stops waiting.
	ch := e.flight.DoChan(ref, func() (any, error) {
		bctx := context.WithoutCancel(ctx)
		id, imageLabels, found, err := e.eng.FindImage(bctx, ref)
		if err != nil || (found && imageLabels[labelUnavailable] == "") {
			return imageOf(id, imageLabels), err
		}
		built = true
		return e.build(bctx, builderID, ref, decl, labels)
	})
	var v any
	select {
	case r := <-ch:
		v, err = r.Val, r.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for environment %s: %w", ref, context.Cause(ctx))
	}
	if be, ok := err.(*BuildError); ok {
		be.Image = ref
		return nil, be
	}
	if err != nil {
		return nil, err
	}
	img := v.(image)
	rep.Packages, rep.Cached, rep.Unavailable = img.packages, !built, img.unavailable
	if built {
		rep.BuildSeconds = time.Since(began).Seconds()
	}
	return &Built{ImageID: img.id, Report: rep}, nil
}

// buildLabels are the build sandbox's labels: the caller's, and the
// environment it builds.
func buildLabels(caller map[string]string, ref string) map[string]string {
	labels := maps.Clone(caller)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["app.testfirst.environment"] = ref
	return labels
}

// image is an environment image found or built.
type image struct {
	id          string
	packages    []string
	unavailable []string
}

func imageOf(id string, labels map[string]string) image {
	img := image{id: id, packages: []string{}}
	if p := labels[labelPackages]; p != "" {
		img.packages = strings.Split(p, ",")
	}
	return img
}

// build runs pip in the builder image, through the proxy, and commits the
// container as ref when pip installed everything.
func (e *Environments) build(ctx context.Context, builderID, ref string, decl Declared, labels map[string]string) (image, error) {
	fmt.Fprintf(e.progress, "building environment %s: %d requirement(s) from %s\n", ref, len(decl.Requirements), e.shown)
	job := wrapper.Job{
		Mode:          wrapper.ModeEnvironment,
		Proxy:         true,
		TimeoutMillis: (e.timeout - 15*time.Second).Milliseconds(),
		OutputLimit:   outputLimit,
		Environment:   &wrapper.EnvironmentJob{IndexURL: e.index, Requirements: decl.Requirements},
	}
	if u, _ := url.Parse(e.index); u.Scheme == "http" {
		// Plain http, the index's own or the proxy's for an https index
		// with credentials.
		job.Environment.TrustedHost = u.Hostname()
	}
	input, err := jobArchive(job)
	if err != nil {
		return image{}, err
	}
	var wres wrapper.Result
	var parsed bool
	var unavailable []string
	began := time.Now()
	res, id, err := e.eng.Build(ctx, sandbox.Build{
		Spec: sandbox.Spec{
			Image:       builderID,
			Entrypoint:  []string{wrapper.BinaryPath},
			Input:       bytes.NewReader(input),
			Timeout:     e.timeout,
			Limits:      e.limits,
			StdoutLimit: 4 * outputLimit,
			StderrLimit: 64 << 10,
			ProxySocket: e.socket,
			Labels:      buildLabels(labels, ref),
		},
		Ref:   ref,
		Files: []sandbox.LayerFile{{Path: wrapper.BinaryPath, Mode: 0o755, Data: e.wrapper}},
		Keep: func(r sandbox.Result) (map[string]string, bool) {
			parsed = json.Unmarshal(r.Stdout, &wres) == nil && !r.StdoutTruncated
			if !parsed || wres.Error != "" || wres.TimedOut || wres.ExitCode != 0 {
				return nil, false
			}
			labels := map[string]string{labelPackages: strings.Join(wres.Packages, ","), labelFiles: strings.Join(decl.Files, ",")}
			if len(wres.Unavailable) > 0 {
				unavailable = e.unavailable(wres.Unavailable, e.upstreamSince(began))
				b, _ := json.Marshal(unavailable)
				labels[labelUnavailable] = string(b)
			}
			return labels, true
		},
	})
	if err != nil {
		return image{}, fmt.Errorf("build environment %s: %w", ref, err)
	}
	if id != "" {
		fmt.Fprintf(e.progress, "built environment %s: %s\n", ref, strings.Join(wres.Packages, " "))
		return image{id: id, packages: slices.Clone(wres.Packages), unavailable: unavailable}, nil
	}
	be := e.failure(res, parsed, &wres)
	if up := e.upstreamSince(began); len(up) > 0 && !be.TimedOut {
		be.Upstream = up
	}
	// What a build printed is the build's: no credential of the index
	// reaches a reason or the output kept for the requester, whatever
	// printed it.
	be.Reason, be.Output = e.redact(be.Reason), e.redact(be.Output)
	for i, m := range be.Missing {
		be.Missing[i] = e.redact(m)
	}
	return image{}, be
}

// upstreamSince is what went wrong upstream since t, as the build's
// proxy saw it.
func (e *Environments) upstreamSince(t time.Time) []string {
	if e.upstream == nil {
		return nil
	}
	return e.upstream(t)
}

// unavailable says, in our words, why each requirement a build could not
// install was not: what the proxy saw go wrong upstream, when anything
// did; the index having no distribution; a conflict with the grader's
// runner; else its install failing (pip's output, for the requester,
// says how).
func (e *Environments) unavailable(us []wrapper.Unavailable, upstream []string) []string {
	var out []string
	for _, u := range us {
		why := "pip could not install it: " + truncateLine(u.Error, 300)
		switch {
		case len(upstream) > 0:
			why = "the package index could not be reached: " + strings.Join(upstream, "; ")
		case u.Missing:
			why = "the package index " + e.shown + " has no distribution that meets it"
		case runnerConflict.MatchString(u.Error):
			why = "it asks for another pytest or pluggy than the grader's own"
		}
		out = append(out, e.redact(u.Requirement)+": "+why)
	}
	return out
}

// truncateLine is s cut to n bytes at most, "…" marking the cut.
func truncateLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// failure says why a build committed nothing.
func (e *Environments) failure(res sandbox.Result, parsed bool, w *wrapper.Result) *BuildError {
	be := &BuildError{Index: e.shown, Output: string(w.Output)}
	switch {
	case res.TimedOut || w.TimedOut:
		be.TimedOut, be.Timeout = true, e.timeout
	case !parsed:
		be.Reason = fmt.Sprintf("the build sandbox ended without a report (exit %d", res.ExitCode)
		if res.OOMKilled {
			be.Reason += ", out of memory"
		}
		be.Reason += ")"
		if msg := strings.TrimSpace(string(res.Stderr)); msg != "" {
			be.Reason += ": " + msg
			be.Output += string(res.Stderr)
		}
	case w.Error != "":
		be.Reason = w.Error
	default:
		be.Missing = missingPackages(w.Output)
		be.Runner = runnerConflict.Match(w.Output)
		be.Reason = fmt.Sprintf("pip exited %d: %s", w.ExitCode, wrapper.LastPipError(w.Output))
	}
	return be
}

// runnerConflict is pip's word that a requirement conflicts with the
// constraints that keep the grader's pytest and pluggy.
var runnerConflict = regexp.MustCompile(`\(constraint\) (pytest|pluggy)==`)

// noDistribution is pip's line for a requirement the index cannot satisfy.
var noDistribution = regexp.MustCompile(`No matching distribution found for ([^\s;]+)`)

func missingPackages(out []byte) []string {
	var names []string
	for _, m := range noDistribution.FindAllSubmatch(out, -1) {
		if n := string(m[1]); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// BuildError says why an environment could not be built. Its message is
// fit for the check run; Output, pip's own, is for the requester only.
type BuildError struct {
	// Index is the package index the build used.
	Index string
	// Missing names the requirements the index has no distribution of.
	Missing []string
	// Runner is true when a requirement asks for another pytest or pluggy
	// than the grader's own.
	Runner bool
	// TimedOut is true when the build was killed at Timeout.
	TimedOut bool
	Timeout  time.Duration
	// Upstream is what the build's egress proxy saw go wrong between it
	// and the index, in its own words.
	Upstream []string
	// Reason says what else failed.
	Reason string
	// Output is what pip printed.
	Output string
	// Image is the environment image that was to be built.
	Image string
}

func (e *BuildError) Error() string {
	switch {
	case len(e.Upstream) > 0 && !e.TimedOut:
		return fmt.Sprintf("building the dependency environment failed: the package index %s could not be reached: %s", e.Index, strings.Join(e.Upstream, "; "))
	case len(e.Missing) > 0:
		return fmt.Sprintf("the package index %s has no distribution of %s: fix the requirement in the base branch's declarations, or have the operator point testfirst at an index that has it (--index-url, TESTFIRST_PACKAGE_INDEX)",
			e.Index, strings.Join(quoteAll(e.Missing), ", "))
	case e.Runner:
		return fmt.Sprintf("the base's declarations ask for another pytest or pluggy than the grader's own pytest, which runs the hidden tests (Debian's): drop or relax that requirement in the base branch (%s)", e.Reason)
	case e.TimedOut:
		return fmt.Sprintf("building the dependency environment from %s timed out after %s: declare fewer or prebuilt (wheel) dependencies, or raise the build timeout", e.Index, e.Timeout)
	}
	return fmt.Sprintf("building the dependency environment from %s failed: %s", e.Index, e.Reason)
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strconv.Quote(x)
	}
	return out
}

// jobArchive is the wrapper's input: the job alone.
func jobArchive(job wrapper.Job) ([]byte, error) {
	data, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: wrapper.JobEntry, Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(data))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Request is what a grade asks of its environment.
type Request struct {
	// Repo is the tree under test; Base, when set, the tree it is graded
	// against, whose declarations are the ones built.
	Repo, Base *tree.Tree
	// Python is the Python version (sandbox.DefaultPython when empty).
	Python string
	// Mirror asks for the read-only egress proxy's socket.
	Mirror bool
	// Labels are added to the build's sandbox containers.
	Labels map[string]string
}

// Prepare builds (or finds) the environment req's base tree declares (the
// tree under test's, without a base), and the grader image on it. The
// report says which declaration files the tree under test changed: they
// are not used. A build that fails is a Prepared with Failure set.
func (e *Environments) Prepare(ctx context.Context, req Request) (Prepared, error) {
	decl := req.Base
	if decl == nil {
		decl = req.Repo
	}
	var p Prepared
	if req.Mirror {
		if e.mirror == "" {
			return p, errors.New("network mirror: the read-only egress proxy is not running")
		}
		p.ProxySocket = e.mirror
	}
	d, derr := Declarations(decl)
	python, pythonFrom := req.Python, ""
	if python == "" {
		python, pythonFrom = ChoosePython(decl, d.PytestPins)
	}
	if derr != nil {
		// The base's own files are wrong: the grade says so, and a retry
		// would not help.
		p.Failure = "the dependency declarations of the base tree do not parse: " + derr.Error()
		p.Environment = &report.Environment{Python: python, PythonFrom: pythonFrom, Packages: []string{}, BuiltFrom: []string{}, IndexURL: e.shown, Error: p.Failure}
		return p, nil
	}
	built, err := e.Ensure(ctx, decl, python, req.Labels)
	var be *BuildError
	if errors.As(err, &be) {
		p.Failure, p.FailureOutput = be.Error(), be.Output
		p.Environment = &report.Environment{Image: be.Image, Python: python, PythonFrom: pythonFrom, Packages: []string{}, BuiltFrom: d.Files, SetAside: d.SetAside, IndexURL: e.shown, Error: be.Error()}
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if p.Image, p.ImageID, err = EnsureImage(ctx, e.eng, built.ImageID, e.wrapper, e.progress); err != nil {
		return p, fmt.Errorf("grader image on %s: %w", built.Report.Image, err)
	}
	env := built.Report
	env.PythonFrom = pythonFrom
	if req.Base != nil {
		env.IgnoredChanges = ChangedDeclarations(req.Base, req.Repo)
	}
	p.Environment = &env
	return p, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
