// Command testfirst is the testfirst GitHub App's binary.
//
//	testfirst grade --repo DIR --tests DIR [--base DIR] [--reference PATCH] [--format json|text]
//	testfirst grade --repo DIR --store URL --ticket owner/repo#N --digest sha256:…
//	testfirst tests push|list|approve|reject --store URL --ticket owner/repo#N …
//	testfirst keys init
//	testfirst image build
//	testfirst sandbox sweep
//	testfirst bench grade --repo DIR --tests DIR
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
	"syscall"
)

const usage = `testfirst grades pull requests against hidden tests in a sealed sandbox.

Usage:
  testfirst grade --repo DIR --tests DIR [--base DIR] [--reference PATCH] [flags]
  testfirst grade --repo DIR --store URL --ticket owner/repo#N --digest sha256:… [flags]
  testfirst tests push|list|approve|reject --store URL --ticket owner/repo#N …
  testfirst keys init
  testfirst image build [--image BASE] [--wrapper PATH]
  testfirst sandbox sweep
  testfirst bench grade --repo DIR --tests DIR [--runs N]

Run "testfirst COMMAND -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
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
		fmt.Fprint(stdout, usage)
		return exitPass
	default:
		fmt.Fprintf(stderr, "testfirst: unknown command %q\n\n%s", args[0], usage)
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
