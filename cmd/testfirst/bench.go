package main

import (
	"context"
	"io"
)

func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	return exitUsage, usageError{"usage: testfirst bench grade --repo DIR --tests DIR [--runs N]"}
}
