package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"text/tabwriter"

	"github.com/testfirst-app/testfirst/app"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/store"
	"github.com/testfirst-app/testfirst/tree"
)

const testsUsage = `usage:
  testfirst tests push    --ticket owner/repo#N [--store URL] [--installation ID] [--author LOGIN] [--criteria FILE] [--reference PATCH] [--format json|text] DIR
  testfirst tests list    --ticket owner/repo#N [--store URL] [--installation ID] [--format json|text]
  testfirst tests approve --ticket owner/repo#N --installation 0 --version K --digest sha256:… --by LOGIN
  testfirst tests reject  --ticket owner/repo#N --installation 0 --version K --digest sha256:… --by LOGIN --reason TEXT

The installation is found with the app's credentials (the service's configuration)
unless --installation is given. Tickets of an installation are decided on the
approval card only; approve and reject decide tickets only the command line knows
(--installation 0).`

// ticketFlags are the flags every tests command takes.
type ticketFlags struct {
	store, ticket, format, config string
	installation                  installationFlag
}

func (f *ticketFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.store, "store", "", "hidden test store: file://PATH or gs://bucket/prefix (default: the service's, from TESTFIRST_STORE_URL or --config, else "+app.DefaultStoreURL+")")
	fs.StringVar(&f.ticket, "ticket", "", "ticket as owner/repo#N (required)")
	fs.Var(&f.installation, "installation", "GitHub App installation id of the repository (default: found with the app's credentials; 0: a ticket only the command line knows)")
	fs.StringVar(&f.config, "config", "", "the service's YAML configuration file, for the app's credentials (also $TESTFIRST_CONFIG)")
	fs.StringVar(&f.format, "format", "text", "output: json or text")
}

// resolve checks the flags and reads the ticket, "owner/repo#N", with its
// installation: the one --installation gives, or the app's installation on
// the repository (findInstallation).
func (f *ticketFlags) resolve(ctx context.Context) (store.Ticket, app.Config, error) {
	t, err := f.parse()
	if err != nil {
		return t, app.Config{}, err
	}
	cfg, err := findInstallation(ctx, &t, f.installation, f.config)
	return t, cfg, err
}

// storeURL is the store the command works on: --store, else the one the
// service's settings name (cfg, read from TESTFIRST_STORE_URL or the
// configuration file), as the service itself would open.
func (f *ticketFlags) storeURL(cfg app.Config) string {
	switch {
	case f.store != "":
		return f.store
	case cfg.StoreURL != "":
		return cfg.StoreURL
	}
	return app.DefaultStoreURL
}

// parse checks the flags and reads the ticket, "owner/repo#N", without its
// installation.
func (f *ticketFlags) parse() (store.Ticket, error) {
	if f.format != "json" && f.format != "text" {
		return store.Ticket{}, usageError{fmt.Sprintf("--format %q: want json or text", f.format)}
	}
	if f.ticket == "" {
		return store.Ticket{}, usageError{"--ticket is required, e.g. --ticket octo-org/widgets#12"}
	}
	t, err := store.ParseTicket(f.ticket)
	if err != nil {
		return t, usageError{"--ticket: " + err.Error()}
	}
	return t, nil
}

// readDraft reads the test files below dir into a draft by author. It
// refuses a symlink: a version holds regular files only.
func readDraft(dir, author string) (store.Draft, error) {
	tree, err := tree.Load(dir)
	if err != nil {
		return store.Draft{}, err
	}
	d := store.Draft{Author: author}
	for _, f := range tree.Files {
		if f.IsSymlink() {
			return store.Draft{}, fmt.Errorf("%s is a symlink: a version holds regular files only", f.Path)
		}
		d.Files = append(d.Files, store.File{Path: f.Path, Data: f.Data})
	}
	return d, nil
}

// writeVersionsJSON writes versions as a JSON array, empty when there are
// none: what anyone may know of them, never a test body.
func writeVersionsJSON(w io.Writer, vs []store.Version) error {
	if vs == nil {
		vs = []store.Version{}
	}
	return json.NewEncoder(w).Encode(vs)
}

