package app

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/testfirst-app/testfirst/handlers"
)

// cardCriterion is one acceptance criterion of an issue.
type cardCriterion struct {
	ID   string // AC1, AC2, … in the order the issue lists them
	Text string
}

var (
	taskItem     = regexp.MustCompile(`^\s{0,12}[-*+]\s+\[[ xX]\]\s+(\S.*)$`)
	numberedItem = regexp.MustCompile(`^\s{0,12}\d{1,3}[.)]\s+(\S.*)$`)
	fence        = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	// ordinalKey reads a writer's criterion key that names a criterion by
	// its number: "3", "AC3", "ac-3", "C3", "#3", "criterion 3".
	ordinalKey = regexp.MustCompile(`(?i)^\s*(?:ac|c|criterion)?\s*[-#]?\s*(\d{1,3})\s*$`)
)

// parseCriteria reads an issue body's acceptance criteria: its task-list
// items ("- [ ] …") and numbered list items ("1. …"), in order, outside
// fenced code blocks.
func parseCriteria(body string) []cardCriterion {
	var out []cardCriterion
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
		out = append(out, cardCriterion{ID: "AC" + strconv.Itoa(len(out)+1), Text: text})
	}
	return out
}

// normalText compares criterion texts: case, spacing and a final full
// stop aside.
func normalText(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), ".")
}

// matchCriterion returns the index of the issue's criterion a writer's key
// names, by number or by its text, or -1.
func matchCriterion(key string, cs []cardCriterion) int {
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

// coverage maps the issue's criteria to the writer's tests. known lists
// the hidden test ids the base check found (nil when it has not run):
// tests mapped but not among them are reported missing. It returns the
// issue's criteria in order, the uncovered ones, and the writer's
// criteria the issue does not list, by key.
func coverage(issue []cardCriterion, writer map[string][]string, known []string) (rows, uncovered, unlisted []handlers.Criterion) {
	rows = make([]handlers.Criterion, len(issue))
	for i, c := range issue {
		rows[i] = handlers.Criterion{ID: c.ID, Text: c.Text}
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
		if i := matchCriterion(k, issue); i >= 0 {
			for _, t := range writer[k] {
				if !slices.Contains(rows[i].Tests, t) {
					rows[i].Tests = append(rows[i].Tests, t)
				}
			}
			continue
		}
		unlisted = append(unlisted, handlers.Criterion{ID: k, Tests: slices.Clone(writer[k]), Missing: missing(writer[k])})
	}
	for i := range rows {
		rows[i].Missing = missing(rows[i].Tests)
		if len(rows[i].Tests) == 0 {
			uncovered = append(uncovered, rows[i])
		}
	}
	return rows, uncovered, unlisted
}

// criteriaOf returns, for each test id, the criteria that map to it: the
// issue's ids, or the writer's key for criteria the issue does not list.
func criteriaOf(rows, unlisted []handlers.Criterion) map[string][]string {
	out := map[string][]string{}
	for _, c := range slices.Concat(rows, unlisted) {
		for _, t := range c.Tests {
			out[t] = append(out[t], c.ID)
		}
	}
	return out
}
