package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/testfirst-app/testfirst/app"
)

// The release the Kubernetes tests install: charts/testfirst as a user
// installs it, into ChartNamespace.
const (
	ChartRelease   = "testfirst"
	ChartNamespace = "testfirst"
	// GraderAccount is the chart's grader service account.
	GraderAccount = "testfirst-grader"
)

var (
	kubeOnce    sync.Once
	kubeGrading *app.KubernetesGrading
	kubeErr     error
)

// KubeConfig is the cluster the Kubernetes tests use: TESTFIRST_KUBECONFIG
// (a kubeconfig of the cluster's admin), TESTFIRST_KUBE_IMAGE (the grader
// image, pinned by digest, as the node has it), TESTFIRST_KUBE_NAMESPACE
// (the sandbox namespace, testfirst-sandbox when empty) and
// TESTFIRST_KUBE_RUNTIME_CLASS. make test-kube brings such a cluster up on
// this machine (scripts/kube-local.sh) and sets them; ok is false when they
// are not set.
func KubeConfig() (cfg app.KubernetesSandboxConfig, ok bool) {
	cfg = app.KubernetesSandboxConfig{
		Kubeconfig:   os.Getenv("TESTFIRST_KUBECONFIG"),
		Image:        os.Getenv("TESTFIRST_KUBE_IMAGE"),
		Namespace:    os.Getenv("TESTFIRST_KUBE_NAMESPACE"),
		RuntimeClass: os.Getenv("TESTFIRST_KUBE_RUNTIME_CLASS"),
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "testfirst-sandbox"
	}
	return cfg, cfg.Kubeconfig != "" && cfg.Image != ""
}

// RequireKube returns the cluster's configuration, or skips t without one,
// unless TESTFIRST_REQUIRE_KUBE is set (make test-kube sets it): then t
// fails.
func RequireKube(t testing.TB) app.KubernetesSandboxConfig {
	t.Helper()
	cfg, ok := KubeConfig()
	if !ok {
		if os.Getenv("TESTFIRST_REQUIRE_KUBE") != "" {
			t.Fatal("a cluster is required (TESTFIRST_REQUIRE_KUBE is set) but TESTFIRST_KUBECONFIG or TESTFIRST_KUBE_IMAGE is not: run make test-kube")
		}
		t.Skip("no cluster: TESTFIRST_KUBECONFIG and TESTFIRST_KUBE_IMAGE are not set (make test-kube sets them)")
	}
	return cfg
}

// KubeGrading returns a grader whose sandboxes are pods of the cluster
// KubeConfig names, acting as the chart's grader service account: the
// chart is installed first (helm install through Helm's Go packages), so
// the grades run with the namespace, Role, NetworkPolicy and Pod Security
// level the chart gives, and no more rights than its Role grants.
func KubeGrading(t testing.TB) *app.KubernetesGrading {
	t.Helper()
	cfg := RequireKube(t)
	kubeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if kubeErr = InstallChart(ctx, cfg, t.Logf); kubeErr != nil {
			return
		}
		var grader string
		if grader, kubeErr = AccountKubeconfig(ctx, cfg.Kubeconfig, ChartNamespace, GraderAccount, cfg.Namespace); kubeErr != nil {
			return
		}
		cfg.Kubeconfig = grader
		kubeGrading, kubeErr = app.OpenKubernetesGrading(ctx, cfg)
	})
	if kubeErr != nil {
		t.Fatalf("the cluster of TESTFIRST_KUBECONFIG: %v", kubeErr)
	}
	return kubeGrading
}

// ChartValues are the values the tests install the chart with: what a
// user of this cluster would write. The Deployments have no replicas: the
// service runs beside the cluster here (its image would need a registry),
// and grades from there as the grader's service account.
func ChartValues(cfg app.KubernetesSandboxConfig) map[string]any {
	return map[string]any{
		"publicURL": "https://testfirst.example.com",
		"github":    map[string]any{"appID": 4242},
		"image":     map[string]any{"pullPolicy": "Never"},
		"store": map[string]any{
			"url":              "gs://testfirst-hidden/tests",
			"graderRecipients": "age15d855hxddsq6sp4n6m9dt968379mzkgd7aquhyu05xw7ru4q6vpswdeay4",
			"cardRecipients":   "age1m8jfdslzsx8p0wxfakajd5ddcgs52mkhusekxvnpn2x8lp8gk5hqy30j7h",
		},
		"app":       map[string]any{"replicas": 0},
		"grader":    map[string]any{"replicas": 0},
		"migration": map[string]any{"enabled": false},
		"sandbox": map[string]any{
			"namespace":        cfg.Namespace,
			"image":            cfg.Image,
			"runtimeClassName": cfg.RuntimeClass,
		},
	}
}

// InstallChart installs charts/testfirst into ChartNamespace with
// ChartValues, unless the release is there already.
func InstallChart(ctx context.Context, cfg app.KubernetesSandboxConfig, logf func(string, ...any)) error {
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cfg.Kubeconfig
	ns := ChartNamespace
	flags.Namespace = &ns
	var ac action.Configuration
	if err := ac.Init(flags, ChartNamespace, "secret", func(string, ...any) {}); err != nil {
		return fmt.Errorf("helm: %w", err)
	}
	if _, err := action.NewGet(&ac).Run(ChartRelease); err == nil {
		return nil
	}
	chart, err := loader.Load(filepath.Join(RepoRoot(), "charts", "testfirst"))
	if err != nil {
		return err
	}
	install := action.NewInstall(&ac)
	install.ReleaseName = ChartRelease
	install.Namespace = ChartNamespace
	install.CreateNamespace = true
	install.Timeout = 2 * time.Minute
	rel, err := install.RunWithContext(ctx, chart, ChartValues(cfg))
	if err != nil {
		return fmt.Errorf("helm install %s: %w", ChartRelease, err)
	}
	logf("helm install: release %s, revision %d, %s", rel.Name, rel.Version, rel.Info.Status)
	return nil
}

// AccountKubeconfig writes a kubeconfig for the service account
// namespace/name, with a token the admin kubeconfig asks for, whose
// context's namespace is contextNS, and returns its path.
func AccountKubeconfig(ctx context.Context, admin, namespace, name, contextNS string) (string, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", admin)
	if err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return "", err
	}
	var tok *authv1.TokenRequest
	for i := 0; ; i++ {
		exp := int64(3600)
		tok, err = cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if err == nil || !apierrors.IsNotFound(err) || i > 20 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return "", fmt.Errorf("token of %s/%s: %w", namespace, name, err)
	}
	kc, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return "", err
	}
	cur := kc.Contexts[kc.CurrentContext]
	if cur == nil {
		return "", fmt.Errorf("%s has no current context", admin)
	}
	cluster := kc.Clusters[cur.Cluster]
	out := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, certificate-authority: %q}
users:
- name: %s
  user: {token: %q}
contexts:
- name: local
  context: {cluster: local, user: %s, namespace: %s}
current-context: local
`, cluster.Server, cluster.CertificateAuthority, name, tok.Status.Token, name, contextNS)
	f, err := os.CreateTemp("", "testfirst-"+name+"-*.kubeconfig")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.WriteString(out); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}
