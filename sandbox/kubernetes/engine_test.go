package kubernetes_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/kubernetes"
)

const testNamespace = "sandboxes"

func TestMain(m *testing.M) {
	// client-go and the servers log every connection closed at the end of a
	// stream; the tests say what matters.
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

// cluster is client-go's fake clientset (pods kept in its object tracker,
// watches fed from it), a kubelet that gives every new pod the status
// started returns, and the attach endpoint on a real HTTP server.
type cluster struct {
	t       *testing.T
	cs      *fake.Clientset
	attach  *attachServer
	engine  *kubernetes.Engine
	created chan *corev1.Pod
}

// newCluster starts the kubelet: started gives a new pod its status (nil:
// the container runs); container is what the container does when attached.
func newCluster(t *testing.T, started func(*corev1.Pod) *corev1.PodStatus, container func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error) *cluster {
	t.Helper()
	c := &cluster{t: t, cs: fake.NewClientset(), created: make(chan *corev1.Pod, 10)}
	c.attach = newAttachServer(t, func(ctx context.Context, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		return container(c, pod, stdin, stdout, stderr)
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if started != nil {
		// A scheduler's verdict (a pending pod's conditions) is on the pod
		// when it is created: from the watch below it came too late on a
		// loaded machine, after a 1 s run had given up on a pod with no
		// status yet (CI: "did not start within its 1s: phase ").
		c.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if p, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod); ok {
				if st := started(p); st.Phase == corev1.PodPending {
					p.Status = *st
				}
			}
			return false, nil, nil
		})
	}
	w, err := c.cs.CoreV1().Pods(testNamespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if ev.Type != watch.Added || !ok {
				continue
			}
			c.created <- p.DeepCopy()
			st := &corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: kubernetes.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
			if started != nil {
				st = started(p)
			}
			p.Status = *st
			if _, err := c.cs.CoreV1().Pods(testNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil && ctx.Err() == nil {
				t.Errorf("kubelet: update status of %s: %v", p.Name, err)
			}
		}
	}()
	e, err := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace, RuntimeClass: "gvisor"}, c.cs, kubernetes.NewAttacher(&rest.Config{Host: c.attach.srv.URL}))
	if err != nil {
		t.Fatal(err)
	}
	c.engine = e
	return c
}

// exit is the kubelet seeing the container end with code and reason.
func (c *cluster) exit(pod string, code int32, reason string, podReason string) {
	ctx := context.Background()
	p, err := c.cs.CoreV1().Pods(testNamespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		c.t.Errorf("kubelet: get %s: %v", pod, err)
		return
	}
	p.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		p.Status.Phase = corev1.PodFailed
	}
	p.Status.Reason = podReason
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubernetes.ContainerName, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}}}
	if _, err := c.cs.CoreV1().Pods(testNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		c.t.Errorf("kubelet: update status of %s: %v", pod, err)
	}
}

// gone checks that pod no longer exists and was deleted at once.
func (c *cluster) gone(pod string) {
	c.t.Helper()
	if _, err := c.cs.CoreV1().Pods(testNamespace).Get(context.Background(), pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		c.t.Errorf("pod %s is still there (err %v): every run's pod must be deleted", pod, err)
	}
	for _, a := range c.cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && d.GetName() == pod {
			// Grace 0 would be a forced deletion: the object gone while the
			// container still runs.
			if g := d.GetDeleteOptions().GracePeriodSeconds; g == nil || *g != 1 {
				c.t.Errorf("pod %s deleted with grace period %v, want 1", pod, g)
			}
			return
		}
	}
	c.t.Errorf("no delete of pod %s", pod)
}

