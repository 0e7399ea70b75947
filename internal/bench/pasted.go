package bench

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/testfirst-app/testfirst/pasted"
)

// PastedConfig is what testfirst bench pasted measures: real fix commits
// of git repositories, each commit's changed test files taken as the
// hidden tests and its parent as the base.
type PastedConfig struct {
	// Repos are git directories (a bare mirror will do).
	Repos []string
	// PerRepo is how many fix commits of each repository are used.
	PerRepo int
	// Extra are files of honest text (issue threads) tried against every
	// commit's hidden tests as negatives.
	Extra []string
	// Black is the path of the black formatter, "" to leave its variants
	// out.
	Black string
	// Options are the normalisations compared, by name.
	Options []NamedOptions
	// Verbose lists every miss and false match.
	Verbose bool
	Out     io.Writer
}

// NamedOptions is one set of options measured.
type NamedOptions struct {
	Name string
	pasted.Options
}

// PastedVariants are the positive cases made of each new hidden test.
var PastedVariants = []string{"fenced", "inline", "renamed", "black", "compact", "renamed+black+quoted", "half", "half+renamed", "file"}

// PastedNegatives are the kinds of honest text tried.
var PastedNegatives = []string{"base-version-of-edited-file", "base-other-tests", "base-docs", "later-docs", "later-other-tests", "issue-threads", "later-verbatim-copy"}

type pastedCommit struct {
	repo, sha string
	base      [][]byte
	hidden    []pasted.Hidden
	positives []pastedCase
	negatives []pastedCase
}

type pastedCase struct {
	kind, name, text string
	// group is "" for a new test, "small" for one of fewer than
	// smallLines lines of code, "edited" for one with fewer than
	// newLines lines of code that are on no line of the base.
	group string
}

// smallLines: a test with fewer lines of code than this is counted apart.
const smallLines = 4

// halfLines: half of a test with fewer lines of code than this is
// counted apart ("short").
const halfLines = 6

// BenchPasted builds the cases and prints recall and false matches per
// set of options.
func BenchPasted(ctx context.Context, cfg PastedConfig) error {
	var commits []*pastedCommit
	var extra []pastedCase
	for _, f := range cfg.Extra {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		extra = append(extra, pastedCase{kind: "issue-threads", name: path.Base(f), text: string(b)})
	}
	for _, r := range cfg.Repos {
		cs, err := pastedCommits(ctx, r, cfg.PerRepo, cfg.Black)
		if err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
		for _, c := range cs {
			c.negatives = append(c.negatives, extra...)
		}
		commits = append(commits, cs...)
	}
	fmt.Fprintf(cfg.Out, "%d fix commits of %d repositories\n", len(commits), len(cfg.Repos))
	for _, c := range commits {
		fmt.Fprintf(cfg.Out, "  %s %s: %d hidden files, %d positive cases, %d negative texts\n", path.Base(path.Dir(c.repo))+"/"+path.Base(c.repo), c.sha[:10], len(c.hidden), len(c.positives), len(c.negatives))
	}
	for _, no := range cfg.Options {
		hit, total := map[string]int{}, map[string]int{}
		fp, neg := map[string]int{}, map[string]int{}
		for _, c := range commits {
			base := pasted.NewBase(c.base, no.Options)
			ix := pasted.NewIndex(c.hidden, base, no.Options)
			for _, p := range c.positives {
				kind := p.kind
				if p.group != "" {
					kind = p.group + ":" + kind
				}
				total[kind]++
				if len(ix.Find(p.text)) > 0 {
					hit[kind]++
				} else if cfg.Verbose {
					// What the miss fell short by, and how much of the
					// pasted text the base does not already hold.
					novel, all := base.Novel(p.text, no.Options)
					near := "no new shingle of any test"
					if m, need, ok := ix.Nearest(p.text); ok {
						near = fmt.Sprintf("nearest %s: %d of %d needed", m.Test, m.Matched, need)
					}
					fmt.Fprintf(cfg.Out, "  miss %s %s %s %s (%s; %d of its %d shingles not in the base)\n", no.Name, c.sha[:10], kind, p.name, near, novel, all)
				}
			}
			for _, n := range c.negatives {
				neg[n.kind]++
				if ms := ix.Find(n.text); len(ms) > 0 {
					fp[n.kind]++
					if cfg.Verbose {
						fmt.Fprintf(cfg.Out, "  false match %s %s %s %s: %v\n", no.Name, c.sha[:10], n.kind, n.name, ms)
					}
				}
			}
		}
		fmt.Fprintf(cfg.Out, "\noptions %s (%+v)\n", no.Name, no.Options)
		var th, tt int
		for _, small := range []string{"", "short:", "small:", "edited:"} {
			for _, v := range PastedVariants {
				k := small + v
				if total[k] == 0 {
					continue
				}
				if small == "" {
					th, tt = th+hit[k], tt+total[k]
				}
				fmt.Fprintf(cfg.Out, "  recall %-28s %4d/%-4d %5.1f%%\n", k, hit[k], total[k], 100*float64(hit[k])/float64(total[k]))
			}
		}
		fmt.Fprintf(cfg.Out, "  recall %-28s %4d/%-4d %5.1f%%\n", "all new tests of 4+ lines", th, tt, 100*float64(th)/float64(max(tt, 1)))
		var tf, tn int
		for _, k := range PastedNegatives {
			if neg[k] == 0 {
				continue
			}
			if k != "later-verbatim-copy" {
				tf, tn = tf+fp[k], tn+neg[k]
			}
			fmt.Fprintf(cfg.Out, "  false matches %-28s %4d/%-4d\n", k, fp[k], neg[k])
		}
		fmt.Fprintf(cfg.Out, "  false matches %-28s %4d/%-4d\n", "all honest text", tf, tn)
	}
	return nil
}

