package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Presets of a harness.
const (
	// PresetCommand runs any program (Harness.Command); the sandbox's
	// contract is all it gets.
	PresetCommand = "command"
	// PresetClaudeCode runs Anthropic's claude-code CLI headless.
	PresetClaudeCode = "claude-code"
	// PresetCodex runs OpenAI's codex CLI headless.
	PresetCodex = "codex"
)

// Sandbox providers a harness runs on.
const (
	// SandboxDocker is the service's Docker engine (the default).
	SandboxDocker = "docker"
	// SandboxE2B is E2B (sandbox/e2b): a microVM whose egress is limited
	// by E2B's network rules, not by having no network.
	SandboxE2B = "e2b"
)

// Header styles a model API's key is sent with.
const (
	// HeaderAPIKey sends the key as "x-api-key: <key>" (Anthropic).
	HeaderAPIKey = "x-api-key"
	// HeaderBearer sends it as "Authorization: Bearer <key>" (OpenAI).
	HeaderBearer = "authorization-bearer"
)

// Independence policies for a ticket whose writer and implementer share a
// harness (or a model API vendor).
const (
	// IndependenceWarn warns on the card and the check run.
	IndependenceWarn = "warn"
	// IndependenceRefuse runs no implementer.
	IndependenceRefuse = "refuse"
)

// Default limits of an agent run.
const (
	DefaultTimeout = 30 * time.Minute
	DefaultMemory  = 2 << 30
	DefaultCPUs    = 2.0
	DefaultPids    = 512
)

// ModelAPI is a model provider's HTTP API. Its key never enters a
// sandbox: the egress proxy adds it to requests for /model/<name>.
type ModelAPI struct {
	// Name is the model API's key in model_apis.
	Name string
	// URL is the API's base URL, e.g. https://api.anthropic.com.
	URL string
	// KeyFile holds the API key (surrounding white space is dropped).
	KeyFile string
	// Header is HeaderAPIKey or HeaderBearer.
	Header string
	// Vendor, when set, says who runs the model, for the independence
	// check: two model APIs of one vendor are not independent.
	Vendor string
}

// Key reads the API key from KeyFile.
func (m ModelAPI) Key() (string, error) {
	b, err := os.ReadFile(m.KeyFile)
	if err != nil {
		return "", fmt.Errorf("model_apis.%s.key_file: %w", m.Name, err)
	}
	k := strings.TrimSpace(string(b))
	if k == "" {
		return "", fmt.Errorf("model_apis.%s.key_file %s is empty: put the API key in it", m.Name, m.KeyFile)
	}
	return k, nil
}

// Harness is an agent program and what it may use.
type Harness struct {
	// Name is the harness's key in harnesses.
	Name string
	// Preset is PresetCommand, PresetClaudeCode or PresetCodex.
	Preset string
	// Command is the program a command harness runs (argv), in
	// /workspace; other presets know their own.
	Command []string
	// Files is a host directory copied read-only to /agent.
	Files string
	// ModelAPI names the model API the harness reaches at
	// http://127.0.0.1:3128/model/<name>; empty: none. Only the
	// endpoints agents use are forwarded there (egress.ModelEndpoints:
	// POST /v1/messages and count_tokens for x-api-key, POST
	// /v1/responses and /v1/chat/completions for Bearer, GET /v1/models),
	// with plain paths; anything else is refused.
	ModelAPI string
	// Egress lists further hosts the harness may reach through the proxy
	// ("host", "host:port" or "*.domain"). GitHub's hosts are refused
	// whatever it says, and naming one marks every run's Result. A name
	// is reached only at the public addresses it resolves to: a service on
	// loopback or a private network is named by its address
	// ("127.0.0.1:8080", "10.1.2.3:443"), as a name that resolves there
	// ("localhost") is refused.
	Egress []string
	// Sandbox is where its runs go: SandboxDocker (when empty) or
	// SandboxE2B.
	Sandbox string
}

// OnE2B reports whether h runs on E2B.
func (h Harness) OnE2B() bool { return h.Sandbox == SandboxE2B }

// Limits bound an agent's sandbox.
type Limits struct {
	Timeout time.Duration
	// Memory in bytes.
	Memory int64
	CPUs   float64
	Pids   int64
}