func tarOf(t *testing.T, files map[string]string) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"repo/a.py", "hidden/test_a.py"} {
		if body, ok := files[name]; ok {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
			io.WriteString(tw, body)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func testSpec(input io.Reader, timeout time.Duration) sandbox.Spec {
	return sandbox.Spec{Image: "registry.example/grader:1", Entrypoint: []string{"/testfirst-wrapper"}, Input: input, Timeout: timeout,
		Limits: sandbox.DefaultLimits, UIDSplit: true, TestUID: 1000, StdoutLimit: 1 << 20, StderrLimit: 1 << 10}
}

// listTar is a container that reads its input tar to the end, lists it on
// stdout, says hello on stderr and exits with code.
func listTar(code int32, reason string) func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
	return func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		tr := tar.NewReader(stdin)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(tr)
			fmt.Fprintf(stdout, "%s %q\n", h.Name, body)
		}
		io.Copy(io.Discard, stdin) // to stdin's close
		io.WriteString(stderr, "wrapper done\n")
		c.exit(pod, code, reason, "")
		return nil
	}
}

// TestRun: the input tar goes in on stdin, the result comes out on stdout,
// the exit code from the container's status; the pod is the sealed one and
// is deleted. On both attach protocols.
func TestRun(t *testing.T) {
	for _, noWebSocket := range []bool{false, true} {
		t.Run(fmt.Sprintf("websocket refused %v", noWebSocket), func(t *testing.T) {
			c := newCluster(t, nil, listTar(3, "Error"))
			c.attach.noWebSocket = noWebSocket
			in := tarOf(t, map[string]string{"repo/a.py": "x = 1\n", "hidden/test_a.py": "def test(): pass\n"})
			res, err := c.engine.Run(context.Background(), testSpec(in, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			want := "repo/a.py \"x = 1\\n\"\nhidden/test_a.py \"def test(): pass\\n\"\n"
			if string(res.Stdout) != want || res.StdoutTruncated {
				t.Errorf("stdout = %q (truncated %v), want %q", res.Stdout, res.StdoutTruncated, want)
			}
			if string(res.Stderr) != "wrapper done\n" {
				t.Errorf("stderr = %q", res.Stderr)
			}
			if res.ExitCode != 3 || res.TimedOut || res.OOMKilled {
				t.Errorf("result %+v, want exit code 3, not timed out, not OOM", res)
			}
			p := <-c.created
			if res.Container != p.Name || !strings.HasPrefix(p.Name, "testfirst-") || p.Labels[kubernetes.LabelRun] != strings.TrimPrefix(p.Name, "testfirst-") {
				t.Errorf("result names %q, pod %s with run label %q", res.Container, p.Name, p.Labels[kubernetes.LabelRun])
			}
			if p.Namespace != testNamespace || p.Spec.RuntimeClassName == nil || *p.Spec.RuntimeClassName != "gvisor" || p.Labels[sandbox.LabelSandbox] != "1" {
				t.Errorf("pod %s/%s, runtime class %v, labels %v", p.Namespace, p.Name, p.Spec.RuntimeClassName, p.Labels)
			}
			c.gone(p.Name)
		})
	}
}

func TestRunOutOfMemory(t *testing.T) {
	c := newCluster(t, nil, listTar(137, "OOMKilled"))
	res, err := c.engine.Run(context.Background(), testSpec(tarOf(t, nil), time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !res.OOMKilled || res.ExitCode != 137 || res.TimedOut {
		t.Errorf("result %+v, want OOM killed with 137", res)
	}
	c.gone(res.Container)
}

func TestRunStdoutLimit(t *testing.T) {
	c := newCluster(t, nil, func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		io.Copy(io.Discard, stdin)
		stdout.Write(bytes.Repeat([]byte("x"), 5000))
		c.exit(pod, 0, "Completed", "")
		return nil
	})
	spec := testSpec(nil, time.Minute)
	spec.StdoutLimit = 100
	res, err := c.engine.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 100 || !res.StdoutTruncated || res.ExitCode != 0 {
		t.Errorf("kept %d bytes, truncated %v, exit %d: want 100, true, 0", len(res.Stdout), res.StdoutTruncated, res.ExitCode)
	}
}

// TestRunDeadline: a container that never ends is killed at the deadline
// (its pod deleted), and the result says so.
func TestRunDeadline(t *testing.T) {
	c := newCluster(t, nil, func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		io.WriteString(stdout, "started\n")
		io.Copy(io.Discard, stdin)
		time.Sleep(time.Minute) // until the connection is cut
		return nil
	})
	began := time.Now()
	res, err := c.engine.Run(context.Background(), testSpec(nil, 1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result %+v, want timed out with -1", res)
	}
	if took := time.Since(began); took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("run took %s, want the 1.5s deadline", took)
	}
	if string(res.Stdout) != "started\n" {
		t.Errorf("stdout = %q, want what the container wrote before its kill", res.Stdout)
	}
	c.gone(res.Container)
}

// The kubelet's own kill at activeDeadlineSeconds is a timeout too.
func TestRunKubeletDeadline(t *testing.T) {
	c := newCluster(t, nil, func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		io.Copy(io.Discard, stdin)
		c.exit(pod, 137, "Error", "DeadlineExceeded")
		return nil
	})
	res, err := c.engine.Run(context.Background(), testSpec(nil, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result %+v, want timed out with -1", res)
	}
}

// A pod whose image cannot be pulled is the cluster's failure, reported at
// once, not a run that waits out its deadline.
func TestRunImagePullFails(t *testing.T) {
	c := newCluster(t, func(p *corev1.Pod) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: kubernetes.ContainerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull access denied"}}}}}
	}, func(*cluster, string, io.Reader, io.Writer, io.Writer) error {
		t.Error("attached to a pod that never started")
		return nil
	})
	began := time.Now()
	res, err := c.engine.Run(context.Background(), testSpec(nil, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "ErrImagePull: pull access denied") {
		t.Fatalf("err = %v, want the pull failure", err)
	}
	if time.Since(began) > 10*time.Second {
		t.Errorf("took %s to see the pull failure", time.Since(began))
	}
	c.gone(res.Container)
}

// A cancelled run deletes its pod all the same.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := newCluster(t, nil, func(c *cluster, pod string, stdin io.Reader, stdout, stderr io.Writer) error {
		io.Copy(io.Discard, stdin)
		cancel()
		time.Sleep(time.Minute)
		return nil
	})
	res, err := c.engine.Run(ctx, testSpec(nil, time.Minute))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	c.gone(res.Container)
}

