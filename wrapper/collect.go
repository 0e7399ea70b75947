package wrapper

import (
	"slices"
	"strings"
	"time"
)

// collectLimit bounds what a collection run may print.
const collectLimit = 16 << 20

// collectTests runs pytest --collect-only on the hidden tests against the
// tree in RepoDir, as the test identity with the runner's own flags (the
// hidden set's conftest files, the tree on sys.path the same way), and
// reports the node ids it printed. Nothing is run: the only code of the
// tree that executes is what the hidden modules import.
func collectTests(rp *reaper, id identity, job Job, deadline time.Time, res *Result) error {
	argv := PytestCommand()
	// The evidence plugin writes to descriptors only a test run has.
	if i := slices.Index(argv, EvidenceModule); i > 0 && argv[i-1] == "-p" {
		argv = slices.Delete(argv, i-1, i+1)
	}
	argv = slices.Insert(argv, len(argv)-1, "--collect-only", "-q")
	env := append(baseEnv(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
	if job.SourceDir != "" {
		dir, err := sourceDir(job.SourceDir)
		if err != nil {
			return err
		}
		env = append(env, SourceDirEnv+"="+dir)
	}
	res.Runner = argv
	out := newBoundedScanner(collectLimit, job.Canaries)
	p, err := start(rp, id, argv, env, RepoDir, out, nil, nil, &res.Isolation)
	if err != nil {
		return err
	}
	st := p.finish(time.Until(deadline))
	res.TimedOut = st.timedOut
	res.ExitCode = st.ws.ExitStatus()
	res.Signal = signalName(st.ws)
	res.CanariesSeen = out.Seen()
	res.Collected, res.CollectErrors = parseCollected(string(out.kept))
	return st.err
}

// parseCollected reads the node ids pytest --collect-only -q prints, one a
// line, and counts the "ERROR <file>" lines of modules it could not
// collect.
func parseCollected(out string) ([]string, int) {
	var ids []string
	errs := 0
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "ERROR "):
			errs++
		case strings.Contains(line, "::") && !strings.ContainsAny(line[:1], " \t=_!") && !strings.Contains(line, " - "):
			ids = append(ids, line)
		}
	}
	return ids, errs
}

// CollectedTests turns the node ids of a collection run into hidden tests,
// keeping only what the listing (expected) does not know already: the
// cases of a test it lists with CasesUnknown, and tests it does not list.
// Ids that are not below a hidden test file are dropped.
func CollectedTests(expected []ExpectedTest, ids []string) []ExpectedTest {
	known := map[string]ExpectedTest{}
	for _, e := range expected {
		known[e.id()] = e
	}
	var out []ExpectedTest
	index := map[string]int{}
	for _, id := range ids {
		e, ok := parseNodeID(id)
		if !ok {
			continue
		}
		base := e.id()
		k, listed := known[base]
		if listed && !k.CasesUnknown {
			continue
		}
		i, seen := index[base]
		if !seen {
			i = len(out)
			index[base] = i
			out = append(out, ExpectedTest{File: e.File, Class: e.Class, Name: e.Name})
		}
		if len(e.Cases) > 0 {
			out[i].Cases = append(out[i].Cases, e.Cases[0])
		}
	}
	return out
}

// parseNodeID splits "dir/test_x.py::TestA::TestB::test_y[1-2]" into a
// hidden test with one case.
func parseNodeID(id string) (ExpectedTest, bool) {
	file, rest, ok := strings.Cut(id, "::")
	if !ok || !strings.HasSuffix(file, ".py") || strings.HasPrefix(file, "/") || strings.HasPrefix(file, "../") {
		return ExpectedTest{}, false
	}
	var cases []string
	if i := strings.IndexByte(rest, '['); i >= 0 && strings.HasSuffix(rest, "]") {
		cases = []string{rest[i+1 : len(rest)-1]}
		rest = rest[:i]
	}
	parts := strings.Split(rest, "::")
	e := ExpectedTest{File: file, Name: parts[len(parts)-1], Cases: cases}
	e.Class = strings.Join(parts[:len(parts)-1], ".")
	if e.Name == "" {
		return ExpectedTest{}, false
	}
	return e, true
}

// mergeCollected adds what a trusted collection found to the listing: the
// cases of tests the listing could not know (when withCases is set), and
// tests it does not list.
func mergeCollected(expected, collected []ExpectedTest, withCases bool) []ExpectedTest {
	if len(collected) == 0 {
		return expected
	}
	byID := map[string]int{}
	for i, e := range expected {
		byID[e.id()] = i
	}
	for _, c := range collected {
		if i, ok := byID[c.id()]; ok {
			if withCases && expected[i].CasesUnknown && len(c.Cases) > 0 {
				expected[i].Cases, expected[i].CasesUnknown = slices.Clone(c.Cases), false
			}
			continue
		}
		byID[c.id()] = len(expected)
		e := ExpectedTest{File: c.File, Class: c.Class, Name: c.Name}
		if withCases {
			e.Cases = slices.Clone(c.Cases)
		} else if len(c.Cases) > 0 {
			e.CasesUnknown = true
		}
		expected = append(expected, e)
	}
	return expected
}
