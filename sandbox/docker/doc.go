// Package docker runs sandboxes on a Docker Engine, through its API only:
// one fresh container per run, configured in one function (config.go),
// killed at its deadline and removed by the engine once it ends; the sweep
// of leftovers; and the Debian-built images they run in. The sandbox
// package holds what a run is (Spec, Limits, Result) without any engine;
// this package is the adapter that makes it happen.
package docker
