package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/testfirst-app/testfirst/agent"
	"github.com/testfirst-app/testfirst/card"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/egress"
)

// Defaults of the embedded, one-machine setup.
const (
	DefaultListen       = ":8080"
	DefaultPublicURL    = "http://localhost:8080"
	DefaultDatabaseURL  = "sqlite://./var/testfirst.db"
	DefaultGitHubAPIURL = "https://api.github.com/"
	DefaultGitHubURL    = card.DefaultGitHubURL
	// DefaultJobRescueAfter is how long a job may run before another
	// replica takes it for lost (its process died): longer than the
	// longest grade.
	DefaultJobRescueAfter = jobs.DefaultJobRescueAfter
	// DefaultSyncInterval is how often every active ticket is brought in
	// line with the store, so that tests pushed and decisions taken
	// outside the service (testfirst tests push|approve|reject) are picked
	// up without a restart.
	DefaultSyncInterval = jobs.DefaultSyncInterval
	// DefaultSandboxSweepInterval is how often each grading replica
	// removes the sandboxes a crash left on its engine past their
	// deadline.
	DefaultSandboxSweepInterval = jobs.DefaultSandboxSweepInterval
	// DefaultSessionKeyFile is where serve keeps the key that signs
	// session cookies when TESTFIRST_SESSION_KEY_FILE is not set: created
	// on first use, 0600. Replicas must share one key: set the variable.
	DefaultSessionKeyFile = "var/session-key"
)

// The roles serve can run in (Config.Role).
const (
	// RoleAll is the one-machine service: webhooks, the card, every job,
	// grades included.
	RoleAll = "all"
	// RoleApp takes webhooks, serves the card and works every job but
	// grades and base checks, which it enqueues for a grader. It holds the
	// store's writer side and never the grader's identity.
	RoleApp = "app"
	// RoleGrader works only the grades and base checks; it holds the
	// grader's identity and the sandbox engine, and answers /healthz,
	// /readyz and /metrics only.
	RoleGrader = "grader"
	// DefaultRole is RoleAll, the one-machine service.
	DefaultRole = RoleAll
)

// EnvConfigFile names the optional YAML configuration file.
const EnvConfigFile = "TESTFIRST_CONFIG"

