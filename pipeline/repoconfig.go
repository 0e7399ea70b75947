package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/testfirst-app/testfirst/checkrun"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/sandbox"
)

// RepoConfigPath is where a repository configures testfirst. It is read
// from the default branch, never from a pull request's head.
const RepoConfigPath = ".github/testfirst.yml"

// AuditConfigError is the audit event of a repository's config error said
// on an issue: the app's home page shows the repository's admins those
// still broken.
const AuditConfigError = "repository.config_error"

// Approval policies.
const (
	// PolicySingle: the requester's approval is enough.
	PolicySingle = "single"
	// PolicyEnforce: a second approver with write access who is not the
	// requester must sign too.
	PolicyEnforce = "enforce"
)

// RepoConfig is a repository's testfirst settings.
type RepoConfig struct {
	// Label opens a ticket when put on an issue.
	Label string
	// TestPaths are globs of the repository's own test files, for
	// touched_tests; the grader's defaults when empty.
	TestPaths []string
	// Timeout bounds one grade.
	Timeout time.Duration
	Memory  int64
	CPUs    float64
	Pids    int64
	// Policy is PolicySingle or PolicyEnforce.
	Policy string
	// MaxRejections stops a ticket (label lane:pair) after that many.
	MaxRejections int
	// FastApproval is the card-to-approval time under which an approval is
	// counted as fast.
	FastApproval time.Duration
	// Python is the Python version grades run (environment.python):
	// Debian's, grader.DefaultPython unless set.
	Python string
	// Network is grader.NetworkNone, or grader.NetworkMirror to let the
	// grade read the operator's package index, and nothing else
	// (grading.network).
	Network string
	// UIDSplit is UIDSplitAllowed, or UIDSplitRequired to refuse a grade
	// whose uid split was not proven instead of posting it best_effort
	// (grading.uid_split).
	UIDSplit string
	// Split is SplitOff, or SplitOn to grade the repository's pull
	// requests and versions split (grader.Request.Split): the code under
	// test in a process of its own, the per-test fallback in-process
	// (grading.split). The service's TESTFIRST_SPLIT=on turns it on for
	// every repository.
	Split string

	// Writer and Implementer name the harnesses (of the service's
	// configuration) that write the hidden tests and open the pull
	// request; AgentNone (the default) leaves the role to people.
	Writer, Implementer string
	// MaxRounds bounds an implementer's runs against one approved version
	// (agents.max_rounds): a failing grade starts the next round until
	// then.
	MaxRounds int

	// WithdrawnCheck is the conclusion of a withdrawn ticket's check runs
	// (withdrawn_check): ConclusionActionRequired (the default) keeps a
	// required check blocking; ConclusionNeutral lets the pull request
	// merge without the ticket's grade.
	WithdrawnCheck string

	// KeepTests is what becomes of the approved hidden tests once a pull
	// request's grade passes and a reviewer other than its author approves
	// it (keep_tests): KeepOff (the default) keeps them hidden; KeepCommit
	// adds them to the pull request as a commit of the app's; KeepFollowUp
	// opens a pull request of them once the pull request is merged.
	KeepTests string

	// Regressions is the regression run beside each pull request's grade
	// (regressions:): the base's own test suite run on the base and on
	// the pull request's code, posted as the check run
	// RegressionsCheckRunName.
	Regressions RegressionsConfig
}

// RegressionsConfig is a repository's regressions: settings.
type RegressionsConfig struct {
	// Enabled runs it (regressions.enabled, on by default).
	Enabled bool
	// Paths are the suite's files or directories given to pytest
	// (regressions.paths); empty: pytest's own discovery under the
	// repository's configuration.
	Paths []string
	// Budget bounds each of its runs (regressions.budget).
	Budget time.Duration
}

// The values of keep_tests.
const (
	// KeepOff: the hidden tests stay hidden.
	KeepOff = "off"
	// KeepCommit: a commit of the app's on the pull request's head branch
	// adds them (a fork's branch, which the app cannot push to, gets a
	// follow-up pull request instead, and the ticket says so).
	KeepCommit = "commit"
	// KeepFollowUp: once the pull request is merged, a branch of the
	// app's off the default branch adds them, in a pull request of its
	// own.
	KeepFollowUp = "follow_up"
)

