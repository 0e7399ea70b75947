package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/testfirst-app/testfirst/grader"
	"github.com/testfirst-app/testfirst/jobs"
	"github.com/testfirst-app/testfirst/sandbox/egress"
	"github.com/testfirst-app/testfirst/sandbox/kubernetes"
)

// Sandbox providers: where sandboxes run.
const (
	// ProviderDocker runs sandboxes on the Docker engine DOCKER_HOST names
	// (the default).
	ProviderDocker = "docker"
	// ProviderKubernetes runs sandboxes as pods in a cluster's sandbox
	// namespace.
	ProviderKubernetes = "kubernetes"
)

// SandboxConfig says where sandboxes run: the YAML key sandbox.
type SandboxConfig struct {
	// Provider is ProviderDocker (also when empty) or ProviderKubernetes.
	Provider string `yaml:"provider"`
	// Runtime is the Docker engine's OCI runtime every grade's sandboxes
	// run under, by the name the engine has for it (runsc: gVisor, see
	// scripts/ensure-deps.sh); the engine's default when empty. Checked
	// against the engine when grading starts. The Kubernetes provider's
	// is Kubernetes.RuntimeClass.
	Runtime string `yaml:"runtime"`
	// Kubernetes configures ProviderKubernetes.
	Kubernetes KubernetesSandboxConfig `yaml:"kubernetes"`
}

// KubernetesSandboxConfig is the Kubernetes provider's configuration: the
// YAML key sandbox.kubernetes.
type KubernetesSandboxConfig struct {
	// Namespace is the namespace sandbox pods run in.
	Namespace string `yaml:"namespace"`
	// RuntimeClass is their runtimeClassName (gvisor on GKE Sandbox);
	// empty is the cluster's default runtime.
	RuntimeClass string `yaml:"runtime_class"`
	// Kubeconfig is a kubeconfig file; empty is the in-cluster service
	// account of the pod testfirst runs in.
	Kubeconfig string `yaml:"kubeconfig"`
	// Image is the grader image the pods run, pinned by digest
	// (registry.example/testfirst-grader@sha256:…): the cluster pulls it
	// from a registry, as a cluster builds no images, and the digest is
	// what every grade reports. Build and push it from testfirst image
	// build's output with the wrapper of the same release.
	Image string `yaml:"image"`
}

// sandboxEnvKeys are the sandbox's settings in the environment.
var sandboxEnvKeys = []struct {
	env string
	set func(*Config, string) error
}{
	{"TESTFIRST_SANDBOX_PROVIDER", func(c *Config, v string) error { c.Sandbox.Provider = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE", func(c *Config, v string) error { c.Sandbox.Kubernetes.Namespace = strings.TrimSpace(v); return nil }},
	{"TESTFIRST_SANDBOX_KUBERNETES_RUNTIME_CLASS", func(c *Config, v string) error {
		c.Sandbox.Kubernetes.RuntimeClass = strings.TrimSpace(v)
		return nil
	}},
	{"TESTFIRST_SANDBOX_KUBERNETES_KUBECONFIG", func(c *Config, v string) error { c.Sandbox.Kubernetes.Kubeconfig = v; return nil }},
	{"TESTFIRST_SANDBOX_KUBERNETES_IMAGE", func(c *Config, v string) error { c.Sandbox.Kubernetes.Image = strings.TrimSpace(v); return nil }},
}

// pinnedImage is an image reference pinned by its digest.
var pinnedImage = regexp.MustCompile(`^[a-z0-9][a-z0-9._:/-]*@sha256:[0-9a-f]{64}$`)

// validate checks the sandbox settings.
func (s SandboxConfig) validate() []error {
	var errs []error
	k := s.Kubernetes
	switch s.Provider {
	case "", ProviderDocker:
		if k != (KubernetesSandboxConfig{}) {
			errs = append(errs, errors.New("sandbox.kubernetes is set but sandbox.provider is not kubernetes: set sandbox.provider: kubernetes (TESTFIRST_SANDBOX_PROVIDER=kubernetes), or drop the kubernetes settings"))
		}
	case ProviderKubernetes:
		if s.Runtime != "" {
			errs = append(errs, fmt.Errorf("sandbox.runtime %q is the Docker provider's: on kubernetes set sandbox.kubernetes.runtime_class (TESTFIRST_SANDBOX_KUBERNETES_RUNTIME_CLASS) instead", s.Runtime))
		}
		if err := k.engineConfig().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("sandbox.kubernetes: %w", err))
		}
		if k.Image == "" {
			errs = append(errs, errors.New("sandbox.kubernetes.image is not set: name the grader image the cluster pulls, pinned by digest (registry.example/testfirst-grader@sha256:…)"))
		} else if !pinnedImage.MatchString(k.Image) {
			errs = append(errs, fmt.Errorf("sandbox.kubernetes.image %q: want a reference pinned by digest, registry.example/testfirst-grader@sha256:<64 hex digits>, so every grade names the image it ran in", k.Image))
		}
	default:
		errs = append(errs, fmt.Errorf("sandbox.provider %q: want docker or kubernetes", s.Provider))
	}
	return errs
}

