package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/handlers"
)

// DefaultGitHubAppFile is where serve stores the credentials of an app
// registered from its setup page, relative to the working directory.
const DefaultGitHubAppFile = "var/github-app.yml"

// Files written beside the app file, holding its secrets.
const (
	appKeyFileName        = "github-app.pem"
	webhookSecretFileName = "github-webhook-secret"
	clientSecretFileName  = "github-client-secret"
)

// appFile is what an app file holds: the registered app's id and client id,
// and the files holding its secrets. Relative paths are relative to the app
// file's directory.
type appFile struct {
	GitHubAppID            int64  `yaml:"github_app_id"`
	GitHubPrivateKeyFile   string `yaml:"github_private_key_file"`
	WebhookSecretFile      string `yaml:"webhook_secret_file"`
	GitHubClientID         string `yaml:"github_client_id,omitempty"`
	GitHubClientSecretFile string `yaml:"github_client_secret_file,omitempty"`
}

// CredentialFiles stores a registered app's credentials as an app file
// and, beside it, the private key, webhook secret and client secret, each
// 0600 in a 0700 directory. Nothing is ever overwritten: every file is
// written under a temporary name and linked into place, which fails if the
// name exists, and the app file comes last so a start-up never sees half a
// registration.
type CredentialFiles struct {
	path string
	now  func() time.Time
}

var _ handlers.CredentialStore = (*CredentialFiles)(nil)

// NewCredentialFiles stores credentials in the app file at path and beside
// it.
func NewCredentialFiles(path string) *CredentialFiles {
	return &CredentialFiles{path: path, now: time.Now}
}

// Where is the app file's path.
func (f *CredentialFiles) Where() string { return f.path }

func (f *CredentialFiles) paths() []string {
	dir := filepath.Dir(f.path)
	return []string{
		filepath.Join(dir, appKeyFileName),
		filepath.Join(dir, webhookSecretFileName),
		filepath.Join(dir, clientSecretFileName),
		f.path,
	}
}

// Check returns an error naming every credential file that exists already.
func (f *CredentialFiles) Check() error {
	var exist []string
	for _, p := range f.paths() {
		_, err := os.Lstat(p)
		switch {
		case err == nil:
			exist = append(exist, p)
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("check for stored credentials: %w", err)
		}
	}
	switch len(exist) {
	case 0:
	case 1:
		return fmt.Errorf("%s already exists: testfirst never overwrites stored credentials; move it away to register a new app", exist[0])
	default:
		return fmt.Errorf("%s already exist: testfirst never overwrites stored credentials; move them away to register a new app", strings.Join(exist, ", "))
	}
	return nil
}

// Save writes reg's credentials. On error it removes what it wrote.
func (f *CredentialFiles) Save(reg github.AppRegistration) error {
	if reg.ID <= 0 {
		return fmt.Errorf("store app credentials: app id %d: want GitHub's positive id", reg.ID)
	}
	if err := checkRSAKey(reg.PEM); err != nil {
		return fmt.Errorf("store app credentials: the private key GitHub sent: %w", err)
	}
	if strings.TrimSpace(reg.WebhookSecret) == "" {
		return errors.New("store app credentials: GitHub sent no webhook secret")
	}
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store app credentials: %w", err)
	}
	if err := f.Check(); err != nil {
		return err
	}
	paths := f.paths()
	doc := appFile{GitHubAppID: reg.ID, GitHubPrivateKeyFile: appKeyFileName, WebhookSecretFile: webhookSecretFileName}
	files := []newFile{
		{paths[0], reg.PEM},
		{paths[1], []byte(reg.WebhookSecret + "\n")},
	}
	if reg.ClientSecret != "" {
		doc.GitHubClientID, doc.GitHubClientSecretFile = reg.ClientID, clientSecretFileName
		files = append(files, newFile{paths[2], []byte(reg.ClientSecret + "\n")})
	}
	body, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("store app credentials: %w", err)
	}
	header := fmt.Sprintf("# The GitHub App %s (%s), registered by testfirst serve on %s.\n# Its secrets are in the files named here, beside this one: never commit them.\n",
		reg.Name, reg.HTMLURL, f.now().UTC().Format(time.RFC3339))
	files = append(files, newFile{paths[3], append([]byte(header), body...)})

	var written []string
	for _, file := range files {
		if err := writeNew(file.path, file.data); err != nil {
			for _, p := range written {
				os.Remove(p)
			}
			return fmt.Errorf("store app credentials: %w", err)
		}
		written = append(written, file.path)
	}
	return syncDir(dir)
}

// newFile is a file to create.
type newFile struct {
	path string
	data []byte
}

// writeNew writes data to a new file at path, mode 0600, atomically: a
// reader sees the whole file or none, and an existing file is an error.
func writeNew(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists: testfirst never overwrites stored credentials; move it away to register a new app", path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// syncDir makes the new names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("store app credentials: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("store app credentials: sync %s: %w", dir, err)
	}
	return nil
}