func TestRunCreateRefused(t *testing.T) {
	c := newCluster(t, nil, listTar(0, ""))
	c.cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("the grader's account may not"))
	})
	_, err := c.engine.Run(context.Background(), testSpec(nil, time.Minute))
	if err == nil || !strings.Contains(err.Error(), "create pod from registry.example/grader:1 in namespace sandboxes") || !apierrors.IsForbidden(err) {
		t.Errorf("err = %v, want the refused create", err)
	}
}

func TestRunRefusesBadSpecs(t *testing.T) {
	c := newCluster(t, nil, listTar(0, ""))
	spec := testSpec(nil, 0)
	if _, err := c.engine.Run(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "needs a timeout") {
		t.Errorf("err = %v, want the missing timeout", err)
	}
	spec = testSpec(nil, time.Minute)
	spec.ProxySocket = "/tmp/egress.sock"
	if _, err := c.engine.Run(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "no host mounts") {
		t.Errorf("err = %v, want the refused socket", err)
	}
	for _, a := range c.cs.Actions() {
		if a.GetVerb() != "watch" { // the kubelet's
			t.Errorf("API call %s %s for a spec that cannot run, want none", a.GetVerb(), a.GetResource().Resource)
		}
	}
}

// TestSweep deletes the sandbox pods past their deadline and a minute, and
// nothing else.
func TestSweep(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace, Labels: labels}}
	}
	dl := func(t time.Time) string { return fmt.Sprint(t.Unix()) }
	cs := fake.NewClientset(
		pod("old", map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: dl(now.Add(-2 * time.Minute))}),
		pod("just-past", map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: dl(now.Add(-30 * time.Second))}),
		pod("running", map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: dl(now.Add(time.Hour))}),
		pod("unlabelled-deadline", map[string]string{sandbox.LabelSandbox: "1"}),
		pod("not-a-sandbox", map[string]string{sandbox.LabelDeadline: dl(now.Add(-time.Hour))}),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-namespace", Namespace: "default",
			Labels: map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: dl(now.Add(-time.Hour))}}},
	)
	e, err := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace}, cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.Sweep(context.Background(), now)
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	left, _ := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "just-past not-a-sandbox other-namespace running unlabelled-deadline" {
		t.Errorf("left %q", got)
	}
}

