package wrapper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Where the job's requirements, and the constraints that keep the
// grader's runner, are written for pip.
const (
	requirementsFile = "/tmp/testfirst-requirements.txt"
	constraintsFile  = "/tmp/testfirst-constraints.txt"
)

// runnerScript prints pip constraints that pin the runner's distributions
// (Debian's pytest and pluggy) to the versions installed: a requirement
// for another version is a conflict pip reports, never a runner replaced
// in /usr/local, which comes first on sys.path.
const runnerScript = `import importlib.metadata as m
for n in ("pytest", "pluggy"):
    print("%s==%s" % (n, m.version(n)))
`

// installedScript prints, as JSON, the distributions installed in the
// interpreter's own site directory (for Debian's python3,
// /usr/local/lib/python3.X/dist-packages, where pip puts them; Debian's
// own packages are not listed) as "name==version", and the files among
// them that would run or be imported before or instead of the grader's
// runner: a module or package named like the runner's or the grader's
// plugins, a .pth file, sitecustomize or usercustomize.
const installedScript = `import importlib.metadata as m, json, sysconfig
p = sysconfig.get_paths()
protected = {"pytest", "_pytest", "pluggy", "py", "testfirst_syspath", "testfirst_evidence", "sitecustomize", "usercustomize"}
pkgs, hooks = set(), []
for d in m.distributions(path=[p["purelib"], p["platlib"]]):
    pkgs.add("%s==%s" % (d.metadata["Name"], d.version))
    for f in d.files or []:
        top = f.parts[0]
        name = top.split(".")[0]
        if len(f.parts) == 1 and top.endswith(".pth") or name in protected and not top.endswith((".dist-info", ".egg-info")):
            hooks.append("%s installs %s" % (d.metadata["Name"], "/".join(f.parts)))
print(json.dumps({"packages": sorted(pkgs), "hooks": sorted(hooks)}))
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
	return append(argv, "-c", constraintsFile, "-r", requirementsFile)
}

// EnvironmentRecipe says what an environment build does, for the hash
// that names its image: a change to the pip command line or to the checks
// around it names new images, never reuses those built the old way.
func EnvironmentRecipe() string {
	return strings.Join(PipCommand(EnvironmentJob{IndexURL: "INDEX"}), "\x00") + "\x00" + runnerScript + "\x00" + installedScript +
		"\x00each requirement alone when they fail together"
}

// LastPipError is the last line of pip's output that starts with
// "ERROR:", or its last line.
func LastPipError(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "ERROR:") {
			return strings.TrimSpace(lines[i])
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// buildEnvironment runs pip for the job as the container's root (the
// builder holds no capability and no network but the relay) and lists what
// it installed.
func buildEnvironment(rp *reaper, id identity, j Job, deadline time.Time, res *Result) error {
	ej := j.Environment
	if err := os.WriteFile(requirementsFile, []byte(strings.Join(ej.Requirements, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write requirements: %w", err)
	}
	pins := newBoundedScanner(64<<10, nil)
	pp, err := start(rp, id, []string{python, "-I", "-c", runnerScript}, baseEnv(), "/tmp", pins, nil, nil, nil)
	if err != nil {
		return fmt.Errorf("read the runner's versions: %w", err)
	}
	if st := pp.finish(max(time.Until(deadline), 10*time.Second)); st.err != nil || st.ws.ExitStatus() != 0 {
		return fmt.Errorf("read the runner's versions: exit %d: %s", st.ws.ExitStatus(), truncate(pins.kept, 2000))
	}
	if err := os.WriteFile(constraintsFile, pins.kept, 0o644); err != nil {
		return fmt.Errorf("write constraints: %w", err)
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
	if !st.timedOut && res.ExitCode != 0 && len(ej.Requirements) > 0 {
		// Together they fail: each alone, so that one package that cannot
		// be had (the index lacks it, it conflicts with the runner, its
		// build fails, the index cannot be reached) is named and the rest
		// are installed.
		// pip's own words that the index could not be reached at all
		// (the grader says what happened from the egress proxy's log):
		// each requirement alone would wait out pip's retries again.
		unreachable := false
		for _, w := range []string{"Max retries exceeded", "Tunnel connection failed", "ProxyError("} {
			unreachable = unreachable || bytes.Contains(out.kept, []byte(w))
		}
		for _, req := range ej.Requirements {
			if unreachable {
				res.Unavailable = append(res.Unavailable, Unavailable{Requirement: req, Error: "the index could not be reached"})
				continue
			}
			if time.Until(deadline) <= 0 {
				res.TimedOut = true
				return nil
			}
			if err := os.WriteFile(requirementsFile, []byte(req+"\n"), 0o644); err != nil {
				return fmt.Errorf("write requirements: %w", err)
			}
			fmt.Fprintf(out, "\n--- testfirst: installing %s alone\n", req)
			one := newBoundedScanner(256<<10, nil)
			p, err := start(rp, id, argv, env, "/tmp", io.MultiWriter(out, one), nil, nil, nil)
			if err != nil {
				return fmt.Errorf("start pip: %w", err)
			}
			st := p.finish(time.Until(deadline))
			if st.err != nil {
				return fmt.Errorf("pip: %w", st.err)
			}
			if st.timedOut {
				res.TimedOut = true
				break
			}
			if st.ws.ExitStatus() != 0 {
				res.Unavailable = append(res.Unavailable, Unavailable{Requirement: req, Error: LastPipError(one.kept),
					Missing: bytes.Contains(one.kept, []byte("No matching distribution found for"))})
			}
		}
		res.Seconds = time.Since(began).Seconds()
		res.Output, res.OutputBytes, res.OutputTruncated = out.kept, out.total, out.total > int64(len(out.kept))
		if res.TimedOut {
			return nil
		}
		res.ExitCode = 0
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
	var installed struct {
		Packages []string `json:"packages"`
		Hooks    []string `json:"hooks"`
	}
	if lst.err != nil || lst.ws.ExitStatus() != 0 || json.Unmarshal(list.kept, &installed) != nil {
		return fmt.Errorf("list installed packages: exit %d: %s", lst.ws.ExitStatus(), truncate(list.kept, 2000))
	}
	res.Packages = installed.Packages
	if len(installed.Hooks) > 0 {
		return fmt.Errorf("the environment would run code before the grader's runner, or in its place: %s", strings.Join(installed.Hooks, "; "))
	}
	return errors.Join(os.Remove(requirementsFile), os.Remove(constraintsFile))
}