func (k KubernetesSandboxConfig) engineConfig() kubernetes.Config {
	return kubernetes.Config{Namespace: k.Namespace, RuntimeClass: k.RuntimeClass, Kubeconfig: k.Kubeconfig}
}

// KubernetesGrading is a grader whose sandboxes are pods.
type KubernetesGrading struct {
	Grader  *grader.Grader
	Engine  *kubernetes.Engine
	Image   string
	ImageID string
}

// OpenKubernetesGrading connects to the cluster cfg names, proves that the
// credentials may list the sandbox namespace's pods, and returns a grader
// that runs cfg.Image there. Dependency environments are not available on
// this provider: they build images, and a cluster builds none.
func OpenKubernetesGrading(ctx context.Context, cfg KubernetesSandboxConfig) (*KubernetesGrading, error) {
	if errs := (SandboxConfig{Provider: ProviderKubernetes, Kubernetes: cfg}).validate(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	engine, err := kubernetes.New(cfg.engineConfig())
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := engine.Check(cctx); err != nil {
		return nil, err
	}
	id := cfg.Image[strings.LastIndex(cfg.Image, "@")+1:]
	return &KubernetesGrading{Grader: grader.New(engine, cfg.Image, id), Engine: engine, Image: cfg.Image, ImageID: id}, nil
}

// The Kubernetes adapter is what the grader runs its sandboxes on, and what
// the sweeper and a rescued job clear, as the Docker adapter is.
var (
	_ grader.Sandbox = (*kubernetes.Engine)(nil)
	_ jobs.Sandboxes = (*kubernetes.Engine)(nil)
)

// sealedGrading is the grader of a service, on the provider its
// configuration names, with what the sweeper and a rescued job clear.
type sealedGrading struct {
	Grader    *grader.Grader
	Sandboxes jobs.Sandboxes
	// Docker is the Docker provider's grading (its engine, image and
	// dependency environments); nil on Kubernetes.
	Docker *Grading
	Close  func()
}

// openSealedGrading opens the grader on svc's sandbox provider: the Docker
// engine with its dependency environments and egress proxies, or the
// cluster's sandbox namespace.
func openSealedGrading(ctx context.Context, svc Config, log *slog.Logger) (*sealedGrading, error) {
	if svc.Sandbox.Provider == ProviderKubernetes {
		kg, err := OpenKubernetesGrading(ctx, svc.Sandbox.Kubernetes)
		if err != nil {
			return nil, err
		}
		log.InfoContext(ctx, "sandbox provider", "provider", ProviderKubernetes, "namespace", svc.Sandbox.Kubernetes.Namespace,
			"runtime_class", svc.Sandbox.Kubernetes.RuntimeClass, "image", kg.Image)
		return &sealedGrading{Grader: kg.Grader, Sandboxes: kg.Engine, Close: func() {}}, nil
	}
	g, err := OpenGrading(ctx, GradingConfig{Progress: io.Discard, Environments: true, PackageIndex: svc.PackageIndex, EgressDir: svc.EgressDir, Runtime: svc.Sandbox.Runtime,
		EgressPeerUIDs: svc.EgressPeerUIDs, EgressInternal: svc.EgressInternal,
		EgressLog: func(e egress.Entry) {
			log.InfoContext(ctx, "egress", "host", e.Host, "method", e.Method, "path", e.Path, "status", e.Status, "bytes", e.Bytes, "denied", e.Denied)
		}})
	if err != nil {
		return nil, err
	}
	return &sealedGrading{Grader: g.Grader, Sandboxes: g.Docker, Docker: g, Close: func() {
		if err := g.Close(); err != nil {
			log.WarnContext(ctx, "stop egress proxies", "err", err)
		}
	}}, nil
}