var testPath = regexp.MustCompile(`(^|/)(tests?|testing)/.*\.py$|(^|/)test_[^/]*\.py$|_test\.py$`)

// pastedCommits picks up to n fix commits of repo (a non-test Python file
// and a test file changed, at least 6 test lines added), spread over its
// history, and builds their cases.
func pastedCommits(ctx context.Context, repo string, n int, black string) ([]*pastedCommit, error) {
	log, err := git(ctx, repo, "log", "--no-merges", "--format=%x00%H", "--numstat", "-n", "1500", "HEAD")
	if err != nil {
		return nil, err
	}
	var candidates []string
	for _, rec := range strings.Split(string(log), "\x00")[1:] {
		lines := strings.Split(strings.TrimSpace(rec), "\n")
		src, added := false, 0
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			if len(f) != 3 || !strings.HasSuffix(f[2], ".py") {
				continue
			}
			if testPath.MatchString(f[2]) {
				var a int
				fmt.Sscan(f[0], &a)
				added += a
			} else {
				src = true
			}
		}
		if src && added >= 6 && added <= 400 {
			candidates = append(candidates, lines[0])
		}
	}
	var out []*pastedCommit
	for i := 0; i < n && i < len(candidates); i++ {
		sha := candidates[i*len(candidates)/min(n, len(candidates))]
		if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", sha+"^"); err != nil {
			continue // a root commit, or a shallow copy's oldest: no base
		}
		c, err := pastedCommitOf(ctx, repo, sha, black)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", sha, err)
		}
		if len(c.positives) > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

