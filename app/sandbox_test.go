package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestLoadConfigSandbox(t *testing.T) {
	file := writeFile(t, "config.yml", `sandbox:
  provider: kubernetes
  kubernetes:
    namespace: file-ns
    runtime_class: gvisor
    image: registry.example/testfirst-grader@`+testDigest+`
`)
	c, err := LoadConfig(file, env(map[string]string{"TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "env-ns", "TESTFIRST_SANDBOX_KUBERNETES_KUBECONFIG": "/etc/kube/config"}))
	if err != nil {
		t.Fatal(err)
	}
	want := SandboxConfig{Provider: ProviderKubernetes, Kubernetes: KubernetesSandboxConfig{Namespace: "env-ns", RuntimeClass: "gvisor",
		Kubeconfig: "/etc/kube/config", Image: "registry.example/testfirst-grader@" + testDigest}}
	if c.Sandbox != want {
		t.Errorf("sandbox = %+v, want %+v", c.Sandbox, want)
	}
	if c, err := LoadConfig("", env(nil)); err != nil || c.Sandbox.Provider != "" {
		t.Errorf("default provider %q, %v: want empty (docker)", c.Sandbox.Provider, err)
	}
}

func TestLoadConfigSandboxErrors(t *testing.T) {
	image := "registry.example/testfirst-grader@" + testDigest
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "podman"}, `sandbox.provider "podman": want docker or kubernetes`},
		{map[string]string{"TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "ns"}, "sandbox.kubernetes is set but sandbox.provider is not kubernetes"},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE": image}, "sandbox.kubernetes: sandbox namespace is not set"},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "Bad_NS", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE": image}, `sandbox namespace "Bad_NS" is not a Kubernetes namespace name`},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "ns", "TESTFIRST_SANDBOX_KUBERNETES_RUNTIME_CLASS": "g visor", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE": image}, `sandbox runtime class "g visor"`},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "ns"}, "sandbox.kubernetes.image is not set"},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "ns", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE": image, "TESTFIRST_SANDBOX_RUNTIME": "runsc"}, `sandbox.runtime "runsc" is the Docker provider's: on kubernetes set sandbox.kubernetes.runtime_class`},
		{map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": "ns", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE": "registry.example/testfirst-grader:latest"}, "want a reference pinned by digest"},
	} {
		_, err := LoadConfig("", env(tt.env))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadConfig(%v) = %v, want it to contain %q", tt.env, err, tt.want)
		}
	}
	file := writeFile(t, "config.yml", "sandbox:\n  kubernetes:\n    name_space: x\n")
	if _, err := LoadConfig(file, env(nil)); err == nil || !strings.Contains(err.Error(), "name_space") {
		t.Errorf("misspelt key: %v", err)
	}
}

// TestOpenKubernetesGrading proves the credentials against an API server
// that answers the list of the sandbox namespace's pods, or refuses it.
func TestOpenKubernetesGrading(t *testing.T) {
	refuse := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/namespaces/sandboxes/pods" || r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("unexpected request %s %s auth %q", r.Method, r.URL, r.Header.Get("Authorization"))
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		if refuse {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"pods is forbidden"}`)
			return
		}
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
	}))
	defer srv.Close()
	kc := writeFile(t, "kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: tok}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`)
	cfg := KubernetesSandboxConfig{Namespace: "sandboxes", RuntimeClass: "gvisor", Kubeconfig: kc, Image: "registry.example/testfirst-grader@" + testDigest}
	g, err := OpenKubernetesGrading(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.ImageID != testDigest || g.Image != cfg.Image || g.Grader == nil {
		t.Errorf("grading %+v", g)
	}
	refuse = true
	if _, err := OpenKubernetesGrading(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "needs pods and pods/attach") {
		t.Errorf("refused list: %v", err)
	}
	cfg.Image = "registry.example/testfirst-grader:latest"
	if _, err := OpenKubernetesGrading(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "pinned by digest") {
		t.Errorf("unpinned image: %v", err)
	}
}
