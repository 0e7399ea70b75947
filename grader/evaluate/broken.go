package evaluate

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/testfirst-app/testfirst/grader/detect"
	"github.com/testfirst-app/testfirst/tree"
	"github.com/testfirst-app/testfirst/wrapper"
)

// A broken hidden test is the task's fault: it cannot run on the base nor
// on any tree under test, whatever the pull request does. BrokenHidden
// finds them by what every run said of them (the base, the tree under
// test, the reference): the same import error of the same hidden module,
// or the same fixture missing for the same test.
//
// Only causes no tree can repair count: a module that neither tree nor the
// hidden set provides (a helper the hidden set lacks), a relative import
// with no package around it, a syntax error in the hidden file, and a
// fixture that does not exist (the tree's conftest files are never
// loaded). An import of a name the tree lacks ("cannot import name
// 'new_function' from 'calc'") is what a pull request must add, and stays
// its failure.
//
// The runner's words reach no one: the reasons are built from names
// matched as identifiers, so no text of a hidden test can leak through
// them; and the base run's words are the ones read, which the pull request
// cannot write.

// noModuleMessage is Python's word for an import that found nothing; its
// group is the module's dotted name, matched as identifiers.
const noModuleMessage = `(?:ModuleNotFoundError|ImportError): No module named '([A-Za-z_][A-Za-z0-9_.]{0,120})'`

var (
	// noModuleRe is the message as the exception pytest reports on a
	// line of its own ("E   ModuleNotFoundError: ..."): what a hidden
	// module's import failed of, not any text that mentions it.
	noModuleRe = regexp.MustCompile(`(?m)^E\s+` + noModuleMessage + `\s*$`)
	// anyNoModuleRe is the message wherever a run says it (MissingModules).
	anyNoModuleRe = regexp.MustCompile(noModuleMessage)

	relativeRe    = regexp.MustCompile(`(?m)^E\s+ImportError: attempted relative import with no known parent package\s*$`)
	syntaxRe      = regexp.MustCompile(`(?m)^E\s+(SyntaxError|IndentationError|TabError): `)
	unixLineBreak = strings.NewReplacer("\r\n", "\n", "\r", "\n")
)