// AgentNone is the writer or implementer of a repository that names no
// harness: people do the role.
const AgentNone = "none"

// CheckHarnesses says which of the repository's writer and implementer
// the service does not know, with the names it knows: the message goes on
// the issue as it is, like any bad config.
func (c RepoConfig) CheckHarnesses(known []string) error {
	var errs []error
	for _, r := range []struct{ key, name string }{{"writer", c.Writer}, {"implementer", c.Implementer}} {
		if r.name == AgentNone || slices.Contains(known, r.name) {
			continue
		}
		want := "none (the service configures no harness)"
		if len(known) > 0 {
			want = AgentNone + " or one of the service's harnesses: " + strings.Join(known, ", ")
		}
		errs = append(errs, fmt.Errorf("%s: %s %q: no such harness; want %s", RepoConfigPath, r.key, r.name, want))
	}
	return errors.Join(errs...)
}

// DefaultRepoConfig applies when a repository has no config file.
func DefaultRepoConfig() RepoConfig {
	return RepoConfig{
		Label:          "test-first",
		Timeout:        10 * time.Minute,
		Memory:         1 << 30,
		CPUs:           2,
		Pids:           256,
		Policy:         PolicySingle,
		MaxRejections:  3,
		FastApproval:   3 * time.Minute,
		Python:         "", // the one the base asks for (requires-python), else sandbox.DefaultPython
		Network:        report.NetworkNone,
		Writer:         AgentNone,
		Implementer:    AgentNone,
		MaxRounds:      3,
		UIDSplit:       UIDSplitAllowed,
		Split:          SplitOff,
		WithdrawnCheck: checkrun.ConclusionActionRequired,
		KeepTests:      KeepOff,
		Regressions:    RegressionsConfig{Enabled: true, Budget: 10 * time.Minute},
	}
}

// repoConfigFile is the file's YAML shape.
type repoConfigFile struct {
	Label     *string  `yaml:"label"`
	TestPaths []string `yaml:"test_paths"`
	Grading   struct {
		Timeout  *string  `yaml:"timeout"`
		Memory   *string  `yaml:"memory"`
		CPUs     *float64 `yaml:"cpus"`
		Pids     *int64   `yaml:"pids"`
		Network  *string  `yaml:"network"`
		UIDSplit *string  `yaml:"uid_split"`
		Split    *string  `yaml:"split"`
	} `yaml:"grading"`
	Environment struct {
		Python *string `yaml:"python"`
	} `yaml:"environment"`
	Approval struct {
		Policy        *string `yaml:"policy"`
		MaxRejections *int    `yaml:"max_rejections"`
		FastApproval  *string `yaml:"fast_approval"`
	} `yaml:"approval"`
	Writer      *string `yaml:"writer"`
	Implementer *string `yaml:"implementer"`
	Agents      struct {
		MaxRounds *int `yaml:"max_rounds"`
	} `yaml:"agents"`
	WithdrawnCheck *string `yaml:"withdrawn_check"`
	KeepTests      *string `yaml:"keep_tests"`
	Regressions    struct {
		Enabled *string  `yaml:"enabled"`
		Paths   []string `yaml:"paths"`
		Budget  *string  `yaml:"budget"`
	} `yaml:"regressions"`
}

// Bounds a repository may choose within.
const (
	// MaxRunTimeout bounds each sandbox run of a grade (grading.timeout). A grade runs the pull
	// request and then, at most once, its failing tests again, each with
	// the whole budget, so a grade takes up to twice this plus its
	// environment build: it must stay within a grade job's time (80 minutes
	// at the default job rescue time), or the job ends before its grade.
	MaxRunTimeout = 30 * time.Minute
	minMemory     = 64 << 20
	maxMemory     = 8 << 30
	maxCPUs       = 8
	maxPids       = 4096
)

