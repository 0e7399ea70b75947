package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/testfirst-app/testfirst/app"
)

const testsUsage = `usage:
  testfirst tests push    --store URL --ticket owner/repo#N [--author LOGIN] [--criteria FILE] [--reference PATCH] [--format json|text] DIR
  testfirst tests list    --store URL --ticket owner/repo#N [--format json|text]
  testfirst tests approve --store URL --ticket owner/repo#N --version K --digest sha256:… --by LOGIN
  testfirst tests reject  --store URL --ticket owner/repo#N --version K --digest sha256:… --by LOGIN --reason TEXT`

// ticketFlags are the flags every tests command takes.
type ticketFlags struct {
	store, ticket, format string
	installation          int64
}

func (f *ticketFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.store, "store", app.DefaultStoreURL, "hidden test store: file://PATH or gs://bucket/prefix")
	fs.StringVar(&f.ticket, "ticket", "", "ticket as owner/repo#N (required)")
	fs.Int64Var(&f.installation, "installation", 0, "GitHub App installation id of the repository")
	fs.StringVar(&f.format, "format", "text", "output: json or text")
}

func (f *ticketFlags) parse() (app.TestsTicket, error) {
	if f.format != "json" && f.format != "text" {
		return app.TestsTicket{}, usageError{fmt.Sprintf("--format %q: want json or text", f.format)}
	}
	if f.ticket == "" {
		return app.TestsTicket{}, usageError{"--ticket is required, e.g. --ticket octo-org/widgets#12"}
	}
	t, err := app.ParseTestsTicket(f.ticket, f.installation)
	if err != nil {
		return t, usageError{"--ticket: " + err.Error()}
	}
	return t, nil
}

func testsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return exitUsage, usageError{testsUsage}
	}
	switch args[0] {
	case "push":
		return testsPush(ctx, args[1:], stdout, stderr)
	case "list":
		return testsList(ctx, args[1:], stdout, stderr)
	case "approve", "reject":
		return testsDecide(ctx, args[0], args[1:], stdout, stderr)
	}
	return exitUsage, usageError{fmt.Sprintf("unknown tests command %q\n%s", args[0], testsUsage)}
}

func testsPush(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var tf ticketFlags
	fs := newFlags("tests push", stderr)
	tf.register(fs)
	author := fs.String("author", os.Getenv("USER"), "who wrote the tests: a GitHub login or an agent's name")
	criteria := fs.String("criteria", "", `JSON file mapping criterion ids to test ids: {"criterion": ["tests/test_x.py::test_a"]}`)
	reference := fs.String("reference", "", "reference patch (git diff against the base) that must pass every test")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass, err
		}
		return exitUsage, usageError{err.Error()}
	}
	if fs.NArg() != 1 {
		return exitUsage, usageError{"tests push takes one directory of test files after the flags"}
	}
	t, err := tf.parse()
	if err != nil {
		return exitUsage, err
	}
	d, err := app.ReadTestsDraft(fs.Arg(0), *author)
	if err != nil {
		return exitUsage, usageError{err.Error()}
	}
	if *criteria != "" {
		data, err := os.ReadFile(*criteria)
		if err != nil {
			return exitUsage, usageError{"--criteria: " + err.Error()}
		}
		if err := json.Unmarshal(data, &d.Criteria); err != nil {
			return exitUsage, usageError{fmt.Sprintf("--criteria %s: %v (want a JSON object of criterion id to a list of test ids)", *criteria, err)}
		}
	}
	if *reference != "" {
		if d.Reference, err = os.ReadFile(*reference); err != nil {
			return exitUsage, usageError{"--reference: " + err.Error()}
		}
	}
	s, err := app.OpenTestsStore(ctx, tf.store)
	if err != nil {
		return exitUsage, err
	}
	defer s.Close()
	v, err := s.Push(ctx, t, d)
	if err != nil {
		return exitUsage, err
	}
	if tf.format == "json" {
		return exitPass, json.NewEncoder(stdout).Encode(map[string]any{"version": v.Number, "digest": v.Digest})
	}
	fmt.Fprintf(stdout, "%s v%d %s\n", t, v.Number, v.Digest)
	return exitPass, nil
}

func testsList(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var tf ticketFlags
	fs := newFlags("tests list", stderr)
	tf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	t, err := tf.parse()
	if err != nil {
		return exitUsage, err
	}
	s, err := app.OpenTestsStore(ctx, tf.store)
	if err != nil {
		return exitUsage, err
	}
	defer s.Close()
	vs, err := s.Versions(ctx, t)
	if err != nil {
		return exitUsage, err
	}
	if tf.format == "json" {
		return exitPass, vs.WriteJSON(stdout)
	}
	return exitPass, vs.WriteText(stdout)
}

func testsDecide(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) (int, error) {
	var tf ticketFlags
	fs := newFlags("tests "+verb, stderr)
	tf.register(fs)
	number := fs.Int("version", 0, "version number (required)")
	digest := fs.String("digest", "", "the version's digest, sha256:… (required): approval binds exactly it")
	by := fs.String("by", "", "GitHub login of who decides (required)")
	reason := fs.String("reason", "", "why the version is rejected (required for reject)")
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	t, err := tf.parse()
	if err != nil {
		return exitUsage, err
	}
	if *number < 1 || *digest == "" || *by == "" {
		return exitUsage, usageError{"--version, --digest and --by are required"}
	}
	if verb == "reject" && *reason == "" {
		return exitUsage, usageError{"--reason is required to reject"}
	}
	s, err := app.OpenTestsStore(ctx, tf.store)
	if err != nil {
		return exitUsage, err
	}
	defer s.Close()
	var v app.TestsVersion
	if verb == "approve" {
		v, err = s.Approve(ctx, t, *number, *digest, *by)
	} else {
		v, err = s.Reject(ctx, t, *number, *digest, *by, *reason)
	}
	if err != nil {
		return exitUsage, err
	}
	if tf.format == "json" {
		return exitPass, json.NewEncoder(stdout).Encode(map[string]any{"version": v.Number, "digest": v.Digest, "state": v.State})
	}
	fmt.Fprintf(stdout, "%s v%d %s %s\n", t, v.Number, v.State, v.Digest)
	return exitPass, nil
}

func keysCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "init" {
		return exitUsage, usageError{"usage: testfirst keys init [--identity PATH] [--card-identity PATH]"}
	}
	fs := newFlags("keys init", stderr)
	graderPath := fs.String("identity", app.DefaultGraderIdentity, "where the grader's age identity is kept (0600)")
	cardPath := fs.String("card-identity", app.DefaultCardIdentity, "where the approval card's age identity is kept (0600)")
	if err := parse(fs, args[1:]); err != nil {
		return exitUsage, err
	}
	g, c, created, err := app.InitKeys(*graderPath, *cardPath)
	if err != nil {
		return exitUsage, err
	}
	state := map[bool]string{true: "created", false: "kept"}
	fmt.Fprintf(stderr, "grader identity %s (%s); card identity %s (%s), card recipient %s\n", *graderPath, state[created[0]], *cardPath, state[created[1]], c)
	fmt.Fprintln(stdout, g)
	return exitPass, nil
}
