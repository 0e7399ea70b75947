package agent

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestEgressHosts(t *testing.T) {
	got := egressHosts([]string{"registry.npmjs.org", "*.example.com:8443", "Mirror.Example:80", "bad host"})
	want := []string{"registry.npmjs.org:443", "registry.npmjs.org:80", "*.example.com:8443", "mirror.example:80"}
	if !slices.Equal(got, want) {
		t.Errorf("egressHosts = %q, want %q", got, want)
	}
}

func TestModelEnv(t *testing.T) {
	a := modelEnv(ModelAPI{Name: "anthropic", Header: HeaderAPIKey})
	o := modelEnv(ModelAPI{Name: "openai", Header: HeaderBearer})
	for _, want := range []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:3128/model/anthropic", "ANTHROPIC_API_KEY=" + placeholderKey} {
		if !slices.Contains(a, want) {
			t.Errorf("x-api-key model env %q lacks %q", a, want)
		}
	}
	for _, want := range []string{"OPENAI_BASE_URL=http://127.0.0.1:3128/model/openai/v1", "OPENAI_API_KEY=" + placeholderKey, "TESTFIRST_MODEL_URL=http://127.0.0.1:3128/model/openai"} {
		if !slices.Contains(o, want) {
			t.Errorf("bearer model env %q lacks %q", o, want)
		}
	}
}

func TestTaskFiles(t *testing.T) {
	task := Task{Role: RoleImplementer, Repo: "o/r", Issue: 3, Title: "Fix the parser", Body: "It breaks on tabs.", BaseSHA: "abc", Round: 2, Feedback: "2/5 passed; failing: t.py::a"}
	md := string(taskMarkdown(task))
	for _, want := range []string{"# Fix the parser", "issue #3", "round 2", "It breaks on tabs.", "Change the code in /workspace", "## Feedback from the last round\n\n2/5 passed"} {
		if !strings.Contains(md, want) {
			t.Errorf("TASK.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "/out/tests/") {
		t.Error("an implementer's TASK.md asks for tests")
	}
	task.Role, task.Feedback = RoleWriter, ""
	md = string(taskMarkdown(task))
	if !strings.Contains(md, "/out/criteria.json") || strings.Contains(md, "Feedback") {
		t.Errorf("writer's TASK.md:\n%s", md)
	}
	b, err := taskJSON(task)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"base_sha", "feedback", "issue", "repo", "role", "round"}; !slices.Equal(keys, want) {
		t.Errorf("task.json keys %q, want %q", keys, want)
	}
}
