package app

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Defaults of the embedded, one-machine setup.
const (
	DefaultListen       = ":8080"
	DefaultPublicURL    = "http://localhost:8080"
	DefaultDatabaseURL  = "sqlite://./var/testfirst.db"
	DefaultGitHubAPIURL = "https://api.github.com/"
	DefaultGitHubURL    = "https://github.com/"
	// DefaultSessionKeyFile is where serve keeps the key that signs
	// session cookies when TESTFIRST_SESSION_KEY_FILE is not set: created
	// on first use, 0600. Replicas must share one key: set the variable.
	DefaultSessionKeyFile = "var/session-key"
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
	// GitHubURL is GitHub's web address, where people sign in.
	GitHubURL string `yaml:"github_url"`
	// GitHubAppID and GitHubPrivateKeyFile are the app's credentials; both
	// or neither. Without them serve walks an admin through registering
	// the app.
	GitHubAppID          int64  `yaml:"github_app_id"`
	GitHubPrivateKeyFile string `yaml:"github_private_key_file"`
	// WebhookSecretFile holds one secret per line: every one verifies a
	// delivery, so secrets can be rotated.
	WebhookSecretFile string `yaml:"webhook_secret_file"`
	// GitHubClientID and GitHubClientSecretFile are the app's OAuth client
	// (App settings, General); both or neither. With them serve shows the
	// approval card, signed in with GitHub.
	GitHubClientID         string `yaml:"github_client_id"`
	GitHubClientSecretFile string `yaml:"github_client_secret_file"`
	// SessionKeyFile holds the key that signs session cookies (32 bytes or
	// more); DefaultSessionKeyFile, created on first use, when empty.
	SessionKeyFile string `yaml:"session_key_file"`

	// Read from the files above by Load.
	PrivateKey     []byte   `yaml:"-"`
	WebhookSecrets [][]byte `yaml:"-"`
	ClientSecret   string   `yaml:"-"`
	SessionKey     []byte   `yaml:"-"`
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
	{"TESTFIRST_GITHUB_CLIENT_ID", func(c *Config, v string) error { c.GitHubClientID = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_GITHUB_CLIENT_SECRET_FILE", func(c *Config, v string) error { c.GitHubClientSecretFile = v; return nil }},
	{"TESTFIRST_SESSION_KEY_FILE", func(c *Config, v string) error { c.SessionKeyFile = v; return nil }},
}

// DefaultConfig is the configuration with nothing set.
func DefaultConfig() Config {
	return Config{
		Listen:       DefaultListen,
		PublicURL:    DefaultPublicURL,
		DatabaseURL:  DefaultDatabaseURL,
		StoreURL:     DefaultStoreURL,
		GitHubAPIURL: DefaultGitHubAPIURL,
		GitHubURL:    DefaultGitHubURL,
	}
}

// LoadConfig builds the configuration from the defaults, the YAML file
// (path, or $TESTFIRST_CONFIG; none when both are empty) and the
// environment, reads the secret files and validates everything. Every
// problem is reported at once, each saying how to fix it.
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
	for _, k := range envKeys {
		if v, ok := lookup(getenv, k.env); ok {
			if err := k.set(&c, v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, c.validate()...)
	errs = append(errs, c.readSecrets()...)
	return c, errors.Join(errs...)
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
		return fmt.Errorf("%w (settings: listen, public_url, database_url, store_url, github_api_url, github_url, github_app_id, github_private_key_file, webhook_secret_file, github_client_id, github_client_secret_file, session_key_file)", err)
	}
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
	if u, err := url.Parse(c.GitHubURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("github_url %q: want GitHub's absolute web URL, e.g. https://github.com/ or https://ghe.example.com/", c.GitHubURL)
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
	if c.GitHubAppID > 0 && c.WebhookSecretFile == "" {
		bad("webhook_secret_file is not set: with app credentials, set TESTFIRST_WEBHOOK_SECRET_FILE to a file holding the app's webhook secret")
	}
	return errs
}

// HasApp reports whether app credentials are configured.
func (c *Config) HasApp() bool { return c.GitHubAppID > 0 }

// HasLogin reports whether the app's OAuth client is configured: then
// serve shows the approval card.
func (c *Config) HasLogin() bool { return c.GitHubClientID != "" && c.ClientSecret != "" }

// readSecrets reads the private key and the webhook secrets.
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

// checkRSAKey checks that key is a PEM RSA private key, as GitHub issues.
func checkRSAKey(key []byte) error {
	block, _ := pem.Decode(key)
	if block == nil {
		return errors.New("not a PEM file: download the private key from the app's settings")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("not an RSA private key: %w", err)
	}
	if _, ok := k.(interface{ Size() int }); !ok {
		return errors.New("not an RSA private key")
	}
	return nil
}
