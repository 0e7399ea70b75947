package agent

import "github.com/testfirst-app/testfirst/sandbox"

// CommandRecipe is the Debian base of the command preset's image: git to
// hold the workspace, Python and pytest to run what a writer writes, and
// the CA certificates an https client needs through the proxy's tunnels.
var CommandRecipe = sandbox.DebianRecipe{
	Name:     "testfirst-agent",
	Suite:    "bookworm",
	Variant:  "apt",
	Packages: []string{"ca-certificates", "git", "python3", "python3-pytest"},
}

// ImageName names agent images: a base plus the wrapper, tagged by a
// content hash.
const ImageName = "testfirst-agent-run"