// MissingModules lists the modules a run's output says could not be
// imported, each once, in the order first said: wherever the output says
// it (an exception pytest reports, its short summary, a subprocess's
// stderr), since a long output keeps only its head and tail. A grade uses
// it to tell a failure for want of a package its environment could not
// install from the code's own.
func MissingModules(output string) []string {
	var out []string
	for _, m := range anyNoModuleRe.FindAllStringSubmatch(output, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// importCause is why a hidden module failed to import, when no tree can
// repair it: a kind and the module's name (for "module"); ok false
// otherwise.
func importCause(detail string, trees []*tree.Tree, hidden *tree.Tree) (kind, name string, ok bool) {
	detail = unixLineBreak.Replace(detail)
	if m := noModuleRe.FindAllStringSubmatch(detail, -1); len(m) > 0 {
		name = m[len(m)-1][1]
		top, _, _ := strings.Cut(name, ".")
		if slices.ContainsFunc(trees, func(t *tree.Tree) bool { return providesModule(t, top) }) || providesModule(hidden, top) {
			return "", "", false
		}
		return "module", name, true
	}
	if relativeRe.MatchString(detail) {
		return "relative", "", true
	}
	if m := syntaxRe.FindStringSubmatch(detail); m != nil {
		return "syntax", m[1], true
	}
	return "", "", false
}

// providesModule reports whether t has a top-level module or package top
// where the tree under test is imported from (its root, or src/).
func providesModule(t *tree.Tree, top string) bool {
	if t == nil {
		return false
	}
	for _, f := range t.Files {
		p := strings.TrimPrefix(f.Path, "src/")
		first, rest, nested := strings.Cut(p, "/")
		if nested && first == top && rest != "" {
			return true
		}
		if !nested && slices.ContainsFunc(detect.ImportableSuffixes, func(s string) bool { return p == top+s }) {
			return true
		}
	}
	return false
}

// elsewhere names a file of t that would provide module top if it were
// importable: where a helper of the hidden tests lives in the repository.
func elsewhere(t *tree.Tree, top string) string {
	if t == nil {
		return ""
	}
	for _, f := range t.Files {
		if path.Base(f.Path) == top+".py" || path.Base(path.Dir(f.Path)) == top && path.Base(f.Path) == "__init__.py" {
			return f.Path
		}
	}
	return ""
}

// BrokenHidden lists, one reason each, the hidden modules that fail to
// import and the fixtures missing in every run of evs (the base's first),
// trees holding the trees those runs tested.
func BrokenHidden(evs []*Evaluation, trees []*tree.Tree, hidden *tree.Tree) []string {
	if len(evs) < 2 || slices.Contains(evs, nil) {
		return nil
	}
	base := evs[0]
	var out []string
	files := make([]string, 0, len(base.importErrors))
	for f := range base.importErrors {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, file := range files {
		kind, name, ok := importCause(base.importErrors[file], trees, hidden)
		if !ok {
			continue
		}
		same := true
		for _, ev := range evs[1:] {
			k, n, ok := importCause(ev.importErrors[file], trees, hidden)
			same = same && ok && k == kind && n == name
		}
		if !same {
			continue
		}
		switch kind {
		case "module":
			top, _, _ := strings.Cut(name, ".")
			hint := "no tree nor the hidden set has it: add it to the hidden tests"
			at := elsewhere(trees[0], top)
			if at == "" && len(evs) < 3 {
				// No tree has it anywhere and no reference run says it
				// is not the task's to add: it may be the very module
				// the task asks for (a new top-level module), which the
				// base and an unfinished pull request lack. Their grade
				// is a fail that names it, not an invalid task.
				continue
			}
			if at != "" {
				hint = fmt.Sprintf("the repository has %s, which the hidden tests cannot import: add it to the hidden tests", at)
			}
			out = append(out, fmt.Sprintf("hidden module %s fails to import on the base and on the tree under test: No module named '%s' (%s)", file, name, hint))
		case "relative":
			out = append(out, fmt.Sprintf("hidden module %s fails to import on the base and on the tree under test: a relative import with no package around it (add the helper and an __init__.py to the hidden tests)", file))
		case "syntax":
			out = append(out, fmt.Sprintf("hidden module %s fails to import on the base and on the tree under test: %s (fix the test file)", file, name))
		}
	}
	// A missing fixture: the same fixture missing for the same hidden
	// file in every run.
	files = files[:0]
	for f := range base.missingFixtures {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, file := range files {
		for _, name := range base.missingFixtures[file] {
			same := true
			for _, ev := range evs[1:] {
				same = same && slices.Contains(ev.missingFixtures[file], name)
			}
			if same {
				out = append(out, fmt.Sprintf("fixture '%s' not found (asked for in %s on the base and on the tree under test): put it in the hidden conftest.py", name, file))
			}
		}
	}
	return out
}

var (
	sectionRe     = regexp.MustCompile(`^(?:_{3,}|={3,}) (.*?) (?:_{3,}|={3,})$`)
	collectingRe  = regexp.MustCompile(`^ERROR collecting (\S+)$`)
	setupOfRe     = regexp.MustCompile(`^ERROR at setup of \S+$`)
	setupFileRe   = regexp.MustCompile(`^file ` + regexp.QuoteMeta(wrapper.HiddenDir) + `/(\S+), line \d+$`)
	fixtureLineRe = regexp.MustCompile(`^E\s+fixture '([A-Za-z_][A-Za-z0-9_]{0,120})' not found\s*$`)
)

// errorSections reads pytest's error sections out of a run's output: the
// text of each "ERROR collecting FILE" section of a file in failed (the
// modules the report says failed to import), and the fixtures each "ERROR
// at setup of ..." section says are not found, by the hidden file that
// asked for them.
func errorSections(out string, failed []string) (map[string]string, map[string][]string) {
	imports := map[string]string{}
	fixtures := map[string][]string{}
	var (
		collecting string // the file of the collection section being read
		inSetup    bool
		setupFile  string
		section    strings.Builder
	)
	flush := func() {
		if collecting != "" {
			imports[collecting] = section.String()
		}
		collecting, inSetup, setupFile = "", false, ""
		section.Reset()
	}
	for _, line := range strings.Split(unixLineBreak.Replace(out), "\n") {
		if m := sectionRe.FindStringSubmatch(line); m != nil {
			flush()
			if c := collectingRe.FindStringSubmatch(m[1]); c != nil && slices.Contains(failed, c[1]) {
				collecting = c[1]
			}
			inSetup = setupOfRe.MatchString(m[1])
			continue
		}
		switch {
		case collecting != "":
			if section.Len() < 64<<10 {
				section.WriteString(line + "\n")
			}
		case inSetup:
			if m := setupFileRe.FindStringSubmatch(line); m != nil {
				setupFile = m[1]
			} else if m := fixtureLineRe.FindStringSubmatch(line); m != nil && setupFile != "" && !slices.Contains(fixtures[setupFile], m[1]) {
				fixtures[setupFile] = append(fixtures[setupFile], m[1])
			}
		}
	}
	flush()
	return imports, fixtures
}

// cannotImportRe is the import error of a name a module lacks, as pytest
// prints it in a collection error section.
var cannotImportRe = regexp.MustCompile(`(?m)^E\s+ImportError: cannot import name '([A-Za-z_][A-Za-z0-9_]{0,120})' from '([A-Za-z_][A-Za-z0-9_.]{0,120})'`)

// importFailure is the cause of a hidden module's import failure in the
// runner's words, rebuilt from identifiers only ("No module named 'x'",
// "cannot import name 'f' from 'm'"), and those identifiers; ok false when
// the cause is neither.
func importFailure(detail string) (cause string, names []string, ok bool) {
	detail = unixLineBreak.Replace(detail)
	if m := cannotImportRe.FindAllStringSubmatch(detail, -1); len(m) > 0 {
		last := m[len(m)-1]
		return fmt.Sprintf("ImportError: cannot import name '%s' from '%s'", last[1], last[2]), last[1:], true
	}
	if m := noModuleRe.FindAllStringSubmatch(detail, -1); len(m) > 0 {
		name := m[len(m)-1][1]
		return fmt.Sprintf("ModuleNotFoundError: No module named '%s'", name), []string{name}, true
	}
	return "", nil, false
}

// maxImportReasons bounds the import failures named in a grade's reasons.
const maxImportReasons = 5

// ImportFailureReasons names, one reason per hidden module, why the hidden
// modules of the tree under test's run failed to import: the real cause of
// a failing grade that is otherwise only "n of m hidden tests did not pass".
// The runner's words under test reach the implementer only as identifiers,
// and only when the base run printed the same cause for the same module (the
// pull request cannot write the base run's words) or when every identifier
// of the cause is written in the tree under test itself (the implementer's
// own words): code that reads the hidden tests at run time cannot carry
// anything out through them.
func ImportFailureReasons(pr, base *Evaluation, repo *tree.Tree) []string {
	files := make([]string, 0, len(pr.importErrors))
	for f := range pr.importErrors {
		files = append(files, f)
	}
	slices.Sort(files)
	var out []string
	for _, file := range files {
		cause, names, ok := importFailure(pr.importErrors[file])
		if !ok {
			continue
		}
		shared := false
		if base != nil {
			if c, _, ok := importFailure(base.importErrors[file]); ok && c == cause {
				shared = true
			}
		}
		unwritten := func(n string) bool {
			return !slices.ContainsFunc(repo.Files, func(f tree.File) bool { return !f.IsSymlink() && bytes.Contains(f.Data, []byte(n)) })
		}
		if !shared && slices.ContainsFunc(names, unwritten) {
			continue
		}
		if len(out) == maxImportReasons {
			break
		}
		out = append(out, fmt.Sprintf("hidden module %s failed to import: %s", file, cause))
	}
	return out
}
