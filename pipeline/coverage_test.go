package pipeline

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCriteria(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"none", "Just prose.\n\n- a plain bullet\n", nil},
		{"task list", "- [ ] first\n* [x] second done\n+ [X] third\n", []string{"first", "second done", "third"}},
		{"numbered", "1. one\n2) two\n10. ten\n", []string{"one", "two", "ten"}},
		{"mixed and nested", "1. parent\n   - [ ] child task\n   - plain child\n2. next\r\n", []string{"parent", "child task", "next"}},
		{"fenced code is skipped", "```\n1. code\n```\n~~~python\n- [ ] code\n~~~\n1. real\n", []string{"real"}},
		{"unclosed fence hides the rest", "```\n1. code\n", nil},
		{"empty items", "1. \n- [ ]\n- [ ] x\n", []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for i, c := range ParseCriteria(tt.body) {
				if c.ID != fmt.Sprintf("AC%d", i+1) {
					t.Errorf("criterion %d has id %s", i, c.ID)
				}
				got = append(got, c.Text)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchCriterion(t *testing.T) {
	cs := []Criterion{{ID: "AC1", Text: "Sums are exact"}, {ID: "AC2", Text: "Rounds  half to even."}}
	tests := []struct {
		key  string
		want int
	}{
		{"AC1", 0}, {"ac2", 1}, {"2", 1}, {"#1", 0}, {"C2", 1}, {"AC-2", 1}, {"criterion 1", 0},
		{"AC3", -1}, {"0", -1},
		{"sums are exact", 0}, {"Rounds half to even", 1}, {"rounds half", -1}, {"", -1},
	}
	for _, tt := range tests {
		if got := MatchCriterion(tt.key, cs); got != tt.want {
			t.Errorf("MatchCriterion(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
}

func TestCoverage(t *testing.T) {
	issue := []Criterion{{ID: "AC1", Text: "exact"}, {ID: "AC2", Text: "rounding"}, {ID: "AC3", Text: "empty"}}
	writer := map[string][]string{
		"1":     {"t::a"},
		"AC1":   {"t::a", "t::b"},
		"empty": {"t::c"},
		"extra": {"t::d", "t::zz"},
	}
	c := CoverageOf(issue, writer, []string{"t::a", "t::b", "t::c", "t::d"})
	rows, uncovered, unlisted := c.Rows, c.Uncovered, c.Unlisted
	want := []Criterion{
		{ID: "AC1", Text: "exact", Tests: []string{"t::a", "t::b"}},
		{ID: "AC2", Text: "rounding"},
		{ID: "AC3", Text: "empty", Tests: []string{"t::c"}},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Criterion{{ID: "AC2", Text: "rounding"}}, uncovered); diff != "" {
		t.Errorf("uncovered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Criterion{{ID: "extra", Tests: []string{"t::d", "t::zz"}, Missing: []string{"t::zz"}}}, unlisted); diff != "" {
		t.Errorf("unlisted (-want +got):\n%s", diff)
	}
	// Before the base check nothing is reported missing.
	unlisted = CoverageOf(issue, writer, nil).Unlisted
	if unlisted[0].Missing != nil {
		t.Errorf("missing before the base check: %v", unlisted[0].Missing)
	}
	if diff := cmp.Diff(map[string][]string{"t::a": {"AC1"}, "t::b": {"AC1"}, "t::c": {"AC3"}, "t::d": {"extra"}, "t::zz": {"extra"}}, c.ByTest()); diff != "" {
		t.Errorf("criteriaOf (-want +got):\n%s", diff)
	}
}

// TestCoverageCounts is the count the approval comment says and the card
// shows: the issue's criteria an existing test covers, or the writer's
// when the issue lists none.
func TestCoverageCounts(t *testing.T) {
	issue := []Criterion{{ID: "AC1", Text: "exact"}, {ID: "AC2", Text: "rounding"}, {ID: "AC3", Text: "empty"}}
	tests := []struct {
		name                string
		issue               []Criterion
		writer              map[string][]string
		known               []string
		covered, total, unc int
	}{
		{"all covered", issue, map[string][]string{"1": {"t::a"}, "2": {"t::b"}, "empty": {"t::c"}}, []string{"t::a", "t::b", "t::c"}, 3, 3, 0},
		{"one mapped to a test that does not exist", issue, map[string][]string{"1": {"t::a"}, "2": {"t::gone"}}, []string{"t::a"}, 1, 3, 2},
		{"before the base check any mapped test counts", issue, map[string][]string{"1": {"t::a"}, "2": {"t::gone"}}, nil, 2, 3, 1},
		{"the issue lists none: the writer's", nil, map[string][]string{"c1": {"t::a"}, "c2": {"t::gone"}, "c3": nil}, []string{"t::a"}, 1, 3, 0},
		{"nothing mapped", issue, nil, nil, 0, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CoverageOf(tt.issue, tt.writer, tt.known)
			covered, total := c.Counts()
			if covered != tt.covered || total != tt.total || len(c.Uncovered) != tt.unc {
				t.Errorf("grader.Counts = %d of %d, %d uncovered; want %d of %d, %d", covered, total, len(c.Uncovered), tt.covered, tt.total, tt.unc)
			}
			if len(c.Uncovered) != total-covered && len(tt.issue) > 0 {
				t.Errorf("the card's uncovered list (%d) and the comment's count (%d of %d) disagree", len(c.Uncovered), covered, total)
			}
		})
	}
}
