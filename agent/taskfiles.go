package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// taskMarkdown is /task/TASK.md: the issue and what the role delivers.
func taskMarkdown(t Task) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", strings.TrimSpace(t.Title))
	fmt.Fprintf(&b, "Repository %s, issue #%d, base commit %s, round %d. You are the **%s**.\n\n", t.Repo, t.Issue, t.BaseSHA, t.Round, t.Role)
	b.WriteString("## The issue\n\n")
	b.WriteString(strings.TrimSpace(t.Body))
	b.WriteString("\n\n")
	switch t.Role {
	case RoleWriter:
		b.WriteString(`## What to deliver

Write hidden acceptance tests for this issue. /workspace holds the base: the
tests must fail there and pass once the issue is done. Only /out counts;
changes to /workspace are thrown away.

- /out/tests/: the test files (pytest), at the paths they would have in the
  repository, e.g. /out/tests/tests/test_feature.py for tests/test_feature.py.
- /out/criteria.json: {"criterion": ["test id", ...]}, each acceptance
  criterion of the issue with the tests that check it, test ids as pytest
  names them ("tests/test_feature.py::test_name").
- /out/reference.patch (optional): a unified diff against the base that makes
  every test pass. It is kept from the implementer.
- /out/RESULT.md: what you wrote and why, for the requester who reviews it.
`)
	case RoleImplementer:
		b.WriteString(`## What to deliver

Change the code in /workspace so that the issue is done: hidden tests you
cannot see will grade it. testfirst takes the difference of /workspace
against the base (.git is ignored): commits are not needed.

- /out/RESULT.md: what you changed and why.
`)
	}
	if f := strings.TrimSpace(t.Feedback); f != "" {
		b.WriteString("\n## Feedback from the last round\n\n" + f + "\n")
	}
	b.WriteString(`
## The sandbox

No credential of any kind. The network is reached only through the proxy
named by HTTP_PROXY and HTTPS_PROXY; GitHub is not reachable. The model API
is at $TESTFIRST_MODEL_URL. HOME is /tmp; /agent is read-only.
`)
	return []byte(b.String())
}

// taskJSON is /task/task.json.
func taskJSON(t Task) ([]byte, error) {
	return json.MarshalIndent(t, "", "  ")
}
