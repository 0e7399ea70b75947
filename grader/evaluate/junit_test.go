package evaluate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/testfirst-app/testfirst/report"
)

func TestParseJUnit(t *testing.T) {
	const ok = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">` +
		`<testcase classname="tests.test_a" name="test_pass" time="0.001" />` +
		`<testcase classname="tests.test_a.TestB" name="test_fail[1-2]"><failure message="assert">tb</failure></testcase>` +
		`<testcase classname="tests.test_a" name="test_skip"><skipped type="pytest.skip" message="no" /></testcase>` +
		`<testcase classname="" name="tests.test_c"><error message="collection failure">ImportError</error></testcase>` +
		`<testcase classname="tests.test_a" name="test_teardown"><failure message="f" /><error message="e" /></testcase>` +
		`</testsuite></testsuites>`
	tests := []struct {
		name    string
		in      string
		want    []JUnitCase
		wantErr string
	}{
		{
			name: "pytest report",
			in:   ok,
			want: []JUnitCase{
				{"tests.test_a", "test_pass", report.OutcomePassed},
				{"tests.test_a.TestB", "test_fail[1-2]", report.OutcomeFailed},
				{"tests.test_a", "test_skip", report.OutcomeSkipped},
				{"", "tests.test_c", report.OutcomeError},
				{"tests.test_a", "test_teardown", report.OutcomeError},
			},
		},
		{name: "bare testsuite root", in: `<testsuite><testcase classname="a" name="t"/></testsuite>`, want: []JUnitCase{{"a", "t", report.OutcomePassed}}},
		{name: "empty", in: "  \n", wantErr: "no JUnit report"},
		{name: "truncated", in: ok[:len(ok)-40], wantErr: "truncated"},
		{name: "second root appended", in: ok + `<testsuites><testsuite><testcase classname="a" name="t"/></testsuite></testsuites>`, wantErr: "more than one root"},
		{name: "text after root", in: ok + "garbage", wantErr: "outside its root"},
		{name: "wrong root", in: `<html><testcase classname="a" name="t"/></html>`, wantErr: "root <html>"},
		{name: "not xml", in: `{"tests": []}`, wantErr: "outside its root"},
		{name: "nested testcase", in: `<testsuite><testcase name="a"><testcase name="b"/></testcase></testsuite>`, wantErr: "nests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseJUnit([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseJUnit error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseJUnit (-want +got):\n%s", diff)
			}
		})
	}
}