// Config is the agents' part of the server configuration.
type Config struct {
	// ModelAPIs and Harnesses by name.
	ModelAPIs map[string]ModelAPI
	Harnesses map[string]Harness
	Limits    Limits
	// Independence is IndependenceWarn (the default) or
	// IndependenceRefuse.
	Independence string
	// GitHubHost is the GitHub Enterprise host, when the app talks to
	// one: refused like github.com. Not read from the YAML: the caller
	// sets it from the app's GitHub URL.
	GitHubHost string
}

// DefaultConfig is the configuration with no model API and no harness.
func DefaultConfig() Config {
	return Config{
		ModelAPIs:    map[string]ModelAPI{},
		Harnesses:    map[string]Harness{},
		Limits:       Limits{Timeout: DefaultTimeout, Memory: DefaultMemory, CPUs: DefaultCPUs, Pids: DefaultPids},
		Independence: IndependenceWarn,
	}
}

// configFile is the YAML shape, as keys of the server's configuration
// file.
type configFile struct {
	ModelAPIs map[string]struct {
		URL     string `yaml:"url"`
		KeyFile string `yaml:"key_file"`
		Header  string `yaml:"header"`
		Vendor  string `yaml:"vendor"`
	} `yaml:"model_apis"`
	Harnesses map[string]struct {
		Preset   string   `yaml:"preset"`
		Command  []string `yaml:"command"`
		Files    string   `yaml:"files"`
		ModelAPI string   `yaml:"model_api"`
		Egress   []string `yaml:"egress"`
		Sandbox  string   `yaml:"sandbox"`
	} `yaml:"harnesses"`
	Agents struct {
		Timeout      *string  `yaml:"timeout"`
		Memory       *string  `yaml:"memory"`
		CPUs         *float64 `yaml:"cpus"`
		Pids         *int64   `yaml:"pids"`
		Independence *string  `yaml:"independence"`
	} `yaml:"agents"`
}

// Parse reads the model_apis, harnesses and agents keys of the server's
// configuration file (other keys are the rest of the server's) over
// DefaultConfig, and validates the result. The error names every problem.
func Parse(data []byte) (Config, error) {
	c := DefaultConfig()
	var f configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("agents configuration: %w", err)
	}
	errs := unknownKeys(data)
	for name, m := range f.ModelAPIs {
		c.ModelAPIs[name] = ModelAPI{Name: name, URL: m.URL, KeyFile: m.KeyFile, Header: m.Header, Vendor: m.Vendor}
	}
	for name, h := range f.Harnesses {
		c.Harnesses[name] = Harness{Name: name, Preset: h.Preset, Command: h.Command, Files: h.Files, ModelAPI: h.ModelAPI, Egress: h.Egress, Sandbox: h.Sandbox}
	}
	a := f.Agents
	if a.Timeout != nil {
		d, err := time.ParseDuration(*a.Timeout)
		if err != nil {
			errs = append(errs, fmt.Errorf("agents.timeout %q: want a duration such as 30m", *a.Timeout))
		}
		c.Limits.Timeout = d
	}
	if a.Memory != nil {
		m, err := parseMemory(*a.Memory)
		if err != nil {
			errs = append(errs, fmt.Errorf("agents.memory %q: want a size such as 2GiB or 512m", *a.Memory))
		}
		c.Limits.Memory = m
	}
	if a.CPUs != nil {
		c.Limits.CPUs = *a.CPUs
	}
	if a.Pids != nil {
		c.Limits.Pids = *a.Pids
	}
	if a.Independence != nil {
		c.Independence = *a.Independence
	}
	if err := errors.Join(append(errs, c.Validate())...); err != nil {
		return c, err
	}
	return c, nil
}

// The keys each section may hold.
var (
	modelAPIKeys = []string{"url", "key_file", "header", "vendor"}
	harnessKeys  = []string{"preset", "command", "files", "model_api", "egress", "sandbox"}
	agentsKeys   = []string{"timeout", "memory", "cpus", "pids", "independence"}
)

