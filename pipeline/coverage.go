package pipeline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Criterion is one acceptance criterion and the hidden tests mapped to it.
type Criterion struct {
	// ID is AC1, AC2, … in the order the issue lists them, or the writer's
	// key for a criterion the issue does not list.
	ID   string
	Text string
	// Tests are the ids the writer mapped to it; Missing those of them the
	// base check did not find.
	Tests   []string
	Missing []string
}

// Covered reports whether at least one test mapped to the criterion
// exists (any mapped test counts before the base check listed them).
func (c Criterion) Covered() bool { return len(c.Tests) > len(c.Missing) }

var (
	taskItem     = regexp.MustCompile(`^\s{0,12}[-*+]\s+\[[ xX]\]\s+(\S.*)$`)
	numberedItem = regexp.MustCompile(`^\s{0,12}\d{1,3}[.)]\s+(\S.*)$`)
	fence        = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	// ordinalKey reads a writer's criterion key that names a criterion by
	// its number: "3", "AC3", "ac-3", "C3", "#3", "criterion 3".
	ordinalKey = regexp.MustCompile(`(?i)^\s*(?:ac|c|criterion)?\s*[-#]?\s*(\d{1,3})\s*$`)
)

// ParseCriteria reads an issue body's acceptance criteria: its task-list
// items ("- [ ] …") and numbered list items ("1. …"), in order, outside
// fenced code blocks.
func ParseCriteria(body string) []Criterion {
	var out []Criterion
	inFence := ""
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
			continue
		}
		if inFence != "" {
			continue
		}
		m := taskItem.FindStringSubmatch(line)
		if m == nil {
			m = numberedItem.FindStringSubmatch(line)
		}
		if m == nil {
			continue
		}
		text := strings.TrimSpace(m[1])
		out = append(out, Criterion{ID: "AC" + strconv.Itoa(len(out)+1), Text: text})
	}
	return out
}

// normalText compares criterion texts: case, spacing and a final full
// stop aside.
func normalText(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".")
}

// MatchCriterion returns the index of the issue's criterion a writer's key
// names, by number or by its text, or -1.
func MatchCriterion(key string, cs []Criterion) int {
	if m := ordinalKey.FindStringSubmatch(key); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n >= 1 && n <= len(cs) {
			return n - 1
		}
		return -1
	}
	k := normalText(key)
	for i, c := range cs {
		if normalText(c.Text) == k {
			return i
		}
	}
	return -1
}

// CriterionText returns the issue's text of the criterion a writer's key
// names (MatchCriterion) in the issue body, or "" when the issue lists none
// such: the check run and the grade page say what a criterion asks, not
// only "AC3".
func CriterionText(key, body string) string {
	cs := ParseCriteria(body)
	if i := MatchCriterion(key, cs); i >= 0 {
		return cs[i].Text
	}
	return ""
}

// Coverage maps an issue's acceptance criteria to a version's tests. It is
// the one count of coverage: the approval card shows it, and the issue
// comment on an approval says it.
type Coverage struct {
	// Rows are the issue's criteria in order, each with its tests.
	Rows []Criterion
	// Uncovered are the rows no existing test covers.
	Uncovered []Criterion
	// Unlisted are the writer's criteria the issue does not list, by key.
	Unlisted []Criterion
}

// CoverageOf maps the issue's criteria to the writer's tests. known lists
// the hidden test ids the base check found (nil when it has not run):
// tests mapped but not among them are reported missing, and do not cover.
func CoverageOf(issue []Criterion, writer map[string][]string, known []string) Coverage {
	var c Coverage
	c.Rows = make([]Criterion, len(issue))
	for i, ic := range issue {
		c.Rows[i] = Criterion{ID: ic.ID, Text: ic.Text}
	}
	keys := make([]string, 0, len(writer))
	for k := range writer {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	missing := func(tests []string) []string {
		if known == nil {
			return nil
		}
		var out []string
		for _, t := range tests {
			if !slices.Contains(known, t) {
				out = append(out, t)
			}
		}
		return out
	}
	for _, k := range keys {
		if i := MatchCriterion(k, issue); i >= 0 {
			for _, t := range writer[k] {
				if !slices.Contains(c.Rows[i].Tests, t) {
					c.Rows[i].Tests = append(c.Rows[i].Tests, t)
				}
			}
			continue
		}
		c.Unlisted = append(c.Unlisted, Criterion{ID: k, Tests: slices.Clone(writer[k]), Missing: missing(writer[k])})
	}
	for i := range c.Rows {
		c.Rows[i].Missing = missing(c.Rows[i].Tests)
		if !c.Rows[i].Covered() {
			c.Uncovered = append(c.Uncovered, c.Rows[i])
		}
	}
	return c
}

// Counts returns how many criteria existing tests cover, of how many: the
// issue's, or the writer's when the issue lists none.
func (c Coverage) Counts() (covered, total int) {
	rows := c.Rows
	if len(rows) == 0 {
		rows = c.Unlisted
	}
	for _, r := range rows {
		if r.Covered() {
			covered++
		}
	}
	return covered, len(rows)
}

// ByTest returns, for each test id, the criteria that map to it: the
// issue's ids, or the writer's key for criteria the issue does not list.
func (c Coverage) ByTest() map[string][]string {
	out := map[string][]string{}
	for _, cr := range slices.Concat(c.Rows, c.Unlisted) {
		for _, t := range cr.Tests {
			out[t] = append(out[t], cr.ID)
		}
	}
	return out
}

// Covered counts the writer's criteria that at least one existing test
// covers. When tests is nil (the base check has not listed them), a
// criterion that names any test counts.
func Covered(criteria map[string][]string, tests []string) int {
	if len(tests) == 0 {
		tests = nil
	}
	n, _ := CoverageOf(nil, criteria, tests).Counts()
	return n
}
