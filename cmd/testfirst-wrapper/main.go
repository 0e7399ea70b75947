// Command testfirst-wrapper is the sandbox wrapper: PID 1 of every grading
// container. It is not meant to be run by hand; see package wrapper.
package main

import (
	"os"

	"github.com/testfirst-app/testfirst/wrapper"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == wrapper.KillArg {
		os.Exit(wrapper.KillOwn())
	}
	os.Exit(wrapper.Main(os.Stdin, os.Stdout, os.Stderr))
}
