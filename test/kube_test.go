package test

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/testfirst-app/testfirst/sandbox"

	"github.com/testfirst-app/testfirst/test/testenv"
)

// kubeAttacks are the attacks graded in pods as well as on Docker: those
// that test the sandbox itself (its limits, its network, its processes,
// its files) more than the grader's reading of a report.
var kubeAttacks = []string{
	"fork-bomb", "memory-bomb", "infinite-loop", "stdout-flood", "network-dns", "kill-wrapper",
	"daemon-child", "symlink-proc1-root", "env-credential-dump", "print-hidden-tests", "rewrite-hidden",
	"pytest-exit-zero",
}

// TestKubernetesGrades grades the sample's cases and kubeAttacks in pods
// of a real cluster, through the Kubernetes provider, and holds each to
// the verdict its case.json gives it on Docker. make test-kube brings the
// cluster up on this machine (scripts/kube-local.sh) and runs it.
func TestKubernetesGrades(t *testing.T) {
	g := testenv.KubeGrading(t)
	dirs := caseDirs(t, "cases")
	for _, name := range kubeAttacks {
		dirs = append(dirs, filepath.Join(sampleDir, "attacks", name))
	}
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			c, rep := gradeCaseOn(t, g.Grader, dir)
			checkExpect(t, c, rep)
			if rep.Image != g.ImageID {
				t.Errorf("the report names image %s; the pods ran %s", rep.Image, g.ImageID)
			}
			t.Logf("%s -> %s (%s); trust %s, runtime %s, %d/%d passed", name, rep.Verdict, strings.Join(rep.Reasons, "; "),
				rep.Trust, rep.Runtime, rep.Counts.Passed, rep.Counts.Total)
		})
	}
	t.Cleanup(func() {
		// Each run deletes its pod with a grace of 1 s; the kubelet takes a
		// few seconds more to see it gone.
		var n int
		var err error
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
			if n, err = g.Engine.Running(context.Background()); err == nil && n == 0 {
				return
			}
		}
		t.Errorf("sandbox pods left running a minute after the grades: %d %v", n, err)
	})
}

// listenerScript listens on 8080 for 40 s, connects to itself once to
// show that it was listening, and prints how many connections it took.
const listenerScript = `
import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen(8)
s.settimeout(0.5)
try:
    c = socket.create_connection(("127.0.0.1", 8080), timeout=2)
    c.close()
    selfok = True
except OSError:
    selfok = False
n, end = 0, time.time() + 40
while time.time() < end:
    try:
        conn, _ = s.accept()
        n += 1
        conn.close()
    except socket.timeout:
        pass
print("self=%s connections=%d" % (selfok, n))
`

// probeScript tries each address:port of its arguments and prints one line
// each: "open" or what refused it.
const probeScript = `
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
        print(target, "open")
    except OSError as e:
        print(target, type(e).__name__, e)
`

