package grader

import (
	"encoding/json"
	"strings"

	"github.com/testfirst-app/testfirst/grader/wrapper"
	"github.com/testfirst-app/testfirst/sandbox"
)

// twinKind marks the fake sandbox's twin runs: "pr" + twinKind.
const twinKind = "+twin"

// honestTwinResult is what an honest twin run of the run that reported
// res reports: every hidden test twinned, and every twin failed.
func honestTwinResult(res sandbox.Result) sandbox.Result {
	var r wrapper.Result
	if err := json.Unmarshal(res.Stdout, &r); err != nil {
		return res
	}
	r.Twins = &wrapper.TwinMap{}
	sentinels := map[string]bool{}
	for _, s := range r.Sentinels {
		sentinels[s.ClassName+"::"+s.Name] = true
	}
	for _, e := range r.Expected {
		r.Twins.Twins = append(r.Twins.Twins, wrapper.Twin{ID: testID(e.File, e.Class, e.Name), File: e.File, Line: 1, Kind: "literal", Change: "literal: 1 -> 2"})
		class := junitClass(e.File, e.Class)
		r.JUnit = []byte(strings.Replace(string(r.JUnit), passedCase(class, e.Name), failedCase(class, e.Name), 1))
	}
	return stdout(&r)
}
