package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// testRunner matches a shell command that runs a Python test suite:
// pytest, python -m pytest, python -m unittest, tox and nox, as the
// command of a line or of a list (after ;, &&, ||, | or a parenthesis),
// never as an argument ("pip install pytest" installs it).
var testRunner = regexp.MustCompile(`(?m)(^|[;&|(])\s*(pytest|py\.test|python[0-9.]*\s+-m\s+(pytest|unittest)|tox|nox)(\s|$)`)

// ciTestCommands reads a GitHub Actions workflow and returns the run steps
// of its jobs that run the test suite, in the order the file has them
// (jobs by name): the repository's own CI test command. Steps that install
// or lint are left out (the grader image holds what the sample needs and
// has no network); steps with a matrix or an expression in them are
// refused, not guessed at.
func ciTestCommands(workflow []byte) ([]string, error) {
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Uses string `yaml:"uses"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(workflow, &wf); err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	if len(wf.Jobs) == 0 {
		return nil, fmt.Errorf("workflow: no jobs")
	}
	names := make([]string, 0, len(wf.Jobs))
	for n := range wf.Jobs {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		for i, st := range wf.Jobs[n].Steps {
			run := strings.TrimSpace(st.Run)
			if run == "" || !testRunner.MatchString(run) {
				continue
			}
			if strings.Contains(run, "${{") {
				return nil, fmt.Errorf("workflow: job %s step %d (%q) uses an expression: %q", n, i+1, st.Name, run)
			}
			out = append(out, run)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("workflow: no run step runs the tests")
	}
	return out, nil
}

// sampleCI is the sample repository's CI configuration: checkout, Python,
// an install step and the test command.
const sampleCI = `name: CI
on:
  push:
    branches: [master]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install
        run: python3 -m pip install --upgrade pip pytest
      - name: Test
        run: python3 -m pytest -q
`

func TestCITestCommands(t *testing.T) {
	got, err := ciTestCommands([]byte(sampleCI))
	if err != nil || !slices.Equal(got, []string{"python3 -m pytest -q"}) {
		t.Errorf("sample CI: %q, %v", got, err)
	}
	two := "jobs:\n  lint:\n    steps:\n      - run: ruff check .\n  unit:\n    steps:\n      - run: |\n          cd src\n          pytest tests/unit\n" +
		"      - run: python -m unittest discover\n"
	if got, err := ciTestCommands([]byte(two)); err != nil || !slices.Equal(got, []string{"cd src\npytest tests/unit", "python -m unittest discover"}) {
		t.Errorf("two test steps: %q, %v", got, err)
	}
	for name, bad := range map[string]string{
		"no jobs":       "on: push\n",
		"no test step":  "jobs:\n  lint:\n    steps:\n      - run: ruff check .\n      - run: pip install pytest-cov\n",
		"an expression": "jobs:\n  t:\n    steps:\n      - run: python -m pytest ${{ matrix.args }}\n",
		"not YAML":      "jobs: [\n",
	} {
		if got, err := ciTestCommands([]byte(bad)); err == nil {
			t.Errorf("%s: %q, no error", name, got)
		}
	}
}