// TestKubernetesSandboxReachesNothing: a sandbox pod tries the API server
// (its service address and the node's), the kubelet, and another sandbox
// pod that listens; each gets nothing, while the listener shows it was
// listening. Only the cluster's own pod, service and node addresses are
// tried.
func TestKubernetesSandboxReachesNothing(t *testing.T) {
	g := testenv.KubeGrading(t)
	cfg, _ := testenv.KubeConfig()
	cs := kubeClient(t, cfg.Kubeconfig)
	ctx := t.Context()
	lim := sandbox.Limits{Memory: 128 << 20, NanoCPUs: 5e8, Pids: 64, RepoSize: 8 << 20, HiddenSize: 4 << 20, TmpSize: 8 << 20}

	listened := make(chan sandbox.Result, 1)
	go func() {
		res, err := g.Engine.Run(context.Background(), sandbox.Spec{Image: g.Image, Entrypoint: []string{"python3", "-c", listenerScript},
			Input: strings.NewReader(""), Timeout: 90 * time.Second, Limits: lim, UIDSplit: true,
			Labels: map[string]string{"app.testfirst.probe": "listener"}, StdoutLimit: 1 << 16, StderrLimit: 1 << 16})
		if err != nil {
			t.Errorf("listener: %v", err)
		}
		listened <- res
	}()
	var podIP string
	deadline := time.Now().Add(60 * time.Second)
	for podIP == "" && time.Now().Before(deadline) {
		pods, err := cs.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.testfirst.probe=listener"})
		if err == nil && len(pods.Items) == 1 && pods.Items[0].Status.Phase == corev1.PodRunning && pods.Items[0].DeletionTimestamp == nil {
			podIP = pods.Items[0].Status.PodIP
		}
		time.Sleep(500 * time.Millisecond)
	}
	if podIP == "" {
		t.Fatal("the listening sandbox pod did not run within 60 s")
	}
	time.Sleep(2 * time.Second)
	targets := []string{podIP + ":8080", "10.0.0.1:443"}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if ip := net.ParseIP(a.Address); ip != nil {
				// The kubelet's and the API server's ports (scripts/kube-local.sh)
				// and the usual ones.
				for _, port := range []string{"20250", "16443", "10250", "6443"} {
					targets = append(targets, net.JoinHostPort(a.Address, port))
				}
			}
		}
	}
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err == nil && svc.Spec.ClusterIP != "" && !slices.Contains(targets, net.JoinHostPort(svc.Spec.ClusterIP, "443")) {
		targets = append(targets, net.JoinHostPort(svc.Spec.ClusterIP, "443"))
	}
	res, err := g.Engine.Run(ctx, sandbox.Spec{Image: g.Image, Entrypoint: append([]string{"python3", "-c", probeScript}, targets...),
		Input: strings.NewReader(""), Timeout: 60 * time.Second, Limits: lim, UIDSplit: true,
		Labels: map[string]string{"app.testfirst.probe": "prober"}, StdoutLimit: 1 << 16, StderrLimit: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("from a sandbox pod (exit %d, timed out %v):\n%s%s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != len(targets) {
		t.Fatalf("the probe answered %d lines for %d targets", len(lines), len(targets))
	}
	for _, l := range lines {
		if strings.HasSuffix(l, " open") {
			t.Errorf("a sandbox pod reached %s", strings.TrimSuffix(l, " open"))
		}
	}
	l := <-listened
	t.Logf("the listener: %s%s", l.Stdout, l.Stderr)
	if !strings.Contains(string(l.Stdout), "self=True connections=1") {
		t.Errorf("the listener was not listening, or took a connection from elsewhere: %s", l.Stdout)
	}
}

// kubeClient is a client of the cluster kubeconfig names.
func kubeClient(t *testing.T, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestKubernetesChartGrantsTheGraderEnough: installed as a user installs
// it, the chart gives the grader's service account what a grade needs in
// the sandbox namespace and nothing else: not secrets, not exec, not pods
// elsewhere.
func TestKubernetesChartGrantsTheGraderEnough(t *testing.T) {
	g := testenv.KubeGrading(t)
	cfg, _ := testenv.KubeConfig()
	admin := kubeClient(t, cfg.Kubeconfig)
	ns, err := admin.CoreV1().Namespaces().Get(t.Context(), cfg.Namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's sandbox namespace: %v", err)
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "baseline" {
		t.Errorf("the sandbox namespace enforces Pod Security %q, want baseline", got)
	}
	if _, err := admin.NetworkingV1().NetworkPolicies(cfg.Namespace).Get(t.Context(), "testfirst-sandbox-deny-all", metav1.GetOptions{}); err != nil {
		t.Errorf("the sandbox namespace's NetworkPolicy: %v", err)
	}
	tok, err := testenv.AccountKubeconfig(t.Context(), cfg.Kubeconfig, testenv.ChartNamespace, testenv.GraderAccount, cfg.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	grader := kubeClient(t, tok)
	for _, c := range []struct {
		ns, verb, resource, sub string
		want                    bool
	}{
		{cfg.Namespace, "create", "pods", "", true},
		{cfg.Namespace, "create", "pods", "attach", true},
		{cfg.Namespace, "delete", "pods", "", true},
		{cfg.Namespace, "get", "pods", "log", true},
		{cfg.Namespace, "create", "pods", "exec", false},
		{cfg.Namespace, "list", "secrets", "", false},
		{cfg.Namespace, "patch", "pods", "", false},
		{testenv.ChartNamespace, "create", "pods", "", false},
		{testenv.ChartNamespace, "get", "secrets", "", false},
		{"default", "list", "pods", "", false},
	} {
		review, err := grader.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: c.ns, Verb: c.verb, Resource: c.resource, Subresource: c.sub}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != c.want {
			t.Errorf("the grader's account may %s %s/%s in %s: %v, want %v", c.verb, c.resource, c.sub, c.ns, review.Status.Allowed, c.want)
		}
	}
	_ = g
}
