// Command testfirst is the testfirst GitHub App's binary.
//
//	testfirst grade --repo DIR --tests DIR [--base DIR] [--reference PATCH] [--format json|text]
//	testfirst grade --repo DIR --store URL --ticket owner/repo#N --digest sha256:…
//	testfirst serve [--config FILE]
//	testfirst migrate [--config FILE]
//	testfirst tests push|list|approve|reject --ticket owner/repo#N …
//	testfirst keys init
//	testfirst image build
//	testfirst sandbox sweep
//	testfirst bench grade --repo DIR --tests DIR
//	testfirst help [COMMAND [SUBCOMMAND]]
//
// Exit status: 0 when a grade passes, 1 for any other verdict, 2 for usage
// or infrastructure errors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
)

// command is one of testfirst's commands, as the usage lists it.
type command struct {
	name, args, about string
	// subs are the command's subcommands, for "help NAME SUB".
	subs []string
}

// commands are every command, in the order the usage lists them.
var commands = []command{
	{"serve", "[--config FILE]", "run the GitHub App: the setup page, webhooks, durable jobs, the approval card and check runs", nil},
	{"migrate", "[--config FILE]", "apply the database's migrations and exit (serve applies them too)", nil},
	{"grade", "--repo DIR --tests DIR [--base DIR] [--reference PATCH]", "grade a tree against hidden tests in the sealed sandbox and print the report", nil},
	{"tests", "push|list|approve|reject --ticket owner/repo#N …", "store a ticket's hidden tests as a new version, list its versions, decide tickets only the command line knows", []string{"push", "list", "approve", "reject"}},
	{"keys", "init", "create the grader's and the approval card's age keys in var/", []string{"init"}},
	{"image", "build [--image BASE]", "build the grader image from Debian packages (idempotent)", []string{"build"}},
	{"sandbox", "sweep", "remove sandbox containers a crash left behind", []string{"sweep"}},
	{"bench", "grade|intake|pasted", "measure the sealed grade against bare pytest, the webhook intake, or the pasted-test detector", []string{"grade", "intake", "pasted"}},
	{"help", "[COMMAND [SUBCOMMAND]]", "list the commands, or show one command's flags", nil},
}

// usageText lists every command with a line on what it does.
func usageText() string {
	var b strings.Builder
	b.WriteString("testfirst grades pull requests against hidden tests in a sealed sandbox.\n\nUsage: testfirst COMMAND [flags]\n\nCommands:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.about)
	}
	tw.Flush()
	b.WriteString("\nRun \"testfirst help COMMAND\" for a command's flags.\n")
	return b.String()
}

// help shows the usage, or one command's flags (its flag set's own
// listing, on stdout).
func help(ctx context.Context, args []string, stdout io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usageText())
		return exitPass
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		fmt.Fprintf(stdout, "testfirst help: unknown command %q\n\n%s", args[0], usageText())
		return exitUsage
	}
	c := commands[i]
	if c.name == "help" {
		fmt.Fprint(stdout, usageText())
		return exitPass
	}
	if len(c.subs) > 0 && len(args) == 1 {
		fmt.Fprintf(stdout, "testfirst %s %s\n  %s\n\nSubcommands: %s. Run \"testfirst help %s SUBCOMMAND\" for one's flags.\n", c.name, c.args, c.about, strings.Join(c.subs, ", "), c.name)
		return exitPass
	}
	if len(c.subs) > 0 && !slices.Contains(c.subs, args[1]) {
		fmt.Fprintf(stdout, "testfirst help: %s has no subcommand %q: it has %s\n", c.name, args[1], strings.Join(c.subs, ", "))
		return exitUsage
	}
	fmt.Fprintf(stdout, "testfirst %s: %s\n\n", strings.Join(args, " "), c.about)
	run(ctx, append(slices.Clone(args[:min(len(args), 2)]), "-h"), stdout, stdout)
	return exitPass
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return exitUsage
	}
	var (
		code int
		err  error
	)
	switch args[0] {
	case "grade":
		code, err = gradeCmd(ctx, args[1:], stdout, stderr)
	case "image":
		code, err = imageCmd(ctx, args[1:], stdout, stderr)
	case "sandbox":
		code, err = sandboxCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		code, err = benchCmd(ctx, args[1:], stdout, stderr)
	case "tests":
		code, err = testsCmd(ctx, args[1:], stdout, stderr)
	case "keys":
		code, err = keysCmd(ctx, args[1:], stdout, stderr)
	case "serve":
		code, err = serveCmd(ctx, args[1:], stdout, stderr)
	case "migrate":
		code, err = migrateCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		return help(ctx, args[1:], stdout)
	default:
		fmt.Fprintf(stderr, "testfirst: unknown command %q\n\n%s", args[0], usageText())
		return exitUsage
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		fmt.Fprintf(stderr, "testfirst %s: %v\n", args[0], err)
		return exitUsage
	}
	return code
}