func pastedCommitOf(ctx context.Context, repo, sha, black string) (*pastedCommit, error) {
	base, err := treeFiles(ctx, repo, sha+"^")
	if err != nil {
		return nil, err
	}
	head, err := treeFiles(ctx, repo, "HEAD")
	if err != nil {
		return nil, err
	}
	names, err := git(ctx, repo, "diff", "--name-only", "--diff-filter=AM", sha+"^", sha)
	if err != nil {
		return nil, err
	}
	c := &pastedCommit{repo: repo, sha: sha}
	var basePaths []string
	for p, b := range base {
		c.base = append(c.base, b)
		basePaths = append(basePaths, p)
	}
	sort.Strings(basePaths)
	hiddenPaths := map[string]bool{}
	for _, p := range strings.Fields(string(names)) {
		if !testPath.MatchString(p) {
			continue
		}
		src, err := git(ctx, repo, "show", sha+":"+p)
		if err != nil {
			return nil, err
		}
		hiddenPaths[p] = true
		c.hidden = append(c.hidden, pasted.Hidden{Label: "v1", Path: p, Source: string(src)})
		old := map[string]string{}
		if b, ok := base[p]; ok {
			for _, t := range pasted.Tests(string(b)) {
				old[t.Name] = t.Source
			}
			c.negatives = append(c.negatives, pastedCase{kind: "base-version-of-edited-file", name: p, text: string(b)})
		}
		fileGroup := "edited"
		var pending []pendingTest
		for _, t := range pasted.Tests(string(src)) {
			if t.Name == pasted.ModuleLevel || old[t.Name] == t.Source {
				continue
			}
			// A new test is one whose name the base's file does not
			// have; a changed one is an edited test, counted apart:
			// pasting it pastes mostly what the repository shows.
			group := ""
			_, existed := old[t.Name]
			switch {
			case existed:
				group = "edited"
			case codeLines(t.Source, nil) < smallLines:
				group = "small"
			}
			if group == "" {
				fileGroup = ""
			}
			pending = append(pending, pendingTest{p + "::" + t.Name, dedent(t.Source), group})
		}
		var formatted map[string]string
		if black != "" {
			var srcs []string
			for _, pt := range pending {
				srcs = append(srcs, pt.src, rename(pt.src))
			}
			if formatted, err = runBlack(ctx, black, srcs); err != nil {
				return nil, err
			}
		}
		for _, pt := range pending {
			c.positives = append(c.positives, variants(pt.name, pt.src, formatted, pt.group)...)
		}
		// The whole file counts among the new tests when it has one.
		c.positives = append(c.positives, pastedCase{kind: "file", name: p, group: fileGroup, text: "The whole file:\n\n```python\n" + string(src) + "\n```\n"})
	}
	others, docs := 0, 0
	for _, p := range basePaths {
		switch {
		case testPath.MatchString(p) && !hiddenPaths[p] && others < 3:
			others++
			c.negatives = append(c.negatives, pastedCase{kind: "base-other-tests", name: p, text: string(base[p])})
		case isDoc(p) && docs < 4:
			docs++
			c.negatives = append(c.negatives, pastedCase{kind: "base-docs", name: p, text: string(base[p])})
		}
	}
	var headPaths []string
	for p := range head {
		headPaths = append(headPaths, p)
	}
	sort.Strings(headPaths)
	others, docs = 0, 0
	for _, p := range headPaths {
		if string(base[p]) == string(head[p]) || hiddenPaths[p] {
			continue
		}
		kind := ""
		switch {
		case testPath.MatchString(p) && others < 3:
			others++
			kind = "later-other-tests"
		case isDoc(p) && docs < 4:
			docs++
			kind = "later-docs"
		default:
			continue
		}
		if sharesLines(string(head[p]), c.hidden, 3) {
			// The hidden test moved there later, or the docs quote it:
			// a copy, not honest text of its own.
			kind = "later-verbatim-copy"
		}
		c.negatives = append(c.negatives, pastedCase{kind: kind, name: p, text: string(head[p])})
	}
	return c, nil
}

