package test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// dockerCLI runs the docker command line, as an operator building the
// image would.
type dockerCLI struct {
	path string
}

// newDockerCLI finds the docker command and an engine that answers; the
// test is skipped without them unless Docker is required.
func newDockerCLI(t *testing.T) *dockerCLI {
	t.Helper()
	testenv.Docker(t)
	p, err := exec.LookPath("docker")
	if err != nil {
		testenv.Unavailable(t, fmt.Errorf("docker command line: %w", err))
	}
	return &dockerCLI{path: p}
}

// run runs docker with args and stdin, and returns its stdout and stderr.
func (d *dockerCLI) run(ctx context.Context, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, d.path, args...)
	cmd.Stdin = stdin
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err = cmd.Run()
	if err != nil {
		err = fmt.Errorf("docker %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), err
}

// must runs docker with args and returns its trimmed stdout, failing t
// with the output when docker fails.
func (d *dockerCLI) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := d.run(context.Background(), nil, args...)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, errOut)
	}
	return strings.TrimSpace(out)
}

// exists reports whether the engine has the image ref.
func (d *dockerCLI) exists(ref string) bool {
	_, _, err := d.run(context.Background(), nil, "image", "inspect", ref)
	return err == nil
}

// caBundle is where Debian keeps the CA certificates; the golang images
// have it, so the local stand-in gets the host's.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// goBuilderName names the local stand-in for golang:1.26-bookworm.
const goBuilderName = "testfirst-gobuilder"

// goBuilderDockerfile makes the stand-in: the grader's Debian base, the
// host's Go toolchain in /usr/local/go and CA certificates, as in the
// golang images. The vendored dependencies are compiled once where and how
// the Dockerfile's build stage compiles them (/src, CGO_ENABLED=0,
// -trimpath), so each test build finds them in the build cache and compiles
// only testfirst's own packages.
const goBuilderDockerfile = `FROM %s
COPY go /usr/local/go
COPY ca-certificates.crt ` + caBundle + `
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local GOPATH=/go
COPY src /src
RUN cd /src && CGO_ENABLED=0 go build -trimpath $(go list -e -f '{{if and .GoFiles (not .Error) (not .DepsErrors)}}{{.ImportPath}}{{end}}' $(grep -v '^#' vendor/modules.txt)) && rm -rf /src
`

// goEnv returns the values of go env for names.
func goEnv(t *testing.T, names ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// goBuilderImage returns the local Go image for base (an image of Debian
// bookworm) and the module vendored in srcDir (go.mod, go.sum, vendor/),
// building it when the engine does not have it. Its tag is a hash of its
// inputs: the base image's id, the Go version, the CA bundle and the
// dependencies; reruns find it.
func goBuilderImage(t *testing.T, d *dockerCLI, base, srcDir string) string {
	t.Helper()
	env := goEnv(t, "GOROOT", "GOVERSION", "GOARCH")
	goroot, err := filepath.EvalSymlinks(env[0])
	if err != nil {
		t.Fatalf("GOROOT: %v", err)
	}
	certs, err := os.ReadFile(caBundle)
	if err != nil {
		t.Fatalf("CA certificates for the Go image: %v: install Debian's ca-certificates", err)
	}
	dockerfile := fmt.Sprintf(goBuilderDockerfile, base)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", dockerfile, d.must(t, "image", "inspect", "-f", "{{.Id}}", base), env[1], env[2])
	h.Write(certs)
	for _, f := range []string{"go.mod", "go.sum", "vendor/modules.txt"} {
		data, err := os.ReadFile(filepath.Join(srcDir, f))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	ref := goBuilderName + ":" + hex.EncodeToString(h.Sum(nil))[:16]
	if d.exists(ref) {
		return ref
	}

	began := time.Now()
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeBuilderContext(pw, dockerfile, certs, goroot, srcDir))
	}()
	out, errOut, err := d.run(context.Background(), pr, "build", "-t", ref, "-")
	pr.CloseWithError(errors.New("docker build ended"))
	if err != nil {
		t.Fatalf("build the local Go image %s: %v\n%s", ref, err, tail(out+errOut, 40))
	}
	t.Logf("built the local Go image %s (Go %s) in %s", ref, env[1], time.Since(began).Round(time.Second))
	return ref
}

// writeBuilderContext writes the Go image's build context to w as a tar
// stream: the Dockerfile, the CA bundle, GOROOT as go/, and go.mod, go.sum
// and vendor/ from srcDir as src/.
func writeBuilderContext(w io.Writer, dockerfile string, certs []byte, goroot, srcDir string) error {
	tw := tar.NewWriter(w)
	for name, data := range map[string][]byte{"Dockerfile": []byte(dockerfile), "ca-certificates.crt": certs} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := addTree(tw, goroot, "go"); err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "go.sum", "vendor"} {
		if err := addTree(tw, filepath.Join(srcDir, f), "src/"+f); err != nil {
			return err
		}
	}
	return tw.Close()
}

// addTree adds the file or directory tree at src to tw under name.
func addTree(tw *tar.Writer, src, name string) error {
	return filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return fmt.Errorf("add %s: %w", path, err)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(filepath.Join(name, rel))
		if e.IsDir() {
			hdr.Name += "/"
		}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
}

// dockerContext lays out in a temporary directory what `docker build .`
// would see in a checkout, with the dependencies vendored so that nothing
// is downloaded: the repository's files that git tracks or would track
// (ignored ones stay out, as .dockerignore leaves them out) and the output
// of go mod vendor.
func dockerContext(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot()
	dir := t.TempDir()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the repository's files (git ls-files): %v", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" || strings.HasPrefix(rel, "vendor/") {
			continue
		}
		if err := copyEntry(filepath.Join(root, rel), filepath.Join(dir, rel)); errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in git
		} else if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "mod", "vendor", "-o", filepath.Join(dir, "vendor"))
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod vendor: %v\n%s", err, out)
	}
	return dir
}

// copyEntry copies the file or symbolic link at src to dst, keeping its
// mode.
func copyEntry(src, dst string) error {
	info, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		link, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(link, dst)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}

// buildStageTop finds, in the legacy builder's output, the image the stage
// before `FROM scratch` ended with: the build stage, whose layers the final
// image does not keep.
func buildStageTop(output string) string {
	layer := regexp.MustCompile(`^---> ([0-9a-f]{12,})$`)
	last := ""
	for _, line := range strings.Split(output, "\n") {
		if m := layer.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			last = m[1]
		}
		if strings.HasPrefix(line, "Step ") && strings.HasSuffix(strings.TrimSpace(line), ": FROM scratch") {
			return last
		}
	}
	return ""
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