// Config is testfirst's configuration: defaults, then a YAML file, then
// TESTFIRST_* environment variables. Secrets are read from files named by
// *_FILE settings, never from flags or plain variables.
type Config struct {
	Listen       string `yaml:"listen"`
	PublicURL    string `yaml:"public_url"`
	DatabaseURL  string `yaml:"database_url"`
	StoreURL     string `yaml:"store_url"`
	GitHubAPIURL string `yaml:"github_api_url"`
	// GitHubURL is GitHub's web address, where the app is registered.
	// Empty: derived from GitHubAPIURL (see WebURL).
	GitHubURL string `yaml:"github_url"`
	// GitHubAppID and GitHubPrivateKeyFile are the app's credentials; both
	// or neither. Without them serve walks an admin through registering
	// the app, and stores what GitHub hands over in GitHubAppFile.
	GitHubAppID          int64  `yaml:"github_app_id"`
	GitHubPrivateKeyFile string `yaml:"github_private_key_file"`
	// WebhookSecretFile holds one secret per line: every one verifies a
	// delivery, so secrets can be rotated.
	WebhookSecretFile string `yaml:"webhook_secret_file"`
	// WebhookProxyURL is a smee-compatible channel (server-sent events)
	// the service reads deliveries from, for local development without a
	// public URL; each goes into the intake, signature verified. Empty:
	// deliveries come only to POST /webhook.
	WebhookProxyURL string `yaml:"webhook_proxy_url"`
	// SyncInterval is how often tickets are brought in line with the
	// store (tests pushed, approvals given outside the service).
	SyncInterval time.Duration `yaml:"store_sync_interval"`
	// JobRescueAfter is how long a job may run before it is taken for
	// lost and run again.
	JobRescueAfter time.Duration `yaml:"job_rescue_after"`
	// SandboxSweepInterval is how often each grading replica removes the
	// leftover sandboxes of its engine (past their deadline, or created and never started).
	SandboxSweepInterval time.Duration `yaml:"sandbox_sweep_interval"`
	// GitHubClientID and GitHubClientSecretFile are the app's OAuth client
	// (App settings, General); both or neither. With them serve shows the
	// approval card, signed in with GitHub.
	GitHubClientID         string `yaml:"github_client_id"`
	GitHubClientSecretFile string `yaml:"github_client_secret_file"`
	// SessionKeyFile holds the key that signs session cookies (32 bytes or
	// more); DefaultSessionKeyFile, created on first use, when empty.
	SessionKeyFile string `yaml:"session_key_file"`
	// GitHubAppFile is the app file: a registered app's credentials, read
	// when neither the config file nor the environment names an app.
	GitHubAppFile string `yaml:"github_app_file"`
	// PackageIndex is the package index (PEP 503 simple API) dependency
	// environments are built from, and the one host a grade with network
	// mirror may read; environment.DefaultIndex when empty. It is the
	// operator's setting, never a repository's.
	PackageIndex string `yaml:"package_index"`
	// UIDSplit is "allowed" (the default), or "required": every grade
	// whose uid split was not proven is refused, whatever the
	// repository's grading.uid_split says.
	UIDSplit string `yaml:"uid_split"`
	// Split is "off" (the default), or "on": every grade is split
	// (grader.Request.Split), whatever the repository's grading.split
	// says; off leaves it to the repository.
	Split string `yaml:"split"`
	// Role is what this service does: RoleAll (DefaultRole), RoleApp or
	// RoleGrader. The split roles share one PostgreSQL database.
	Role string `yaml:"role"`
	// EgressDir is where the egress proxies' unix sockets are made (the
	// system's temporary directory when empty). The engine bind-mounts
	// them by path: when testfirst runs in a container beside the host's
	// engine, this must be a host directory mounted at the same path.
	EgressDir string `yaml:"egress_dir"`
	// EgressPeerUIDs are the uids, as the host's kernel sees them, that
	// may connect to the egress proxies' sockets (the grading
	// environments' and the agents'): the sandbox container's root as the
	// host sees it. egress.DefaultPeerUIDs (0, Docker without user
	// namespace remapping) by default; under userns-remap, the
	// subordinate uid the container's root maps to.
	EgressPeerUIDs []int `yaml:"egress_peer_uids"`
	// EgressInternal are the internal addresses (loopback, private,
	// link-local, ...) the egress proxies may reach when an allowed name
	// resolves to them, each an address or a CIDR prefix: a package index
	// on a private network named by its name. Empty: only an address
	// written as such in the allowlist (the index's URL) is reached.
	EgressInternal []string `yaml:"egress_internal"`
	// OperatorTokenFile holds the operator's token: a request carrying it
	// as "Authorization: Bearer TOKEN" reads /metrics and why /readyz
	// answers as it does. Without it /metrics answers no one and /readyz
	// says its status alone.
	OperatorTokenFile string `yaml:"operator_token_file"`
	// AgentBuildCAFile is a PEM file of certificate authorities the agent
	// images' npm install trusts besides Debian's, for a network that
	// intercepts TLS to the npm registry; empty for none.
	AgentBuildCAFile string `yaml:"agent_build_ca_file"`
	// Sandbox says where sandboxes run (app/sandbox.go).
	Sandbox SandboxConfig `yaml:"sandbox"`
	// E2B is the E2B account harnesses with sandbox: e2b run on
	// (app/e2b.go).
	E2B E2BConfig `yaml:"e2b"`
	// ModelAPIsFile, HarnessesFile and AgentsFile are the file's
	// model_apis, harnesses and agents sections as written; Agents is
	// what they say, parsed and checked by package agent.
	ModelAPIsFile yaml.Node    `yaml:"model_apis"`
	HarnessesFile yaml.Node    `yaml:"harnesses"`
	AgentsFile    yaml.Node    `yaml:"agents"`
	Agents        agent.Config `yaml:"-"`

	// Read from the files above by Load.
	PrivateKey     []byte   `yaml:"-"`
	WebhookSecrets [][]byte `yaml:"-"`
	ClientSecret   string   `yaml:"-"`
	SessionKey     []byte   `yaml:"-"`
	OperatorToken  []byte   `yaml:"-"`
}

