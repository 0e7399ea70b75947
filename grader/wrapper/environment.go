package wrapper

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// EnvironmentJob installs a grade's dependencies with Debian's pip, from
// the package index only, into the image's /usr/local; the container is
// then committed as the environment image.
type EnvironmentJob struct {
	// IndexURL is the package index (PEP 503 simple API).
	IndexURL string `json:"index_url"`
	// TrustedHost, when set, is passed to pip as --trusted-host: the
	// index's host when it is served over plain http.
	TrustedHost string `json:"trusted_host,omitempty"`
	// Requirements are pip requirement specifiers, one per entry.
	Requirements []string `json:"requirements"`
}

// requirementsFile is where the job's requirements are written for pip.
const requirementsFile = "/tmp/testfirst-requirements.txt"

// installedScript prints, as a JSON list of "name==version", the
// distributions installed in the interpreter's own site directory (for
// Debian's python3, /usr/local/lib/python3.X/dist-packages), which is where
// pip put them: Debian's own packages are not listed.
const installedScript = `import importlib.metadata as m, json, sysconfig
p = sysconfig.get_paths()
print(json.dumps(sorted({"%s==%s" % (d.metadata["Name"], d.version) for d in m.distributions(path=[p["purelib"], p["platlib"]])})))
`

// PipCommand is the command line that installs an environment job's
// requirements, through the relay to the egress proxy.
func PipCommand(j EnvironmentJob) []string {
	argv := []string{python, "-m", "pip", "install",
		"--no-cache-dir", "--break-system-packages", "--root-user-action=ignore",
		"--disable-pip-version-check", "--no-input", "--progress-bar", "off",
		"--index-url", j.IndexURL, "--proxy", "http://" + ProxyAddr}
	if j.TrustedHost != "" {
		argv = append(argv, "--trusted-host", j.TrustedHost)
	}
	return append(argv, "-r", requirementsFile)
}

// buildEnvironment runs pip for the job as the container's root (the
// builder holds no capability and no network but the relay) and lists what
// it installed.
func buildEnvironment(rp *reaper, id identity, j Job, deadline time.Time, res *Result) error {
	ej := j.Environment
	if err := os.WriteFile(requirementsFile, []byte(strings.Join(ej.Requirements, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write requirements: %w", err)
	}
	env := append(baseEnv(), proxyEnv()...)
	argv := PipCommand(*ej)
	res.Runner = argv
	out := newBoundedScanner(j.OutputLimit, nil)
	began := time.Now()
	p, err := start(rp, id, argv, env, "/tmp", out, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("start pip: %w", err)
	}
	st := p.finish(time.Until(deadline))
	res.Seconds = time.Since(began).Seconds()
	res.TimedOut = st.timedOut
	res.ExitCode = st.ws.ExitStatus()
	res.Signal = signalName(st.ws)
	res.Output, res.OutputBytes, res.OutputTruncated = out.kept, out.total, out.total > int64(len(out.kept))
	if st.err != nil {
		return fmt.Errorf("pip: %w", st.err)
	}
	if st.timedOut || res.ExitCode != 0 {
		return nil
	}
	list := newBoundedScanner(4<<20, nil)
	lp, err := start(rp, id, []string{python, "-I", "-c", installedScript}, baseEnv(), "/tmp", list, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("list installed packages: %w", err)
	}
	lst := lp.finish(max(time.Until(deadline), 10*time.Second))
	if lst.err != nil || lst.ws.ExitStatus() != 0 || json.Unmarshal(list.kept, &res.Packages) != nil {
		return fmt.Errorf("list installed packages: exit %d: %s", lst.ws.ExitStatus(), truncate(list.kept, 2000))
	}
	return os.Remove(requirementsFile)
}