// writeVersionsText writes a table of versions: number, state, digest,
// author, when created, and who decided and why.
func writeVersionsText(w io.Writer, vs []store.Version) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "version\tstate\tdigest\tauthor\tcreated\tdecision")
	for _, v := range vs {
		decision := ""
		if d := v.Decision; d != nil {
			decision = "by " + d.By
			if d.Reason != "" {
				decision += ": " + d.Reason
			}
		}
		fmt.Fprintf(tw, "v%d\t%s\t%s\t%s\t%s\t%s\n", v.Number, v.State, v.Digest, v.Author, v.Created.Format("2006-01-02 15:04"), decision)
	}
	return tw.Flush()
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
	author := fs.String("author", defaultAuthor(), "who wrote the tests: a GitHub login or an agent's name (default: this machine's user)")
	criteria := fs.String("criteria", "", `JSON file mapping criterion ids to test ids: {"criterion": ["tests/test_x.py::test_a"]}`)
	reference := fs.String("reference", "", "reference patch (git diff against the base) that must pass every test")
	dir, err := parseWithOneArg(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitPass, err
		}
		return exitUsage, err
	}
	t, cfg, err := tf.resolve(ctx)
	if err != nil {
		return exitUsage, err
	}
	d, err := readDraft(dir, *author)
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
	// A ticket of an installation is graded by the service that reads the
	// store: a store no service reads is refused. One only the command
	// line knows (installation 0) is graded here, from any store.
	url := tf.storeURL(cfg)
	var (
		s          *store.Writer
		served     store.Served
		closeStore func() error
	)
	if t.Installation == 0 {
		s, closeStore, err = app.OpenStoreWriter(ctx, url)
	} else {
		s, served, closeStore, err = app.OpenServedStoreWriter(ctx, url)
	}
	if errors.Is(err, app.ErrStoreNotServed) {
		return exitUsage, usageError{notServed(url, t, cfg)}
	}
	if err != nil {
		return exitUsage, err
	}
	defer closeStore()
	v, err := s.Push(ctx, t, d)
	if err != nil {
		return exitUsage, err
	}
	if tf.format == "json" {
		return exitPass, json.NewEncoder(stdout).Encode(map[string]any{"version": v.Number, "digest": v.Digest, "store": url, "service": served.PublicURL})
	}
	fmt.Fprintf(stdout, "%s v%d %s\n", t, v.Number, v.Digest)
	if served.PublicURL != "" {
		fmt.Fprintf(stdout, "pushed to %s, the store of the testfirst service at %s\n", url, served.PublicURL)
	}
	return exitPass, nil
}

// notServed says why a push into the store at url is refused, and what
// works instead: the service's own settings, or the card's upload.
func notServed(url string, t store.Ticket, cfg app.Config) string {
	upload := "the ticket's page (the link is in the issue's testfirst comment)"
	if cfg.PublicURL != "" {
		upload = "the ticket's page, " + trimSlash(cfg.PublicURL) + pipeline.TicketPath(t.Owner, t.Repo, t.Issue)
	}
	return fmt.Sprintf("%s is not the store of a testfirst service: no service has recorded itself in it (every testfirst serve writes tickets/service.json into its store when it starts), so tests pushed there would never be graded, and nothing was pushed. "+
		"Run this where testfirst serve runs, with its settings (%s, or the --config it reads), or pass --store with the service's store URL. "+
		"Without access to the service's store, upload the tests on %s, signed in with GitHub.", url, "TESTFIRST_STORE_URL", upload)
}

// defaultAuthor is who pushes when --author is not given: the login of
// this machine's user ($USER, else the account the command runs as).
func defaultAuthor() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func testsList(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var tf ticketFlags
	fs := newFlags("tests list", stderr)
	tf.register(fs)
	if err := parse(fs, args); err != nil {
		return exitUsage, err
	}
	t, cfg, err := tf.resolve(ctx)
	if err != nil {
		return exitUsage, err
	}
	s, closeStore, err := app.OpenStoreWriter(ctx, tf.storeURL(cfg))
	if err != nil {
		return exitUsage, err
	}
	defer closeStore()
	vs, err := s.Versions(ctx, t)
	if err != nil {
		return exitUsage, err
	}
	if tf.format == "json" {
		return exitPass, writeVersionsJSON(stdout, vs)
	}
	return exitPass, writeVersionsText(stdout, vs)
}

func testsDecide(ctx context.Context, verb string, args []string, stdout, stderr io.Writer) (int, error) {
	var tf ticketFlags
	fs := newFlags("tests "+verb, stderr)
	tf.register(fs)
	number := fs.Int("version", 0, "version number (required)")
	digest := fs.String("digest", "", "the version's digest, sha256:… (required): approval binds exactly it")
	by := fs.String("by", "", "who decides, as recorded (required); the command line cannot prove it, so it decides only tickets of --installation 0")
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
	cfg, err := findInstallation(ctx, &t, tf.installation, tf.config)
	if err != nil {
		return exitUsage, err
	}
	if err := refuseManagedDecision(t, verb, cfg); err != nil {
		return exitUsage, err
	}
	s, closeStore, err := app.OpenStoreWriter(ctx, tf.storeURL(cfg))
	if err != nil {
		return exitUsage, err
	}
	defer closeStore()
	var v store.Version
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