// TestRemoveLabelled: a rescued job's pods go, running or not; other
// jobs' pods, pods that are not sandboxes and pods of other namespaces stay;
// Running counts the sandbox pods that have not ended.
func TestRemoveLabelled(t *testing.T) {
	pod := func(name, ns, job string, phase corev1.PodPhase, sb bool) *corev1.Pod {
		l := map[string]string{sandbox.LabelJob: job}
		if sb {
			l[sandbox.LabelSandbox] = "1"
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l}, Status: corev1.PodStatus{Phase: phase}}
	}
	cs := fake.NewClientset(
		pod("job7-running", testNamespace, "7", corev1.PodRunning, true),
		pod("job7-ended", testNamespace, "7", corev1.PodFailed, true),
		pod("job8", testNamespace, "8", corev1.PodPending, true),
		pod("job7-not-a-sandbox", testNamespace, "7", corev1.PodRunning, false),
		pod("job7-elsewhere", "default", "7", corev1.PodRunning, true),
	)
	e, err := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace}, cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.Running(context.Background()); err != nil || n != 2 {
		t.Errorf("Running = %d, %v; want 2 (job7-running, job8)", n, err)
	}
	if n, err := e.RemoveLabelled(context.Background(), sandbox.LabelJob, "7"); err != nil || n != 2 {
		t.Fatalf("RemoveLabelled = %d, %v; want 2", n, err)
	}
	left, _ := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "job7-elsewhere job7-not-a-sandbox job8" {
		t.Errorf("left %q", got)
	}
	if _, err := e.RemoveLabelled(context.Background(), sandbox.LabelJob, "7 or all"); err == nil {
		t.Error("a label value that is no label value was taken")
	}
}

func TestConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  kubernetes.Config
		want string
	}{
		{kubernetes.Config{}, "sandbox namespace is not set"},
		{kubernetes.Config{Namespace: "Sandboxes"}, `sandbox namespace "Sandboxes" is not a Kubernetes namespace name`},
		{kubernetes.Config{Namespace: "sandboxes", RuntimeClass: "g visor"}, `sandbox runtime class "g visor" is not a RuntimeClass name`},
		{kubernetes.Config{Namespace: "sandboxes", Kubeconfig: "/nonexistent/kubeconfig"}, "kubeconfig /nonexistent/kubeconfig"},
	} {
		if _, err := kubernetes.New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want it to contain %q", tt.cfg, err, tt.want)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := kubernetes.New(kubernetes.Config{Namespace: "sandboxes"}); err == nil || !strings.Contains(err.Error(), "not running in a cluster") {
		t.Errorf("New outside a cluster without a kubeconfig = %v, want how to fix it", err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600)
	if _, err := kubernetes.New(kubernetes.Config{Namespace: "sandboxes", RuntimeClass: "gvisor", Kubeconfig: kc}); err != nil {
		t.Errorf("New with a kubeconfig: %v", err)
	}
}

// Check proves the credentials with a list of the namespace's pods.
func TestCheck(t *testing.T) {
	cs := fake.NewClientset()
	e, _ := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace}, cs, nil)
	if err := e.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	})
	if err := e.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "needs pods and pods/attach") {
		t.Errorf("Check = %v, want what the account needs", err)
	}
}

