package pipeline

import (
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/report"
)

func TestCommentsCarryNoTestText(t *testing.T) {
	check := VersionCheck{Tests: []string{"tests/test_a.py::test_one", "tests/test_a.py::test_two"},
		Base:      report.BaseCheck{AllPass: true, GuardTests: []string{"tests/test_a.py::test_one", "tests/test_a.py::test_two"}},
		Reference: &report.ReferenceCheck{Failed: []string{"tests/test_a.py::test_two"}, Counts: report.Counts{Total: 2}}}
	tests := []struct {
		name string
		got  string
		want []string
	}{
		{"ready", ReadyComment("alice", 2, 14, 3, "https://tf.example/tickets/o/r/12/versions/2"),
			[]string{"**v2**", "14 tests", "3 tests already pass", "@alice can review", "https://tf.example/tickets/o/r/12/versions/2", "never shown"}},
		{"ready, no guards", ReadyComment("", 1, 1, 0, "u"), []string{"1 test.", "the requester can review"}},
		{"invalid", InvalidComment(3, check), []string{"**v3**", "all 2 tests already pass", "reference patch fails 1 of 2"}},
		{"approved", ApprovedComment(12, 2, "sha256:ab", 14, 3, 4, "alice"), []string{"**v2**", "`sha256:ab`", "14 tests", "3 of 4 acceptance criteria", "`Fixes #12`"}},
		{"rejected", RejectedComment(2, "writer-bot", "https://tf.example/c"), []string{"**v2** were rejected", "@writer-bot, the writer of v2,", "never posted on GitHub", "https://tf.example/c"}},
		{"opened", OpenedComment("o", "r", 12, 42, "0123456789abcdef", "alice", "https://tf.example/tickets/o/r/12"),
			[]string{"`0123456789ab`", "testfirst tests push --ticket o/r#12 --installation 42 DIR", "https://tf.example/tickets/o/r/12", "@alice is told here", "`Fixes #12`"}},
		{"second signature", SignatureAskedComment("alice", []string{"alice"}, 2, "https://tf.example/c", []string{"Alice", "wes", "ada"}),
			[]string{"signed by `alice`, the requester", "`enforce`: missing, a second signature", "anyone with write access", "https://tf.example/c", "@wes, @ada can sign."}},
		{"second signature, many writers", SignatureAskedComment("alice", []string{"alice"}, 2, "c", []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}),
			[]string{"@a1, @a2, @a3, @a4, @a5 and 2 others with write access can sign."}},
		{"second signature, no other writer", SignatureAskedComment("alice", []string{"alice"}, 2, "c", []string{"alice"}),
			[]string{"No one else has write access", "`.github/testfirst.yml`"}},
		{"the requester's signature", SignatureAskedComment("alice", []string{"wes"}, 2, "https://tf.example/c", []string{"wes"}),
			[]string{"signed by `wes`", "missing, the requester's signature", "@alice, as the requester, please review", "https://tf.example/c"}},
		{"stopped", StoppedComment(3), []string{"3 times", "`lane:pair`"}},
		{"reopened", ReopenedComment(2, 3), []string{"v2 was reopened", "v3 replaces it"}},
		{"a login cannot inject markdown or mention", ReadyComment("a`[x](y)", 1, 1, 0, "u"), []string{"`a[x](y)`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.got, w) {
					t.Errorf("comment %q lacks %q", tt.got, w)
				}
			}
			for _, id := range check.Tests {
				if strings.Contains(tt.got, id) {
					t.Errorf("comment %q names test %q", tt.got, id)
				}
			}
		})
	}
}

func TestVersionCheckProblems(t *testing.T) {
	tests := []struct {
		name  string
		check VersionCheck
		want  []string
	}{
		{"valid", VersionCheck{Tests: []string{"a", "b"}, Base: report.BaseCheck{GuardTests: []string{"a"}}, Reference: &report.ReferenceCheck{AllPass: true}}, nil},
		{"all pass on base", VersionCheck{Tests: []string{"a"}, Base: report.BaseCheck{AllPass: true}}, []string{"all 1 tests already pass on the base commit"}},
		{"no tests", VersionCheck{}, []string{"no hidden test was found"}},
		{"could not run", VersionCheck{Error: "engine down"}, []string{"the base check could not run (the approval card says why)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.check.Problems()
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || tt.check.Valid() != (len(tt.want) == 0) {
				t.Errorf("Problems = %q, Valid = %v; want %q", got, tt.check.Valid(), tt.want)
			}
		})
	}
}

func TestCovered(t *testing.T) {
	criteria := map[string][]string{"c1": {"t::a"}, "c2": {"t::gone"}, "c3": nil}
	if got := Covered(criteria, []string{"t::a", "t::b"}); got != 1 {
		t.Errorf("Covered = %d; want 1 (c2 names a test that does not exist, c3 none)", got)
	}
	if got := Covered(criteria, nil); got != 2 {
		t.Errorf("Covered before the check = %d; want 2", got)
	}
}

func TestPaths(t *testing.T) {
	if got := CardPath("octo-org", "my repo", 12, 3); got != "/tickets/octo-org/my%20repo/12/versions/3" {
		t.Errorf("CardPath = %q", got)
	}
	if got := GradePath(7); got != "/grades/7" {
		t.Errorf("GradePath = %q", got)
	}
}