// sharesLines says whether text holds n consecutive lines of a hidden
// file (compared stripped, each of 12 characters or more) verbatim.
func sharesLines(text string, hidden []pasted.Hidden, n int) bool {
	key := func(ls []string) string { return strings.Join(ls, "\n") }
	runs := map[string]bool{}
	for _, h := range hidden {
		ls := strippedLines(h.Source)
		for i := 0; i+n <= len(ls); i++ {
			runs[key(ls[i:i+n])] = true
		}
	}
	ls := strippedLines(text)
	for i := 0; i+n <= len(ls); i++ {
		if runs[key(ls[i:i+n])] {
			return true
		}
	}
	return false
}

func strippedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); len(t) >= 12 {
			out = append(out, t)
		}
	}
	return out
}

func isDoc(p string) bool {
	b := strings.ToLower(path.Base(p))
	return strings.HasSuffix(b, ".md") || strings.HasSuffix(b, ".rst") || strings.HasPrefix(b, "readme") || strings.HasPrefix(b, "changelog") || strings.HasPrefix(b, "changes")
}

// variants are the pasted forms of one test.
func variants(name, src string, formatted map[string]string, group string) []pastedCase {
	mk := func(kind, text string) pastedCase {
		return pastedCase{kind: kind, name: name, text: text, group: group}
	}
	fence := func(s string) string {
		return "I think this test shows the problem:\n\n```python\n" + s + "\n```\n\nCould you have a look?"
	}
	renamed := rename(src)
	out := []pastedCase{
		mk("fenced", fence(src)),
		mk("inline", "Something like "+src+" should work, right?"),
		mk("renamed", fence(renamed)),
		mk("compact", fence(compact(src))),
	}
	if formatted != nil {
		if b, ok := formatted[src]; ok {
			out = append(out, mk("black", fence(b)))
		}
		if b, ok := formatted[renamed]; ok {
			quoted := "> " + strings.ReplaceAll(strings.TrimRight(b, "\n"), "\n", "\n> ")
			out = append(out, mk("renamed+black+quoted", "Quoting the earlier comment:\n\n"+quoted+"\n\nI agree."))
		}
	}
	// Half a test: its second half of lines. Half of a test of fewer
	// than halfLines lines of code is a line or two, counted apart.
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	if len(lines) >= 2 {
		h := mk("half", fence(dedent(strings.Join(lines[len(lines)/2:], "\n"))))
		rl := strings.Split(strings.TrimRight(renamed, "\n"), "\n")
		hr := mk("half+renamed", fence(dedent(strings.Join(rl[len(rl)/2:], "\n"))))
		if group == "" && codeLines(src, nil) < halfLines {
			h.group, hr.group = "short", "short"
		}
		out = append(out, h, hr)
	}
	return out
}

// codeLines counts the lines of code of src (not its def line, a
// decorator or a comment) that are not in except.
func codeLines(src string, except map[string]bool) int {
	n := 0
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "@") && !strings.HasPrefix(t, "def ") && !except[t] {
			n++
		}
	}
	return n
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		} else {
			lines[i] = strings.TrimLeft(l, " \t")
		}
	}
	return strings.Join(lines, "\n")
}

var (
	boundName = regexp.MustCompile(`(?m)(?:^\s*(?:async\s+)?def\s+(\w+)|^\s*(\w+)\s*(?:,\s*\w+\s*)*=[^=]|\bfor\s+(\w+)|\bas\s+(\w+)|^\s*(\w+)\s*:\s*\w+\s*=)`)
	defParams = regexp.MustCompile(`(?m)^\s*(?:async\s+)?def\s+\w+\s*\(([^)]*)\)`)
	word      = regexp.MustCompile(`\b[A-Za-z_]\w*\b`)
)