// unknownKeys names every key of model_apis.<name>, harnesses.<name> and
// agents that is not one of theirs, with its line and the valid keys, so
// a misspelt setting is not silently left out.
func unknownKeys(data []byte) []error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	var errs []error
	check := func(n *yaml.Node, prefix string, valid []string) {
		if n.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("%s (line %d): want a mapping of %s", prefix, n.Line, strings.Join(valid, ", ")))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; !slices.Contains(valid, k.Value) {
				errs = append(errs, fmt.Errorf("line %d: unknown key %s.%s; the valid keys here are %s", k.Line, prefix, k.Value, strings.Join(valid, ", ")))
			}
		}
	}
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		key, v := top.Content[i].Value, top.Content[i+1]
		switch key {
		case "agents":
			check(v, "agents", agentsKeys)
		case "model_apis", "harnesses":
			valid := modelAPIKeys
			if key == "harnesses" {
				valid = harnessKeys
			}
			if v.Kind != yaml.MappingNode {
				continue // the decoder has said so
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				check(v.Content[j+1], key+"."+v.Content[j].Value, valid)
			}
		}
	}
	return errs
}

// Bounds of the agents' limits.
const (
	maxTimeout = 6 * time.Hour
	minMemory  = 256 << 20
	maxMemory  = 64 << 30
	maxCPUs    = 64
	maxPids    = 1 << 16
)

// Validate checks c and says, for every problem, the setting and what to
// put there. It reads each model API's key file, so a missing secret fails
// at start-up rather than at the first run.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	for _, name := range slices.Sorted(mapKeys(c.ModelAPIs)) {
		m := c.ModelAPIs[name]
		u, err := url.Parse(m.URL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
			bad("model_apis.%s.url %q: want the API's http or https base URL, e.g. https://api.anthropic.com", name, m.URL)
		} else if IsGitHubHost(u.Hostname(), c.GitHubHost) {
			bad("model_apis.%s.url %q: a GitHub host is never reachable from an agent", name, m.URL)
		}
		if m.Header != HeaderAPIKey && m.Header != HeaderBearer {
			bad("model_apis.%s.header %q: want %s or %s", name, m.Header, HeaderAPIKey, HeaderBearer)
		}
		if m.KeyFile == "" {
			bad("model_apis.%s.key_file: name the file that holds the API key", name)
		} else if _, err := m.Key(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range slices.Sorted(mapKeys(c.Harnesses)) {
		h := c.Harnesses[name]
		if h.Sandbox != "" && h.Sandbox != SandboxDocker && h.Sandbox != SandboxE2B {
			bad("harnesses.%s.sandbox %q: want %s (the default) or %s", name, h.Sandbox, SandboxDocker, SandboxE2B)
		}
		switch h.Preset {
		case PresetCommand:
			if len(h.Command) == 0 || h.Command[0] == "" {
				bad("harnesses.%s.command: a command harness needs its program, e.g. [\"/agent/run.sh\"]", name)
			}
		case PresetClaudeCode, PresetCodex:
			if len(h.Command) > 0 {
				bad("harnesses.%s.command: preset %s knows its own command line; leave command out", name, h.Preset)
			}
		default:
			bad("harnesses.%s.preset %q: want %s, %s or %s", name, h.Preset, PresetCommand, PresetClaudeCode, PresetCodex)
		}
		if h.Files != "" {
			if !filepath.IsAbs(h.Files) {
				bad("harnesses.%s.files %q: want an absolute directory", name, h.Files)
			} else if st, err := os.Stat(h.Files); err != nil || !st.IsDir() {
				bad("harnesses.%s.files %q: not a directory", name, h.Files)
			}
		}
		if h.ModelAPI == "" {
			if h.Preset != PresetCommand {
				bad("harnesses.%s.model_api: preset %s needs a model API; name one of model_apis (%s)", name, h.Preset, names(c.ModelAPIs))
			}
		} else if _, ok := c.ModelAPIs[h.ModelAPI]; !ok {
			bad("harnesses.%s.model_api %q: not a model API; want one of %s", name, h.ModelAPI, names(c.ModelAPIs))
		}
		for _, e := range h.Egress {
			if _, _, err := parseEgressHost(e); err != nil {
				bad("harnesses.%s.egress %q: %v", name, e, err)
			}
		}
	}
	l := c.Limits
	if l.Timeout <= 0 || l.Timeout > maxTimeout {
		bad("agents.timeout %s: want a duration above 0 and at most %s", l.Timeout, maxTimeout)
	}
	if l.Memory < minMemory || l.Memory > maxMemory {
		bad("agents.memory %d bytes: want 256MiB to 64GiB", l.Memory)
	}
	if l.CPUs <= 0 || l.CPUs > maxCPUs {
		bad("agents.cpus %v: want a number above 0 and at most %d", l.CPUs, maxCPUs)
	}
	if l.Pids < 64 || l.Pids > maxPids {
		bad("agents.pids %d: want 64 to %d", l.Pids, maxPids)
	}
	if c.Independence != IndependenceWarn && c.Independence != IndependenceRefuse {
		bad("agents.independence %q: want %s or %s", c.Independence, IndependenceWarn, IndependenceRefuse)
	}
	return errors.Join(errs...)
}