// ParseRepoConfig reads .github/testfirst.yml over the defaults. Every
// problem is reported, each naming the setting and what is allowed, so the
// message can go on the issue or check run as it is.
func ParseRepoConfig(data []byte) (RepoConfig, error) {
	c := DefaultRepoConfig()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s: %w", RepoConfigPath, err)
	}
	if len(doc.Content) > 0 {
		if err := errors.Join(unknownKeys(doc.Content[0], reflect.TypeOf(repoConfigFile{}), "")...); err != nil {
			return c, err
		}
	}
	var f repoConfigFile
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s: %w", RepoConfigPath, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(RepoConfigPath+": "+format, args...))
	}
	if f.Label != nil {
		l := strings.TrimSpace(*f.Label)
		if l == "" || len(l) > 50 || strings.ContainsAny(l, ",\n") {
			bad("label %q: want a label name of 1 to 50 characters without commas", *f.Label)
		}
		c.Label = l
	}
	for _, p := range f.TestPaths {
		if _, err := path.Match(p, ""); err != nil || p == "" || strings.HasPrefix(p, "/") {
			bad("test_paths %q: want a relative glob such as tests/** or test_*.py", p)
		}
	}
	c.TestPaths = f.TestPaths
	if s := f.Grading.Timeout; s != nil {
		d, err := time.ParseDuration(*s)
		if err != nil || d <= 0 || d > MaxRunTimeout {
			bad("grading.timeout %q: want a duration from 1s to %s, e.g. 10m", *s, MaxRunTimeout)
		}
		c.Timeout = d
	}
	if s := f.Grading.Memory; s != nil {
		m, err := parseMemory(*s)
		if err != nil || m < minMemory || m > maxMemory {
			bad("grading.memory %q: want a size from 64m to 8g, e.g. 1g", *s)
		}
		c.Memory = m
	}
	if v := f.Grading.CPUs; v != nil {
		if *v <= 0 || *v > maxCPUs {
			bad("grading.cpus %v: want a number above 0 and at most %d", *v, maxCPUs)
		}
		c.CPUs = *v
	}
	if v := f.Grading.Pids; v != nil {
		if *v < 16 || *v > maxPids {
			bad("grading.pids %d: want 16 to %d", *v, maxPids)
		}
		c.Pids = *v
	}
	if v := f.Grading.Network; v != nil {
		if *v != report.NetworkNone && *v != report.NetworkMirror {
			bad("grading.network %q: want %s (the default) or %s (the grade may read the package index, nothing else)", *v, report.NetworkNone, report.NetworkMirror)
		}
		c.Network = *v
	}
	if v := f.Grading.UIDSplit; v != nil {
		if *v != UIDSplitAllowed && *v != UIDSplitRequired {
			bad("grading.uid_split %q: want %s (the default: a grade without the uid split is posted with trust best_effort) or %s (such a grade is refused)", *v, UIDSplitAllowed, UIDSplitRequired)
		}
		c.UIDSplit = *v
	}
	if v := f.Grading.Split; v != nil {
		if *v != SplitOff && *v != SplitOn {
			bad("grading.split %q: want %s (the default: the code under test runs in the tests' process) or %s (it runs in a process of its own; tests the split cannot run are graded in-process, as the base needs)", *v, SplitOff, SplitOn)
		}
		c.Split = *v
	}
	if v := f.Environment.Python; v != nil {
		if _, err := sandbox.PythonRecipeFor(*v); err != nil {
			bad("environment.python %q: want one of %s", *v, strings.Join(sandbox.PythonVersions(), ", "))
		}
		c.Python = *v
	}
	if v := f.Approval.Policy; v != nil {
		if *v != PolicySingle && *v != PolicyEnforce {
			bad("approval.policy %q: want %s or %s", *v, PolicySingle, PolicyEnforce)
		}
		c.Policy = *v
	}
	if v := f.Approval.MaxRejections; v != nil {
		if *v < 1 || *v > 20 {
			bad("approval.max_rejections %d: want 1 to 20", *v)
		}
		c.MaxRejections = *v
	}
	if v := f.WithdrawnCheck; v != nil {
		if *v != checkrun.ConclusionActionRequired && *v != checkrun.ConclusionNeutral {
			bad("withdrawn_check %q: want %s (the default: a withdrawn ticket's check stays blocking) or %s (it counts as passing where the check is required)",
				*v, checkrun.ConclusionActionRequired, checkrun.ConclusionNeutral)
		}
		c.WithdrawnCheck = *v
	}
	if v := f.KeepTests; v != nil {
		if *v != KeepOff && *v != KeepCommit && *v != KeepFollowUp {
			bad("keep_tests %q: want %s (the default: the hidden tests stay hidden), %s (once a pull request's grade passes and a reviewer "+
				"approves it, a commit of testfirst's adds them to it) or %s (once it is merged, testfirst opens a pull request adding them)",
				*v, KeepOff, KeepCommit, KeepFollowUp)
		}
		c.KeepTests = *v
	}
	if v := f.Regressions.Enabled; v != nil {
		switch *v {
		case "true":
			c.Regressions.Enabled = true
		case "false":
			c.Regressions.Enabled = false
		default:
			bad("regressions.enabled %q: want true (the default: each pull request's grade is followed by a regression run) or false", *v)
		}
	}
	for _, p := range f.Regressions.Paths {
		clean := strings.TrimSuffix(p, "/")
		if clean == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") || path.Clean(clean) != clean || clean == ".." || strings.HasPrefix(clean, "../") {
			bad("regressions.paths %q: want a file or directory of the repository, relative to its root, such as tests/", p)
		}
	}
	if len(f.Regressions.Paths) > 0 {
		c.Regressions.Paths = f.Regressions.Paths
	}
	if s := f.Regressions.Budget; s != nil {
		d, err := time.ParseDuration(*s)
		if err != nil || d < 10*time.Second || d > MaxRunTimeout {
			bad("regressions.budget %q: want a duration from 10s to %s, e.g. 10m", *s, MaxRunTimeout)
		}
		c.Regressions.Budget = d
	}
	if s := f.Approval.FastApproval; s != nil {
		d, err := time.ParseDuration(*s)
		if err != nil || d < 0 || d > 24*time.Hour {
			bad("approval.fast_approval %q: want a duration up to 24h, e.g. 3m", *s)
		}
		c.FastApproval = d
	}
	for _, r := range []struct {
		key string
		v   *string
		to  *string
	}{{"writer", f.Writer, &c.Writer}, {"implementer", f.Implementer, &c.Implementer}} {
		if r.v == nil {
			continue
		}
		name := strings.TrimSpace(*r.v)
		if !harnessName.MatchString(name) {
			bad("%s %q: want none or the name of one of the service's harnesses, e.g. claude-code", r.key, *r.v)
		}
		*r.to = name
	}
	if v := f.Agents.MaxRounds; v != nil {
		if *v < 1 || *v > 10 {
			bad("agents.max_rounds %d: want 1 to 10", *v)
		}
		c.MaxRounds = *v
	}
	if err := errors.Join(errs...); err != nil {
		return DefaultRepoConfig(), err
	}
	return c, nil
}

// harnessName is the shape of a harness's name.
var harnessName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// unknownKeys names every key of the mapping n that the file's shape t
// does not have, with the keys valid at that place, in YAML's words (never
// a Go type's name).
func unknownKeys(n *yaml.Node, t reflect.Type, prefix string) []error {
	if n.Kind != yaml.MappingNode {
		if prefix == "" && n.Kind != yaml.ScalarNode {
			return []error{fmt.Errorf("%s: want a mapping of settings such as label: test-first", RepoConfigPath)}
		}
		return nil
	}
	fields := map[string]reflect.Type{}
	var valid []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		fields[name] = t.Field(i).Type
		valid = append(valid, prefix+name)
	}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		ft, ok := fields[key]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: line %d: unknown key %q; the valid keys here are %s", RepoConfigPath, n.Content[i].Line,
				prefix+key, strings.Join(valid, ", ")))
			continue
		}
		if ft.Kind() == reflect.Struct {
			errs = append(errs, unknownKeys(value, ft, prefix+key+".")...)
		}
	}
	return errs
}