// A watch the server ends with 410 Gone (its resourceVersion too old) is
// started again from the pod as it is, and the run still completes.
func TestRunWatchExpired(t *testing.T) {
	c := newCluster(t, nil, listTar(0, "Completed"))
	expired := false
	c.cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		if expired || a.(k8stesting.WatchAction).GetWatchRestrictions().Fields.String() == "" { // the kubelet's own watch
			return false, nil, nil
		}
		expired = true
		// Buffered and sent now: a goroutine's send could come after the
		// engine stopped the watch (a panic on the closed channel).
		w := watch.NewFakeWithChanSize(1, false)
		w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
		return true, w, nil
	})
	res, err := c.engine.Run(context.Background(), testSpec(tarOf(t, map[string]string{"repo/a.py": "1"}), time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !expired || res.ExitCode != 0 || string(res.Stdout) != "repo/a.py \"1\"\n" {
		t.Errorf("expired watch served %v; result %+v", expired, res)
	}
}

// An attach the API server refuses is the cluster's failure, reported at
// once: the container would otherwise wait for its stdin to the deadline.
func TestRunAttachRefused(t *testing.T) {
	c := newCluster(t, nil, func(*cluster, string, io.Reader, io.Writer, io.Writer) error {
		t.Error("the container was attached to")
		return nil
	})
	c.attach.forbidden = true
	began := time.Now()
	res, err := c.engine.Run(context.Background(), testSpec(tarOf(t, nil), time.Minute))
	if err == nil || !strings.Contains(err.Error(), "attach to pod "+res.Container) || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("err = %v, want the refused attach", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("took %s to report the refused attach", took)
	}
	c.gone(res.Container)
}

// A pod that never starts (no node for its runtime class) is the
// cluster's failure with the scheduler's reason, not the program's timeout.
func TestRunNeverScheduled(t *testing.T) {
	c := newCluster(t, func(p *corev1.Pod) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/3 nodes are available: 3 node(s) didn't match the runtime class's node selector"}}}
	}, func(*cluster, string, io.Reader, io.Writer, io.Writer) error {
		t.Error("attached to a pod that never started")
		return nil
	})
	res, err := c.engine.Run(context.Background(), testSpec(nil, time.Second))
	if err == nil || !strings.Contains(err.Error(), "did not start within its 1s") || !strings.Contains(err.Error(), "PodScheduled: Unschedulable 0/3 nodes are available") {
		t.Fatalf("err = %v, want the scheduler's reason", err)
	}
	if res.TimedOut {
		t.Error("a pod that never ran is no timeout of the program")
	}
	c.gone(res.Container)
}

// TestRunWaitsForRoom: a pod the scheduler holds back only for want of
// room (the node still busy with the previous grade's pod) waits for a
// node, up to the queue's bound, and its run's time starts when it has
// one: a run of 1 s whose pod waited 2 s for a node runs, where it was a
// failed grade ("did not start within its 1s"). A pod that waits longer
// than the bound fails with the scheduler's reason.
func TestRunWaitsForRoom(t *testing.T) {
	busy := func(*corev1.Pod) *corev1.PodStatus {
		return &corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}}
	}
	t.Run("room after 2 s", func(t *testing.T) {
		c := newCluster(t, busy, listTar(0, "Completed"))
		e, err := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace, QueueWait: 30 * time.Second}, c.cs, kubernetes.NewAttacher(&rest.Config{Host: c.attach.srv.URL}))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			p := <-c.created
			time.Sleep(2 * time.Second)
			ctx := context.Background()
			got, err := c.cs.CoreV1().Pods(testNamespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				t.Errorf("get %s: %v", p.Name, err)
				return
			}
			got.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: kubernetes.ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
			if _, err := c.cs.CoreV1().Pods(testNamespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Errorf("kubelet: %v", err)
			}
		}()
		in := tarOf(t, map[string]string{"repo/a.py": "x = 1\n"})
		res, err := e.Run(context.Background(), testSpec(in, time.Second))
		if err != nil {
			t.Fatalf("a pod that waited for room: %v", err)
		}
		if res.ExitCode != 0 || res.TimedOut {
			t.Errorf("result %+v, want exit 0 in time", res)
		}
		c.gone(res.Container)
	})
	t.Run("no room within the bound", func(t *testing.T) {
		c := newCluster(t, busy, func(*cluster, string, io.Reader, io.Writer, io.Writer) error {
			t.Error("attached to a pod that never started")
			return nil
		})
		e, err := kubernetes.NewWithClient(kubernetes.Config{Namespace: testNamespace, QueueWait: 2 * time.Second}, c.cs, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(context.Background(), testSpec(nil, time.Second))
		if err == nil || !strings.Contains(err.Error(), "waited 2s for a node with room for it") || !strings.Contains(err.Error(), "1 Insufficient cpu") {
			t.Fatalf("err = %v, want the wait and the scheduler's reason", err)
		}
		c.gone(res.Container)
	})
}
