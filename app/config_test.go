package app

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/testfirst-app/testfirst/sandbox/egress"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func rsaKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig("", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultConfig(), c); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if c.HasApp() {
		t.Error("no credentials, yet HasApp")
	}
}

// TestLoadConfigPrecedence: the file overrides the defaults, the
// environment overrides the file, secrets come from their files.
// TestLoadConfigPackageIndex: the index comes from the file, and the
// environment wins over it.
func TestLoadConfigPackageIndex(t *testing.T) {
	file := writeFile(t, "config.yml", "package_index: https://file.example/simple\n")
	c, err := LoadConfig(file, env(nil))
	if err != nil || c.PackageIndex != "https://file.example/simple" {
		t.Errorf("from the file: %q, %v", c.PackageIndex, err)
	}
	c, err = LoadConfig(file, env(map[string]string{"TESTFIRST_PACKAGE_INDEX": "http://10.0.0.5:3141/root/pypi/+simple/"}))
	if err != nil || c.PackageIndex != "http://10.0.0.5:3141/root/pypi/+simple/" {
		t.Errorf("from the environment: %q, %v", c.PackageIndex, err)
	}
}

// TestLoadConfigEgress: the egress proxies' peer uids and internal
// addresses come from the file, as lists, and the environment wins over
// it, comma- or space-separated; uid 0 by default, no internal address.
func TestLoadConfigEgress(t *testing.T) {
	c, err := LoadConfig("", env(nil))
	if err != nil || !slices.Equal(c.EgressPeerUIDs, []int{0}) || c.EgressInternal != nil {
		t.Errorf("defaults: peer uids %v, internal %q, %v", c.EgressPeerUIDs, c.EgressInternal, err)
	}
	file := writeFile(t, "config.yml", "egress_peer_uids: [100000, 0]\negress_internal: [10.0.0.5, 192.168.0.0/16, \"fd00::/8\"]\n")
	c, err = LoadConfig(file, env(nil))
	if err != nil || !slices.Equal(c.EgressPeerUIDs, []int{100000, 0}) || !slices.Equal(c.EgressInternal, []string{"10.0.0.5", "192.168.0.0/16", "fd00::/8"}) {
		t.Errorf("from the file: peer uids %v, internal %q, %v", c.EgressPeerUIDs, c.EgressInternal, err)
	}
	c, err = LoadConfig(file, env(map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": "231072", "TESTFIRST_EGRESS_INTERNAL": "127.0.0.1, ::1 10.1.0.0/16"}))
	if err != nil || !slices.Equal(c.EgressPeerUIDs, []int{231072}) || !slices.Equal(c.EgressInternal, []string{"127.0.0.1", "::1", "10.1.0.0/16"}) {
		t.Errorf("from the environment: peer uids %v, internal %q, %v", c.EgressPeerUIDs, c.EgressInternal, err)
	}
	// testfirst grade reads the same two variables alone.
	peers, internal, err := EgressFromEnv(env(map[string]string{"TESTFIRST_EGRESS_INTERNAL": "10.0.0.5"}))
	if err != nil || !slices.Equal(peers, []int{0}) || !slices.Equal(internal, []string{"10.0.0.5"}) {
		t.Errorf("EgressFromEnv: %v, %q, %v", peers, internal, err)
	}
	if _, _, err := EgressFromEnv(env(map[string]string{"TESTFIRST_EGRESS_INTERNAL": "mirror.internal"})); err == nil || !strings.Contains(err.Error(), `egress_internal "mirror.internal": want an address`) {
		t.Errorf("EgressFromEnv with a name: %v", err)
	}
	// What validation lets through, the proxy takes.
	if _, err := egress.New([]string{"pypi.org:443"}, c.EgressOptions()...); err != nil {
		t.Errorf("egress.New with the settings' options: %v", err)
	}
}

func TestLoadConfigPrecedence(t *testing.T) {
	key := writeFile(t, "app.pem", rsaKeyPEM(t))
	secrets := writeFile(t, "secrets", "new-secret\n\nold-secret\n")
	file := writeFile(t, "testfirst.yml", "listen: 127.0.0.1:9000\npublic_url: https://tf.example.com\ngithub_app_id: 7\ngithub_private_key_file: "+key+"\nwebhook_secret_file: "+secrets+"\nstore_sync_interval: 5s\njob_rescue_after: 2h\nsandbox_sweep_interval: 2m\n")
	c, err := LoadConfig(file, env(map[string]string{
		"TESTFIRST_LISTEN":                 ":9100",
		"TESTFIRST_DATABASE_URL":           "postgres://tf@db/testfirst",
		"TESTFIRST_STORE_SYNC_INTERVAL":    "3s",
		"TESTFIRST_SANDBOX_SWEEP_INTERVAL": "30s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen = ":9100"
	want.PublicURL = "https://tf.example.com"
	want.DatabaseURL = "postgres://tf@db/testfirst"
	want.SyncInterval, want.JobRescueAfter = 3*time.Second, 2*time.Hour
	want.SandboxSweepInterval = 30 * time.Second
	want.GitHubAppID = 7
	want.GitHubPrivateKeyFile = key
	want.WebhookSecretFile = secrets
	want.WebhookSecrets = [][]byte{[]byte("new-secret"), []byte("old-secret")}
	if diff := cmp.Diff(want, c, cmpopts.IgnoreFields(Config{}, "PrivateKey")); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(c.PrivateKey), "RSA PRIVATE KEY") || !c.HasApp() {
		t.Error("private key not read")
	}
	// The config file path may come from the environment too.
	c, err = LoadConfig("", env(map[string]string{EnvConfigFile: file}))
	if err != nil || c.Listen != "127.0.0.1:9000" {
		t.Errorf("TESTFIRST_CONFIG: listen %q, %v", c.Listen, err)
	}
}

// TestLoadConfigErrors: each mistake is reported with how to fix it, all
// at once.
func TestLoadConfigErrors(t *testing.T) {
	notKey := writeFile(t, "app.pem", "hello")
	empty := writeFile(t, "secrets", "\n \n")
	tests := []struct {
		name string
		file string
		env  map[string]string
		want []string
	}{
		{"bad listen", "", map[string]string{"TESTFIRST_LISTEN": "8080"}, []string{`listen "8080": want host:port or :port`}},
		{"bad port", "", map[string]string{"TESTFIRST_LISTEN": ":99999"}, []string{"port must be a number from 0 to 65535"}},
		{"relative public url", "", map[string]string{"TESTFIRST_PUBLIC_URL": "/app"}, []string{"public_url \"/app\": want the absolute http(s) URL"}},
		{"mysql", "", map[string]string{"TESTFIRST_DATABASE_URL": "mysql://x"}, []string{"want sqlite:///path/db or postgres://"}},
		{"s3 store", "", map[string]string{"TESTFIRST_STORE_URL": "s3://b"}, []string{"want file:///path or gs://bucket/prefix"}},
		{"relative egress dir", "", map[string]string{"TESTFIRST_EGRESS_DIR": "var/egress"}, []string{`egress_dir "var/egress": want an absolute path`}},
		{"package index not a URL", "", map[string]string{"TESTFIRST_PACKAGE_INDEX": "pypi.org/simple"}, []string{`package_index "pypi.org/simple": want the absolute http(s) URL of a PEP 503 simple index`}},
		{"package index with a password, not http", "", map[string]string{"TESTFIRST_PACKAGE_INDEX": "ftp://ci:S3CRET@mirror/simple"}, []string{`package_index "ftp://ci:xxxxx@mirror/simple": want the absolute http(s) URL`}},
		{"sync interval not a duration", "", map[string]string{"TESTFIRST_STORE_SYNC_INTERVAL": "15"}, []string{`TESTFIRST_STORE_SYNC_INTERVAL="15": want a duration such as 15s`}},
		{"sync interval too short", "", map[string]string{"TESTFIRST_STORE_SYNC_INTERVAL": "10ms"}, []string{"store_sync_interval 10ms: want at least 1s"}},
		{"sandbox sweep interval not a duration", "", map[string]string{"TESTFIRST_SANDBOX_SWEEP_INTERVAL": "60"}, []string{`TESTFIRST_SANDBOX_SWEEP_INTERVAL="60": want a duration such as 15s`}},
		{"sandbox sweep interval too short", "", map[string]string{"TESTFIRST_SANDBOX_SWEEP_INTERVAL": "0s"}, []string{"sandbox_sweep_interval 0s: want at least 1s"}},
		{"rescue too soon", "", map[string]string{"TESTFIRST_JOB_RESCUE_AFTER": "20s"}, []string{"job_rescue_after 20s: want at least 1m"}},
		{"app id not a number", "", map[string]string{"TESTFIRST_GITHUB_APP_ID": "my-app"}, []string{"want the app's numeric id"}},
		{"id without key", "", map[string]string{"TESTFIRST_GITHUB_APP_ID": "7", "TESTFIRST_WEBHOOK_SECRET_FILE": empty}, []string{"github_private_key_file is not", "holds no secret"}},
		{"key without id", "", map[string]string{"TESTFIRST_GITHUB_PRIVATE_KEY_FILE": notKey}, []string{"github_app_id is not", "not a PEM file"}},
		{"missing secret file", "", map[string]string{"TESTFIRST_GITHUB_APP_ID": "7", "TESTFIRST_GITHUB_PRIVATE_KEY_FILE": "/nonexistent/key.pem"}, []string{"webhook_secret_file is not set", "no such file"}},
		{"client secret without id", "", map[string]string{"TESTFIRST_GITHUB_CLIENT_SECRET_FILE": empty}, []string{"github_client_id is not", "github_client_secret_file " + empty + " is empty"}},
		{"peer uid not a number", "", map[string]string{"TESTFIRST_EGRESS_PEER_UIDS": "0,root"}, []string{`TESTFIRST_EGRESS_PEER_UIDS="0,root": "root" is not a uid: want the host uids`}},
		{"negative peer uid", "egress_peer_uids: [-1]\n", nil, []string{"egress_peer_uids: -1 is not a uid: want numbers from 0 to 4294967294"}},
		{"peer uid too large", "egress_peer_uids: [4294967295]\n", nil, []string{"egress_peer_uids: 4294967295 is not a uid"}},
		{"no peer uid", "egress_peer_uids: []\n", nil, []string{"egress_peer_uids is empty: no sandbox could use the egress proxies", "TESTFIRST_EGRESS_PEER_UIDS=0"}},
		{"internal name", "", map[string]string{"TESTFIRST_EGRESS_INTERNAL": "10.0.0.5,mirror.internal"}, []string{`egress_internal "mirror.internal": want an address (10.1.2.3, fd00::5) or a CIDR prefix (10.0.0.0/8)`}},
		{"internal with port", "egress_internal: [\"127.0.0.1:3141\"]\n", nil, []string{`egress_internal "127.0.0.1:3141": want an address`, "with no port or name"}},
		{"internal everything", "", map[string]string{"TESTFIRST_EGRESS_INTERNAL": "0.0.0.0/0"}, []string{`egress_internal "0.0.0.0/0": every address`}},
		{"operator token too short", "", map[string]string{"TESTFIRST_OPERATOR_TOKEN_FILE": empty}, []string{"operator_token_file " + empty + " holds 0 characters: write a token of at least 16 in it, e.g. openssl rand -hex 32"}},
		{"operator token missing", "", map[string]string{"TESTFIRST_OPERATOR_TOKEN_FILE": "/nonexistent/token"}, []string{"operator_token_file: open /nonexistent/token"}},
		{"unknown yaml key", "listn: :80\n", nil, []string{"field listn not found", "settings: listen"}},
		{"yaml type", "github_app_id: seven\n", nil, []string{"cannot unmarshal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, "testfirst.yml", tt.file)
			}
			_, err := LoadConfig(path, env(tt.env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestLoadConfigOperatorToken: the operator token is read from its file,
// trimmed, from the environment or the YAML file.
func TestLoadConfigOperatorToken(t *testing.T) {
	tok := writeFile(t, "operator-token", "  0123456789abcdef0123\n")
	c, err := LoadConfig("", env(map[string]string{"TESTFIRST_OPERATOR_TOKEN_FILE": tok}))
	if err != nil || string(c.OperatorToken) != "0123456789abcdef0123" {
		t.Errorf("from the environment: %q, %v", c.OperatorToken, err)
	}
	c, err = LoadConfig(writeFile(t, "testfirst.yml", "operator_token_file: "+tok+"\n"), env(nil))
	if err != nil || string(c.OperatorToken) != "0123456789abcdef0123" {
		t.Errorf("from the file: %q, %v", c.OperatorToken, err)
	}
	if c, err := LoadConfig("", env(nil)); err != nil || c.OperatorToken != nil {
		t.Errorf("unset: %q, %v; want none", c.OperatorToken, err)
	}
}

// TestLoadConfigGraderNeedsNoWebhookSecret: the grader role takes no
// webhook, so its app credentials come without the webhook secret (the
// chart mounts none into it); the other roles still need it.
func TestLoadConfigGraderNeedsNoWebhookSecret(t *testing.T) {
	key := writeFile(t, "app.pem", rsaKeyPEM(t))
	e := map[string]string{"TESTFIRST_GITHUB_APP_ID": "7", "TESTFIRST_GITHUB_PRIVATE_KEY_FILE": key,
		"TESTFIRST_DATABASE_URL": "postgres://testfirst@127.0.0.1:5432/testfirst", "TESTFIRST_ROLE": RoleGrader}
	if _, err := LoadConfig("", env(e)); err != nil {
		t.Errorf("grader role without a webhook secret: %v", err)
	}
	for _, role := range []string{RoleApp, RoleAll} {
		e["TESTFIRST_ROLE"] = role
		if _, err := LoadConfig("", env(e)); err == nil || !strings.Contains(err.Error(), "webhook_secret_file is not set") {
			t.Errorf("role %s without a webhook secret: %v", role, err)
		}
	}
}

// FuzzParseConfigYAML: any input gives a config or an error, never a
// panic, and a parsed config validates without panicking.
func FuzzParseConfigYAML(f *testing.F) {
	f.Add([]byte("listen: :8080\npublic_url: https://x\n"))
	f.Add([]byte("github_app_id: 12\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := DefaultConfig()
		if err := ParseConfigYAML(data, &c); err != nil {
			return
		}
		c.validate()
	})
}

// TestLoadConfigLogin: the OAuth client and the session key come from
// their files; half a client is refused.
func TestLoadConfigLogin(t *testing.T) {
	key := writeFile(t, "app.pem", rsaKeyPEM(t))
	secrets := writeFile(t, "secrets", "s\n")
	client := writeFile(t, "client-secret", "  cs-123\n")
	session := writeFile(t, "session", strings.Repeat("k", 40)+"\n")
	base := map[string]string{"TESTFIRST_GITHUB_APP_ID": "7", "TESTFIRST_GITHUB_PRIVATE_KEY_FILE": key, "TESTFIRST_WEBHOOK_SECRET_FILE": secrets}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := LoadConfig("", env(with("TESTFIRST_GITHUB_CLIENT_ID", "Iv23abc", "TESTFIRST_GITHUB_CLIENT_SECRET_FILE", client,
		"TESTFIRST_SESSION_KEY_FILE", session, "TESTFIRST_GITHUB_URL", "https://ghe.example.com/")))
	if err != nil {
		t.Fatal(err)
	}
	if c.ClientSecret != "cs-123" || string(c.SessionKey) != strings.Repeat("k", 40) || c.GitHubURL != "https://ghe.example.com/" || !c.HasLogin() {
		t.Errorf("config %+v", c)
	}
	if c, _ := LoadConfig("", env(base)); c.HasLogin() || c.WebURL() != DefaultGitHubURL {
		t.Errorf("without a client: HasLogin %v, web URL %q", c.HasLogin(), c.WebURL())
	}

	short := writeFile(t, "short", "tiny\n")
	tests := []struct {
		env  map[string]string
		want string
	}{
		{with("TESTFIRST_GITHUB_CLIENT_ID", "Iv23abc"), "github_client_secret_file is not"},
		{with("TESTFIRST_GITHUB_CLIENT_SECRET_FILE", client), "github_client_id is not"},
		{map[string]string{"TESTFIRST_GITHUB_CLIENT_ID": "Iv23abc", "TESTFIRST_GITHUB_CLIENT_SECRET_FILE": client}, "github_app_id is not"},
		{with("TESTFIRST_GITHUB_CLIENT_ID", "Iv23abc", "TESTFIRST_GITHUB_CLIENT_SECRET_FILE", writeFile(t, "empty", "\n")), "is empty"},
		{with("TESTFIRST_SESSION_KEY_FILE", short), "holds 4 bytes, want 32 or more"},
		{with("TESTFIRST_GITHUB_URL", "github.com"), `github_url "github.com"`},
	}
	for _, tt := range tests {
		if _, err := LoadConfig("", env(tt.env)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.env, err, tt.want)
		}
	}
}

// TestCardSessionKey: the key is made once, 0600, and read back after.
func TestCardSessionKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "var", "session-key")
	k1, err := cardSessionKey(DefaultConfig().SessionKey, path)
	if err != nil || len(k1) < minSessionKey {
		t.Fatalf("first key %q, %v", k1, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", fi.Mode(), err)
	}
	k2, err := cardSessionKey(DefaultConfig().SessionKey, path)
	if err != nil || string(k1) != string(k2) {
		t.Errorf("second key %q, %v; want the first", k2, err)
	}
	cfg := DefaultConfig()
	cfg.SessionKey = []byte(strings.Repeat("x", 32))
	if k, _ := cardSessionKey(cfg.SessionKey, path); string(k) != string(cfg.SessionKey) {
		t.Errorf("configured key not used: %q", k)
	}
}

// The agents' sections of the config file are package agent's: parsed
// and checked with the rest, and an unknown key in them is an error too.
func TestLoadConfigAgents(t *testing.T) {
	key := writeFile(t, "anthropic", "sk-test\n")
	dir := t.TempDir()
	file := writeFile(t, "testfirst.yml", `
model_apis:
  anthropic: {url: https://api.anthropic.com, key_file: `+key+`, header: x-api-key, vendor: anthropic}
harnesses:
  our-writer: {preset: command, command: ["/agent/run.sh"], files: `+dir+`, model_api: anthropic}
agents: {timeout: 20m, memory: 1GiB, cpus: 1, pids: 256, independence: refuse}
`)
	c, err := LoadConfig(file, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.Agents.Harness("our-writer")
	if err != nil || h.ModelAPI != "anthropic" || c.Agents.Independence != "refuse" || c.Agents.Limits.Timeout != 20*time.Minute {
		t.Errorf("agents = %+v, %v", c.Agents, err)
	}
	bad := writeFile(t, "bad.yml", "harnesses:\n  w: {preset: shell}\n")
	if _, err := LoadConfig(bad, env(nil)); err == nil || !strings.Contains(err.Error(), `harnesses.w.preset "shell": want command, claude-code or codex`) {
		t.Errorf("a bad preset: %v", err)
	}
	// A harness on E2B needs the account, and names it when it is there.
	onE2B := writeFile(t, "e2b.yml", "harnesses:\n  w: {preset: command, command: [/agent/run.sh], sandbox: e2b}\n")
	_, err = LoadConfig(onE2B, env(nil))
	for _, want := range []string{"e2b.api_key_file", "e2b.template", "e2b.egress_url", "e2b.egress_listen"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a harness on E2B without e2b settings: %v, want %s named", err, want)
		}
	}
	onE2B = writeFile(t, "e2b.yml", "harnesses:\n  w: {preset: command, command: [/agent/run.sh], sandbox: e2b}\n"+
		"e2b: {api_key_file: "+key+", template: testfirst-agent, egress_url: \"https://testfirst.example.com/egress\", egress_listen: \":8443\"}\n")
	if c, err := LoadConfig(onE2B, env(nil)); err != nil || !c.Agents.Harnesses["w"].OnE2B() || c.E2B.Template != "testfirst-agent" {
		t.Errorf("a harness on E2B: %+v %v", c.E2B, err)
	}
	if c, err := LoadConfig("", env(nil)); len(c.Agents.Harnesses) != 0 || c.Agents.Independence != "warn" {
		t.Errorf("without a file: %+v, %v", c.Agents, err)
	}
}

// TestPublicURLFollowsListen: with only the listen address set, the public
// URL (which serve prints and the registration uses) is where the service
// listens, not the default's port; a public URL that was set stays.
func TestPublicURLFollowsListen(t *testing.T) {
	for _, tt := range []struct{ public, listen, want string }{
		{DefaultPublicURL, ":9090", "http://localhost:9090"},
		{DefaultPublicURL, "0.0.0.0:9090", "http://localhost:9090"},
		{DefaultPublicURL, "[::]:9090", "http://localhost:9090"},
		{DefaultPublicURL, "127.0.0.2:9090", "http://127.0.0.2:9090"},
		{DefaultPublicURL, "[::1]:9090", "http://[::1]:9090"},
		{DefaultPublicURL, DefaultListen, DefaultPublicURL},
		{DefaultPublicURL, "127.0.0.1:0", DefaultPublicURL},
		{"https://testfirst.example", ":9090", "https://testfirst.example"},
	} {
		if got := publicURLOf(tt.public, tt.listen); got != tt.want {
			t.Errorf("publicURLOf(%q, %q) = %q, want %q", tt.public, tt.listen, got, tt.want)
		}
	}
	cfg, _ := LoadConfig("", func(k string) string { return map[string]string{"TESTFIRST_LISTEN": ":9191"}[k] })
	if cfg.PublicURL != "http://localhost:9191" {
		t.Errorf("with TESTFIRST_LISTEN=:9191 the public URL is %q", cfg.PublicURL)
	}
}