// Harness returns the harness named name, or an error that lists the names
// there are: what a repository's config check says for an unknown one.
func (c Config) Harness(name string) (Harness, error) {
	h, ok := c.Harnesses[name]
	if !ok {
		return h, fmt.Errorf("harness %q is not configured; want one of %s", name, names(c.Harnesses))
	}
	return h, nil
}

// Independent reports whether a writer run by harness writer and an
// implementer run by harness implementer are independent: not the same
// harness, and not model APIs of the same vendor.
func (c Config) Independent(writer, implementer string) bool {
	if writer == implementer {
		return false
	}
	w, i := c.ModelAPIs[c.Harnesses[writer].ModelAPI], c.ModelAPIs[c.Harnesses[implementer].ModelAPI]
	return w.Vendor == "" || !strings.EqualFold(w.Vendor, i.Vendor)
}

// EgressReachesGitHub reports whether h's own egress list names a GitHub
// host (with ghe, the GitHub Enterprise host), or a pattern one matches.
func (h Harness) EgressReachesGitHub(ghe string) bool {
	probes := []string{"github.com", "api.github.com", "codeload.github.com", "raw.githubusercontent.com", "objects.githubusercontent.com"}
	if ghe != "" {
		probes = append(probes, strings.ToLower(ghe), "api."+strings.ToLower(ghe))
	}
	for _, e := range h.Egress {
		host, _, err := parseEgressHost(e)
		if err != nil {
			continue
		}
		if IsGitHubHost(strings.TrimPrefix(host, "*."), ghe) {
			return true
		}
		for _, p := range probes {
			if MatchHost(host, p) {
				return true
			}
		}
	}
	return false
}

// MatchHost reports whether host matches the egress entry's host part
// pattern: equal, or for "*.domain" any name below domain.
func MatchHost(pattern, host string) bool {
	if d, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return pattern == host
}

// IsGitHubHost reports whether host (a name, no port) is one of GitHub's:
// github.com, *.github.com, *.githubusercontent.com, or ghe, the GitHub
// Enterprise host (also its subdomains).
func IsGitHubHost(host, ghe string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "github.com" || strings.HasSuffix(h, ".github.com") || h == "githubusercontent.com" || strings.HasSuffix(h, ".githubusercontent.com") {
		return true
	}
	g := strings.TrimSuffix(strings.ToLower(ghe), ".")
	return g != "" && (h == g || strings.HasSuffix(h, "."+g))
}

// parseEgressHost reads an egress entry: "host", "host:port" or
// "*.domain" (any port 443 or 80 when none is named). It returns the host
// in lower case and the port, "" for any.
func parseEgressHost(e string) (host, port string, err error) {
	e = strings.ToLower(strings.TrimSpace(e))
	host = e
	if h, p, err := splitPort(e); err == nil {
		host, port = h, p
	}
	name := strings.TrimPrefix(host, "*.")
	if name == "" || strings.ContainsAny(name, "/*@ ") || path.Clean(name) != name || strings.HasPrefix(name, ".") {
		return "", "", errors.New(`want a host name such as "registry.npmjs.org", "host:port" or "*.example.com"`)
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return "", "", errors.New("want a port from 1 to 65535")
		}
	}
	return host, port, nil
}

// splitPort splits "host:port"; a bare host is an error.
func splitPort(s string) (string, string, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.Contains(s[:i], ":") {
		return "", "", errors.New("no port")
	}
	return s[:i], s[i+1:], nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// names lists m's keys, sorted, for an error message; "none are
// configured" when empty.
func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none are configured)"
	}
	return strings.Join(slices.Sorted(mapKeys(m)), ", ")
}