// rename gives every name the test binds (itself, its parameters, its
// variables, loop and with targets) another name, outside strings and
// attributes, as a person tidying a pasted test might.
func rename(src string) string {
	names := map[string]bool{}
	for _, m := range boundName.FindAllStringSubmatch(src, -1) {
		for _, g := range m[1:] {
			if g != "" {
				names[g] = true
			}
		}
	}
	for _, m := range defParams.FindAllStringSubmatch(src, -1) {
		for _, p := range strings.Split(m[1], ",") {
			p = strings.TrimLeft(strings.TrimSpace(strings.SplitN(strings.SplitN(p, "=", 2)[0], ":", 2)[0]), "*")
			if p != "" {
				names[p] = true
			}
		}
	}
	delete(names, "self")
	delete(names, "cls")
	next := 0
	to := map[string]string{}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		next++
		to[n] = fmt.Sprintf("my_thing%d", next)
	}
	var out strings.Builder
	for _, line := range strings.Split(src, "\n") {
		locs := word.FindAllStringIndex(line, -1)
		last := 0
		for _, l := range locs {
			w := line[l[0]:l[1]]
			r, ok := to[w]
			inString := (strings.Count(line[:l[0]], "'")%2 == 1) || (strings.Count(line[:l[0]], `"`)%2 == 1)
			if !ok || inString || (l[0] > 0 && line[l[0]-1] == '.') {
				continue
			}
			out.WriteString(line[last:l[0]])
			out.WriteString(r)
			last = l[1]
		}
		out.WriteString(line[last:])
		out.WriteString("\n")
	}
	return out.String()
}

var spaceAround = regexp.MustCompile(`\s*([-+*/%=<>!,:()\[\]{}])\s*`)

// compact writes a test the other way from black: comments and blank
// lines out, no spaces around operators, brackets' continuation lines
// joined.
func compact(src string) string {
	var out []string
	depth := 0
	for _, l := range strings.Split(src, "\n") {
		t := strings.TrimRight(l, " \t")
		if i := strings.Index(t, "  #"); i >= 0 {
			t = t[:i]
		}
		if strings.TrimSpace(t) == "" || strings.HasPrefix(strings.TrimSpace(t), "#") {
			continue
		}
		ind := t[:len(t)-len(strings.TrimLeft(t, " \t"))]
		body := strings.TrimSpace(t)
		if !strings.ContainsAny(body, `'"`) {
			body = spaceAround.ReplaceAllString(body, "$1")
		}
		if depth > 0 && len(out) > 0 {
			out[len(out)-1] += body
		} else {
			out = append(out, ind+body)
		}
		depth += strings.Count(body, "(") + strings.Count(body, "[") + strings.Count(body, "{") -
			strings.Count(body, ")") - strings.Count(body, "]") - strings.Count(body, "}")
		if depth < 0 {
			depth = 0
		}
	}
	return strings.Join(out, "\n")
}

// runBlack formats sources with black in one run (black takes files in
// parallel), 60 columns wide so that calls and literals are exploded. It
// returns each source that black could format, by its text.
func runBlack(ctx context.Context, black string, srcs []string) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "pasted-black-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for i, s := range srcs {
		if err := os.WriteFile(fmt.Sprintf("%s/%d.py", dir, i), []byte(s), 0o600); err != nil {
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, black, "-l", "60", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // 123: some source could not be parsed; said on stderr
	failed := map[string]bool{}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "error: cannot format ") {
			f := strings.TrimPrefix(l, "error: cannot format ")
			failed[f[:strings.Index(f, ".py")+3]] = true
		}
	}
	out := map[string]string{}
	for i, s := range srcs {
		name := fmt.Sprintf("%s/%d.py", dir, i)
		if failed[name] {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out[s] = string(b)
	}
	return out, nil
}

// pendingTest is a new or changed test whose pasted variants are made
// once its black formatting is known.
type pendingTest struct {
	name, src, group string
}

func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// treeFiles reads a commit's text files of at most 512 KiB.
func treeFiles(ctx context.Context, repo, rev string) (map[string][]byte, error) {
	data, err := git(ctx, repo, "archive", "--format=tar", rev)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || h.Size > 512<<10 {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(b, []byte{0}) {
			out[h.Name] = b
		}
	}
}