// envKeys maps each setting to its environment variable.
var envKeys = []struct {
	env string
	set func(*Config, string) error
}{
	{"TESTFIRST_LISTEN", func(c *Config, v string) error { c.Listen = v; return nil }},
	{"TESTFIRST_PUBLIC_URL", func(c *Config, v string) error { c.PublicURL = v; return nil }},
	{"TESTFIRST_DATABASE_URL", func(c *Config, v string) error { c.DatabaseURL = v; return nil }},
	{"TESTFIRST_STORE_URL", func(c *Config, v string) error { c.StoreURL = v; return nil }},
	{"TESTFIRST_GITHUB_API_URL", func(c *Config, v string) error { c.GitHubAPIURL = v; return nil }},
	{"TESTFIRST_GITHUB_URL", func(c *Config, v string) error { c.GitHubURL = v; return nil }},
	{"TESTFIRST_GITHUB_APP_ID", func(c *Config, v string) error {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("TESTFIRST_GITHUB_APP_ID=%q: want the app's numeric id (App settings, About)", v)
		}
		c.GitHubAppID = id
		return nil
	}},
	{"TESTFIRST_GITHUB_PRIVATE_KEY_FILE", func(c *Config, v string) error { c.GitHubPrivateKeyFile = v; return nil }},
	{"TESTFIRST_WEBHOOK_SECRET_FILE", func(c *Config, v string) error { c.WebhookSecretFile = v; return nil }},
	{"TESTFIRST_WEBHOOK_PROXY_URL", func(c *Config, v string) error { c.WebhookProxyURL = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_STORE_SYNC_INTERVAL", durationSetting("TESTFIRST_STORE_SYNC_INTERVAL", func(c *Config) *time.Duration { return &c.SyncInterval })},
	{"TESTFIRST_JOB_RESCUE_AFTER", durationSetting("TESTFIRST_JOB_RESCUE_AFTER", func(c *Config) *time.Duration { return &c.JobRescueAfter })},
	{"TESTFIRST_SANDBOX_SWEEP_INTERVAL", durationSetting("TESTFIRST_SANDBOX_SWEEP_INTERVAL", func(c *Config) *time.Duration { return &c.SandboxSweepInterval })},
	{"TESTFIRST_GITHUB_CLIENT_ID", func(c *Config, v string) error { c.GitHubClientID = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_GITHUB_CLIENT_SECRET_FILE", func(c *Config, v string) error { c.GitHubClientSecretFile = v; return nil }},
	{"TESTFIRST_GITHUB_APP_FILE", func(c *Config, v string) error { c.GitHubAppFile = v; return nil }},
	{"TESTFIRST_SESSION_KEY_FILE", func(c *Config, v string) error { c.SessionKeyFile = v; return nil }},
	{"TESTFIRST_PACKAGE_INDEX", func(c *Config, v string) error { c.PackageIndex = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_EGRESS_DIR", func(c *Config, v string) error { c.EgressDir = v; return nil }},
	{"TESTFIRST_EGRESS_PEER_UIDS", func(c *Config, v string) error {
		c.EgressPeerUIDs = nil
		for _, f := range listItems(v) {
			uid, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("TESTFIRST_EGRESS_PEER_UIDS=%q: %q is not a uid: want the host uids the sandboxes' root runs as, comma-separated, e.g. 0, or 100000 under Docker's userns-remap", v, f)
			}
			c.EgressPeerUIDs = append(c.EgressPeerUIDs, uid)
		}
		return nil
	}},
	{"TESTFIRST_EGRESS_INTERNAL", func(c *Config, v string) error { c.EgressInternal = listItems(v); return nil }},
	{"TESTFIRST_OPERATOR_TOKEN_FILE", func(c *Config, v string) error { c.OperatorTokenFile = v; return nil }},
	{"TESTFIRST_AGENT_BUILD_CA_FILE", func(c *Config, v string) error { c.AgentBuildCAFile = v; return nil }},
	{"TESTFIRST_SANDBOX_RUNTIME", func(c *Config, v string) error { c.Sandbox.Runtime = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_UID_SPLIT", func(c *Config, v string) error { c.UIDSplit = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_SPLIT", func(c *Config, v string) error { c.Split = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_ROLE", func(c *Config, v string) error { c.Role = strings.TrimSpace(v); return nil }},
}

// durationSetting parses a Go duration ("15s", "1h30m") into a setting.
func durationSetting(env string, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%s=%q: want a duration such as 15s or 1h30m", env, v)
		}
		*field(c) = d
		return nil
	}
}

// listItems splits a list setting given in the environment at commas and
// spaces.
func listItems(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// DefaultConfig is the configuration with nothing set.
func DefaultConfig() Config {
	return Config{
		Listen:         DefaultListen,
		PublicURL:      DefaultPublicURL,
		DatabaseURL:    DefaultDatabaseURL,
		StoreURL:       DefaultStoreURL,
		GitHubAPIURL:   DefaultGitHubAPIURL,
		SyncInterval:   DefaultSyncInterval,
		JobRescueAfter: DefaultJobRescueAfter,
		GitHubAppFile:  DefaultGitHubAppFile,
		EgressPeerUIDs: append([]int(nil), egress.DefaultPeerUIDs...),

		SandboxSweepInterval: DefaultSandboxSweepInterval,
		Agents:               agent.DefaultConfig(),
		Role:                 DefaultRole,
	}
}

// LoadConfig builds the configuration from the defaults, the YAML file
// (path, or $TESTFIRST_CONFIG; none when both are empty) and the
// environment, then, when neither names an app, the app file that serve's
// registration wrote; it reads the secret files and validates everything.
// Every problem is reported at once, each saying how to fix it.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	c := DefaultConfig()
	if path == "" {
		path = getenv(EnvConfigFile)
	}
	var errs []error
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("config file: %w", err)
		}
		if err := ParseConfigYAML(data, &c); err != nil {
			return c, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	for _, k := range append(envKeys, sandboxEnvKeys...) {
		if v, ok := lookup(getenv, k.env); ok {
			if err := k.set(&c, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := c.applyAppFile(); err != nil {
		errs = append(errs, err)
	}
	c.PublicURL = publicURLOf(c.PublicURL, c.Listen)
	errs = append(errs, c.validate()...)
	errs = append(errs, c.readSecrets()...)
	if len(c.Agents.Harnesses) > 0 {
		// GitHub Enterprise's host is refused to agents like github.com's.
		if u, err := url.Parse(c.WebURL()); err == nil && !agent.IsGitHubHost(u.Hostname(), "") {
			c.Agents.GitHubHost = u.Hostname()
			if err := c.Agents.Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return c, errors.Join(errs...)
}

// publicURLOf is the service's public URL: public, unless nothing set it
// (it is the default) and the service listens elsewhere than the default,
// on this machine: then the address it listens on, as a browser here
// reaches it (an unspecified host is localhost). A port chosen by the
// system (0) is not known yet, and the default stays.
func publicURLOf(public, listen string) string {
	if public != DefaultPublicURL || listen == DefaultListen {
		return public
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "0" || port == "" {
		return public
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

// ParseConfigYAML reads YAML settings over c. Unknown keys are errors, so
// a misspelt setting is not silently ignored.
func ParseConfigYAML(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w (settings: listen, public_url, database_url, store_url, github_api_url, github_url, github_app_id, github_private_key_file, webhook_secret_file, github_client_id, github_client_secret_file, github_app_file, session_key_file, store_sync_interval, job_rescue_after, sandbox_sweep_interval, package_index, egress_dir, egress_peer_uids, egress_internal, agent_build_ca_file, operator_token_file, role, uid_split, split, sandbox: provider, runtime, kubernetes: namespace, runtime_class, kubeconfig, image, e2b: api_key_file, template, domain, api_url, egress_url, egress_listen, model_apis, harnesses, agents)", err)
	}
	agents, err := agent.Parse(data)
	if err != nil {
		return err
	}
	c.Agents = agents
	return nil
}

// validate checks every setting.
func (c *Config) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen %q: want host:port or :port, e.g. :8080", c.Listen)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("listen %q: the port must be a number from 0 to 65535", c.Listen)
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("public_url %q: want the absolute http(s) URL users reach the app at, e.g. https://testfirst.example.com", c.PublicURL)
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "sqlite" && u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("database_url %q: want sqlite:///path/db or postgres://user@host/db", c.DatabaseURL)
	}
	if u, err := url.Parse(c.StoreURL); err != nil || (u.Scheme != "file" && u.Scheme != "gs") {
		bad("store_url %q: want file:///path or gs://bucket/prefix", c.StoreURL)
	}
	if u, err := url.Parse(c.GitHubAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("github_api_url %q: want an absolute URL, e.g. https://api.github.com/ or https://ghe.example.com/api/v3/", c.GitHubAPIURL)
	}
	if c.GitHubURL != "" {
		if u, err := url.Parse(c.GitHubURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("github_url %q: want GitHub's absolute web address, e.g. https://github.com/ or https://ghe.example.com/", c.GitHubURL)
		}
	}
	switch {
	case c.GitHubClientID != "" && c.GitHubClientSecretFile == "":
		bad("github_client_id is set but github_client_secret_file is not: set TESTFIRST_GITHUB_CLIENT_SECRET_FILE to a file holding the app's client secret")
	case c.GitHubClientID == "" && c.GitHubClientSecretFile != "":
		bad("github_client_secret_file is set but github_client_id is not: set TESTFIRST_GITHUB_CLIENT_ID (App settings, General, Client ID)")
	case c.GitHubClientID != "" && c.GitHubAppID == 0:
		bad("github_client_id is set but github_app_id is not: the approval card needs the app's credentials too")
	}
	switch {
	case c.GitHubAppID < 0:
		bad("github_app_id %d: want the app's positive numeric id", c.GitHubAppID)
	case c.GitHubAppID > 0 && c.GitHubPrivateKeyFile == "":
		bad("github_app_id is set but github_private_key_file is not: set TESTFIRST_GITHUB_PRIVATE_KEY_FILE to the app's .pem file")
	case c.GitHubAppID == 0 && c.GitHubPrivateKeyFile != "":
		bad("github_private_key_file is set but github_app_id is not: set TESTFIRST_GITHUB_APP_ID")
	}
	if c.PackageIndex != "" {
		if u, err := url.Parse(c.PackageIndex); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			shown := c.PackageIndex
			if u != nil && u.User != nil {
				// The index's password is never in a message.
				shown = u.Redacted()
			}
			bad("package_index %q: want the absolute http(s) URL of a PEP 503 simple index, e.g. https://pypi.org/simple or https://mirror.example/simple", shown)
		}
	}
	if c.EgressDir != "" && !filepath.IsAbs(c.EgressDir) {
		bad("egress_dir %q: want an absolute path, the same on this machine and the engine's", c.EgressDir)
	}
	errs = append(errs, c.validateEgress()...)
	if c.UIDSplit != "" && c.UIDSplit != "allowed" && c.UIDSplit != "required" {
		bad("uid_split %q: want allowed (the default: a grade without the uid split is posted with trust best_effort) or required (such a grade is refused), e.g. TESTFIRST_UID_SPLIT=required", c.UIDSplit)
	}
	if c.Split != "" && c.Split != "off" && c.Split != "on" {
		bad("split %q: want off (the default: each repository's grading.split decides) or on (every grade is split), e.g. TESTFIRST_SPLIT=on", c.Split)
	}
	switch c.Role {
	case RoleAll:
	case RoleApp, RoleGrader:
		if u, err := url.Parse(c.DatabaseURL); err == nil && u.Scheme == "sqlite" {
			bad("role %s with database_url %q: the app and grader roles are separate services, usually on separate machines, that share one database over the network; a SQLite file lives on one machine's disk, and serve keeps it with one connection and no notifications between processes: use PostgreSQL (TESTFIRST_DATABASE_URL=postgres://...), or role all on SQLite", c.Role, c.DatabaseURL)
		}
	default:
		bad("role %q: want all (one service does everything), app (webhooks, the card, every job but grades) or grader (grades and base checks only)", c.Role)
	}
	if c.SyncInterval < time.Second {
		bad("store_sync_interval %s: want at least 1s, e.g. 15s", c.SyncInterval)
	}
	if c.SandboxSweepInterval < time.Second {
		bad("sandbox_sweep_interval %s: want at least 1s, e.g. 1m", c.SandboxSweepInterval)
	}
	if c.JobRescueAfter < time.Minute {
		bad("job_rescue_after %s: want at least 1m, and longer than the longest grade, e.g. 90m", c.JobRescueAfter)
	}
	errs = append(errs, c.Sandbox.validate()...)
	errs = append(errs, c.E2B.validate(c.Agents)...)
	if c.WebhookProxyURL != "" {
		if u, err := url.Parse(c.WebhookProxyURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("webhook_proxy_url %q: want the channel's absolute http(s) URL, e.g. https://smee.io/AbCdEf", c.WebhookProxyURL)
		}
	}
	// The grader role takes no webhook: it needs no secret to check them.
	if c.GitHubAppID > 0 && c.WebhookSecretFile == "" && c.Role != RoleGrader {
		bad("webhook_secret_file is not set: with app credentials, set TESTFIRST_WEBHOOK_SECRET_FILE to a file holding the app's webhook secret")
	}
	if c.GitHubClientSecretFile != "" && c.GitHubClientID == "" {
		bad("github_client_secret_file is set but github_client_id is not: set TESTFIRST_GITHUB_CLIENT_ID to the app's client id (App settings, About)")
	}
	return errs
}

// maxUID is the largest uid a process can have (2^32-2; 2^32-1 is
// "no uid").
const maxUID = 1<<32 - 2

// validateEgress checks the egress proxies' peer uids and internal
// addresses, as egress.New would, but saying which setting to fix.
func (c *Config) validateEgress() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.EgressPeerUIDs) == 0 {
		bad("egress_peer_uids is empty: no sandbox could use the egress proxies; name the host uid the sandboxes' root runs as, e.g. TESTFIRST_EGRESS_PEER_UIDS=0 (the default), or the subordinate uid under Docker's userns-remap")
	}
	for _, u := range c.EgressPeerUIDs {
		if u < 0 || u > maxUID {
			bad("egress_peer_uids: %d is not a uid: want numbers from 0 to %d, the host uids the sandboxes' root runs as, e.g. TESTFIRST_EGRESS_PEER_UIDS=0", u, maxUID)
		}
	}
	for _, a := range c.EgressInternal {
		pre, err := netip.ParsePrefix(a)
		if err != nil {
			addr, aerr := netip.ParseAddr(a)
			if aerr != nil {
				bad("egress_internal %q: want an address (10.1.2.3, fd00::5) or a CIDR prefix (10.0.0.0/8), with no port or name, e.g. TESTFIRST_EGRESS_INTERNAL=10.0.0.5,192.168.1.0/24", a)
				continue
			}
			pre = netip.PrefixFrom(addr, addr.BitLen())
		}
		if pre.Bits() == 0 {
			bad("egress_internal %q: every address, the cloud's metadata service and the host's loopback with them; name the package index's own address or network, e.g. 10.0.0.5 or 10.0.0.0/24", a)
		}
	}
	return errs
}

// EgressFromEnv reads the egress proxies' peer uids and internal
// addresses from TESTFIRST_EGRESS_PEER_UIDS and TESTFIRST_EGRESS_INTERNAL
// alone, defaulted and checked as LoadConfig does: for commands that
// serve egress proxies without the service's configuration (testfirst
// grade).
func EgressFromEnv(getenv func(string) string) (peerUIDs []int, internal []string, err error) {
	c := DefaultConfig()
	var errs []error
	for _, k := range envKeys {
		if k.env != "TESTFIRST_EGRESS_PEER_UIDS" && k.env != "TESTFIRST_EGRESS_INTERNAL" {
			continue
		}
		if v, ok := lookup(getenv, k.env); ok {
			if err := k.set(&c, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, c.validateEgress()...)
	return c.EgressPeerUIDs, c.EgressInternal, errors.Join(errs...)
}

// EgressOptions are the egress proxies' options the settings give: the
// peer uids and the internal addresses allowed. The grading environments'
// proxies and the agents' take them.
func (c *Config) EgressOptions() []egress.Option {
	return egressOptions(c.EgressPeerUIDs, c.EgressInternal)
}

// egressOptions are the options that allow peers and internal, each when
// set (an empty peers keeps egress.DefaultPeerUIDs).
func egressOptions(peers []int, internal []string) []egress.Option {
	var opts []egress.Option
	if len(peers) > 0 {
		opts = append(opts, egress.WithPeerUIDs(peers...))
	}
	if len(internal) > 0 {
		opts = append(opts, egress.WithInternal(internal...))
	}
	return opts
}

// HasApp reports whether app credentials are configured.
func (c *Config) HasApp() bool { return c.GitHubAppID > 0 }

// WebURL is GitHub's web address, ending in "/": github_url, else derived
// from github_api_url (https://HOST/api/v3/ is https://HOST/), else
// https://github.com/.
func (c *Config) WebURL() string {
	if c.GitHubURL != "" {
		return strings.TrimSuffix(c.GitHubURL, "/") + "/"
	}
	if u, err := github.WebURL(c.GitHubAPIURL); err == nil {
		return u
	}
	return DefaultGitHubURL
}

// HasLogin reports whether the app's OAuth client is configured: then
// serve shows the approval card.
func (c *Config) HasLogin() bool { return c.GitHubClientID != "" && c.ClientSecret != "" }

// minOperatorToken is the shortest operator token taken: it is compared
// with what anyone on the network sends.
const minOperatorToken = 16

// readSecrets reads the private key, the client secret, the session key,
// the operator token and the webhook secrets.
func (c *Config) readSecrets() []error {
	var errs []error
	if c.GitHubPrivateKeyFile != "" {
		key, err := os.ReadFile(c.GitHubPrivateKeyFile)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("github_private_key_file: %w", err))
		default:
			if err := checkRSAKey(key); err != nil {
				errs = append(errs, fmt.Errorf("github_private_key_file %s: %w", c.GitHubPrivateKeyFile, err))
			}
			c.PrivateKey = key
		}
	}
	if c.GitHubClientSecretFile != "" {
		data, err := os.ReadFile(c.GitHubClientSecretFile)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("github_client_secret_file: %w", err))
		case strings.TrimSpace(string(data)) == "":
			errs = append(errs, fmt.Errorf("github_client_secret_file %s is empty: write the app's client secret in it (App settings, General, Client secrets)", c.GitHubClientSecretFile))
		default:
			c.ClientSecret = strings.TrimSpace(string(data))
		}
	}
	if c.SessionKeyFile != "" {
		key, err := readSessionKey(c.SessionKeyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("session_key_file: %w", err))
		}
		c.SessionKey = key
	}
	if c.OperatorTokenFile != "" {
		data, err := os.ReadFile(c.OperatorTokenFile)
		token := strings.TrimSpace(string(data))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("operator_token_file: %w", err))
		case len(token) < minOperatorToken:
			errs = append(errs, fmt.Errorf("operator_token_file %s holds %d characters: write a token of at least %d in it, e.g. openssl rand -hex 32 > %s", c.OperatorTokenFile, len(token), minOperatorToken, c.OperatorTokenFile))
		default:
			c.OperatorToken = []byte(token)
		}
	}
	if c.WebhookSecretFile != "" {
		data, err := os.ReadFile(c.WebhookSecretFile)
		if err != nil {
			return append(errs, fmt.Errorf("webhook_secret_file: %w", err))
		}
		for _, line := range strings.Split(string(data), "\n") {
			if s := strings.TrimSpace(line); s != "" {
				c.WebhookSecrets = append(c.WebhookSecrets, []byte(s))
			}
		}
		if len(c.WebhookSecrets) == 0 {
			errs = append(errs, fmt.Errorf("webhook_secret_file %s holds no secret: write the app's webhook secret on its first line", c.WebhookSecretFile))
		}
	}
	return errs
}

// applyAppFile takes the app's credentials from the app file when neither
// the config file nor the environment names an app: settings given there
// win. A missing app file is no app.
func (c *Config) applyAppFile() error {
	if c.GitHubAppID != 0 || c.GitHubPrivateKeyFile != "" || c.GitHubAppFile == "" {
		return nil
	}
	data, err := os.ReadFile(c.GitHubAppFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("github_app_file: %w", err)
	}
	var f appFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("github_app_file %s: %w (it holds github_app_id, github_private_key_file, webhook_secret_file, github_client_id, github_client_secret_file; move it away to register the app again)", c.GitHubAppFile, err)
	}
	if f.GitHubAppID <= 0 || f.GitHubPrivateKeyFile == "" {
		return fmt.Errorf("github_app_file %s: want github_app_id and github_private_key_file; move it away to register the app again", c.GitHubAppFile)
	}
	dir := filepath.Dir(c.GitHubAppFile)
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	c.GitHubAppID = f.GitHubAppID
	c.GitHubPrivateKeyFile = resolve(f.GitHubPrivateKeyFile)
	if c.WebhookSecretFile == "" {
		c.WebhookSecretFile = resolve(f.WebhookSecretFile)
	}
	if c.GitHubClientID == "" && c.GitHubClientSecretFile == "" {
		c.GitHubClientID = f.GitHubClientID
		c.GitHubClientSecretFile = resolve(f.GitHubClientSecretFile)
	}
	return nil
}
