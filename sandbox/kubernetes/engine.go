package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/testfirst-app/testfirst/sandbox"
)

// deleteTimeout bounds the deletion of a pod after its run, which happens
// even when the caller's context is already cancelled.
const deleteTimeout = 30 * time.Second

// deleteGrace is the grace period a running sandbox pod is deleted with.
// Not 0: the API server would drop the pod object at once (a forced
// deletion) while the kubelet still stops the container, which would then
// run on unseen by the sweep, and by a NetworkPolicy that selects pods by
// their labels. With 1 the object stays until the kubelet has killed it.
const deleteGrace = int64(1)

// streamGrace is how long the attach stream may trail the container's
// exit before it is cut.
const streamGrace = 10 * time.Second

// Config says where sandbox pods run.
type Config struct {
	// Namespace is the namespace sandbox pods are made in; nothing else
	// should run there (a NetworkPolicy denies all traffic to and from its
	// pods).
	Namespace string
	// RuntimeClass is the pods' runtimeClassName, e.g. gvisor on GKE
	// Sandbox; empty is the cluster's default runtime.
	RuntimeClass string
	// Kubeconfig is the path of a kubeconfig file whose current context
	// names the cluster; empty is the in-cluster service account.
	Kubeconfig string
	// QueueWait is how long a pod may wait for a node with room for it
	// (the scheduler says only "Insufficient cpu" or "memory": a busy
	// cluster, or one a moment from freeing a node) before its run is the
	// cluster's failure; its run's own time starts when it has a node.
	// DefaultQueueWait when 0. A pod no node can take for any other reason
	// (a node selector, a taint) fails at the run's timeout.
	QueueWait time.Duration
}

// DefaultQueueWait is Config.QueueWait's default.
const DefaultQueueWait = 5 * time.Minute

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	var errs []error
	if c.Namespace == "" {
		errs = append(errs, errors.New("sandbox namespace is not set: name the namespace sandbox pods run in, e.g. testfirst-sandbox"))
	} else if v := validation.IsDNS1123Label(c.Namespace); len(v) > 0 {
		errs = append(errs, fmt.Errorf("sandbox namespace %q is not a Kubernetes namespace name: %s", c.Namespace, strings.Join(v, "; ")))
	}
	if c.RuntimeClass != "" {
		if v := validation.IsDNS1123Subdomain(c.RuntimeClass); len(v) > 0 {
			errs = append(errs, fmt.Errorf("sandbox runtime class %q is not a RuntimeClass name (e.g. gvisor): %s", c.RuntimeClass, strings.Join(v, "; ")))
		}
	}
	return errors.Join(errs...)
}

// Engine runs sandboxes as pods in one namespace.
type Engine struct {
	cs           kubernetes.Interface
	attach       Attacher
	namespace    string
	runtimeClass string
	queueWait    time.Duration
}

// New returns an Engine with the credentials cfg names: the kubeconfig
// file's current context, else the service account of the pod this process
// runs in. It does no I/O; Check proves the credentials.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var rc *rest.Config
	var err error
	if cfg.Kubeconfig != "" {
		if rc, err = clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", cfg.Kubeconfig, err)
		}
	} else if rc, err = rest.InClusterConfig(); err != nil {
		return nil, fmt.Errorf("kubernetes credentials: not running in a cluster (%w): set the sandbox's kubeconfig to a kubeconfig file", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return NewWithClient(cfg, cs, NewAttacher(rc))
}

// NewWithClient returns an Engine that makes its pods through cs and
// attaches to them through attach.
func NewWithClient(cfg Config, cs kubernetes.Interface, attach Attacher) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	wait := cfg.QueueWait
	if wait <= 0 {
		wait = DefaultQueueWait
	}
	return &Engine{cs: cs, attach: attach, namespace: cfg.Namespace, runtimeClass: cfg.RuntimeClass, queueWait: wait}, nil
}

// Check lists the sandbox namespace's pods, which the grader's account
// must be allowed to: the error says when it is not, or when the cluster
// does not answer.
func (e *Engine) Check(ctx context.Context) error {
	if _, err := e.cs.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("list pods in the sandbox namespace %s (the grader's account needs pods and pods/attach there): %w", e.namespace, err)
	}
	return nil
}

// Run runs spec in a fresh pod and deletes it afterwards, whatever happens.
// It returns an error only when the cluster failed (including a pod that
// could not start: its image, its configuration); a program that failed,
// was killed at the deadline or ran out of memory is a Result.
func (e *Engine) Run(ctx context.Context, spec sandbox.Spec) (res sandbox.Result, err error) {
	if spec.Timeout <= 0 {
		return res, errors.New("sandbox: a run needs a timeout")
	}
	began := time.Now()
	deadline := began.Add(spec.Timeout)
	pod, err := podFor(spec, e.namespace, e.runtimeClass, randomID(), deadline, began)
	if err != nil {
		return res, err
	}
	// A sweep leaves the pod alone while it may still be waiting for a
	// node and then running.
	pod.Labels[sandbox.LabelDeadline] = strconv.FormatInt(began.Add(max(spec.Timeout, e.queueWait)+spec.Timeout).Unix(), 10)
	pods := e.cs.CoreV1().Pods(e.namespace)
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return res, fmt.Errorf("create pod from %s in namespace %s: %w", spec.Image, e.namespace, err)
	}
	name := created.Name
	res.Container = name
	deleted := false
	deletePod := func() error {
		if deleted {
			return nil
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		defer cancel()
		err := pods.Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr(deleteGrace)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s: %w", name, err)
		}
		deleted = true
		return nil
	}
	defer func() { err = errors.Join(err, deletePod()) }()

	timedOut := func(err error) bool { return ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) }
	// First a node: a pod the scheduler holds back only for want of room
	// waits up to the queue's bound, and its run's time starts when it has
	// one.
	limit := deadline
	for {
		sctx, cancel := context.WithDeadline(ctx, limit)
		_, err := e.waitPod(sctx, name, created.ResourceVersion, scheduledOrDone)
		cancel()
		if timedOut(err) {
			why, room := e.pending(name)
			if room && limit.Before(began.Add(e.queueWait)) {
				limit = began.Add(e.queueWait)
				continue
			}
			if room {
				return res, fmt.Errorf("pod %s waited %s for a node with room for it: %s", name, time.Since(began).Round(time.Second), why)
			}
			return res, fmt.Errorf("pod %s did not start within its %s: %s", name, spec.Timeout, why)
		}
		if err != nil {
			return res, err
		}
		break
	}
	// The run's time starts now that the pod has a node.
	deadline = time.Now().Add(spec.Timeout)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	killed := func() (sandbox.Result, error) {
		res.TimedOut, res.ExitCode = true, -1
		if err := deletePod(); err != nil {
			return res, fmt.Errorf("kill pod %s at its deadline: %w", name, err)
		}
		res.Duration = time.Since(began)
		return res, nil
	}

	started, err := e.waitPod(wctx, name, created.ResourceVersion, startedOrDone)
	if timedOut(err) {
		// The program never ran: that is the cluster's failure (no node
		// for the runtime class, a slow pull), not the program's timeout.
		why, _ := e.pending(name)
		return res, fmt.Errorf("pod %s did not start within its %s: %s", name, spec.Timeout, why)
	}
	if err != nil {
		return res, err
	}

	stdout := sandbox.NewLimitedBuffer(spec.StdoutLimit)
	stderr := sandbox.NewLimitedBuffer(spec.StderrLimit)
	actx, stopAttach := context.WithCancel(context.WithoutCancel(ctx))
	defer stopAttach()
	attached := make(chan error, 1)
	// A broken attach ends the wait: the input or the result is lost, and
	// the container would wait for its stdin until the deadline.
	actx2, attachFailed := context.WithCancelCause(wctx)
	defer attachFailed(nil)
	if terminated(started) == nil {
		input := spec.Input
		if input == nil {
			input = strings.NewReader("")
		}
		go func() {
			err := e.attach.Attach(actx, e.namespace, name, input, stdout, stderr)
			if err != nil {
				attachFailed(err)
			}
			attached <- err
		}()
	} else {
		attached <- nil // it ended before it could be attached to
	}

	done, err := e.waitPod(actx2, name, started.ResourceVersion, func(p *corev1.Pod) (bool, error) {
		return terminated(p) != nil || p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded, nil
	})
	if timedOut(err) {
		stopAttach()
		<-attached
		res.Stdout, res.StdoutTruncated = stdout.Seal()
		res.Stderr, _ = stderr.Seal()
		return killed()
	}
	if err != nil {
		stopAttach()
		aerr := <-attached
		if aerr != nil && ctx.Err() == nil {
			return res, aerr
		}
		return res, err
	}
	// The attach stream ends once the container has exited and its output
	// is flushed. Should it not, it is cut, as on Docker.
	select {
	case aerr := <-attached:
		if aerr != nil {
			return res, aerr
		}
	case <-time.After(streamGrace):
		stopAttach()
		<-attached
	}
	res.Stdout, res.StdoutTruncated = stdout.Seal()
	res.Stderr, _ = stderr.Seal()
	res.Duration = time.Since(began)
	if done.Status.Reason == "DeadlineExceeded" {
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	}
	t := terminated(done)
	if t == nil {
		return res, fmt.Errorf("pod %s ended (%s: %s) without its container's exit status", name, done.Status.Phase, done.Status.Message)
	}
	res.ExitCode = int(t.ExitCode)
	res.OOMKilled = t.Reason == "OOMKilled"
	return res, nil
}

// pending says what the pod's status tells of why it has not started, and
// whether the scheduler holds it back only for want of room on a node
// (every reason it gives is "Insufficient <resource>" or "Too many pods").
func (e *Engine) pending(name string) (why string, room bool) {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	p, err := e.cs.CoreV1().Pods(e.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("its status could not be read (%v)", err), false
	}
	reasons := []string{"phase " + string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && (c.Reason != "" || c.Message != "") {
			reasons = append(reasons, fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message))
		}
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			room = onlyForRoom(c.Message)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			reasons = append(reasons, fmt.Sprintf("container %s waiting: %s %s", c.Name, w.Reason, w.Message))
		}
	}
	return strings.Join(reasons, "; "), room
}

// onlyForRoom reads the scheduler's message, "0/3 nodes are available:
// 2 Insufficient cpu, 1 Insufficient memory. preemption: ...", and
// reports whether every reason it gives is a want of room.
func onlyForRoom(msg string) bool {
	_, list, ok := strings.Cut(msg, "nodes are available: ")
	if !ok {
		return false
	}
	list, _, _ = strings.Cut(list, ". ")
	list = strings.TrimSuffix(list, ".")
	if list == "" {
		return false
	}
	for _, r := range strings.Split(list, ", ") {
		_, r, _ = strings.Cut(strings.TrimSpace(r), " ")
		if !strings.HasPrefix(r, "Insufficient ") && r != "Too many pods" {
			return false
		}
	}
	return true
}

// scheduledOrDone is a pod's wait for a node: done once one took it.
func scheduledOrDone(p *corev1.Pod) (bool, error) {
	if p.Spec.NodeName != "" {
		return true, nil
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return true, nil
		}
	}
	return startedOrDone(p)
}

// waitPod watches pod name from resourceVersion until cond says it is
// done, and returns the pod then. A watch the server ends is started again.
func (e *Engine) waitPod(ctx context.Context, name, resourceVersion string, cond func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	pods := e.cs.CoreV1().Pods(e.namespace)
	for {
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: resourceVersion})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("watch pod %s: %w", name, err)
		}
		// What happened before the watch began is in the pod as it is now.
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			w.Stop()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("get pod %s: %w", name, err)
		}
		if ok, err := cond(p); ok || err != nil {
			w.Stop()
			return p, err
		}
		resourceVersion = p.ResourceVersion
		p, err = watchUntil(ctx, w, name, cond)
		w.Stop()
		if p != nil || err != nil {
			return p, err
		}
	}
}

// watchUntil reads w's events for pod name until cond holds; it returns
// nil, nil when the server ends the watch.
func watchUntil(ctx context.Context, w watch.Interface, name string, cond func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, nil
			}
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					return nil, nil // too old a resourceVersion: start again from the pod as it is
				}
				return nil, fmt.Errorf("watch pod %s: %w", name, err)
			case watch.Deleted:
				if p, ok := ev.Object.(*corev1.Pod); ok && p.Name == name {
					return nil, fmt.Errorf("pod %s was deleted while it ran", name)
				}
			case watch.Added, watch.Modified:
				p, ok := ev.Object.(*corev1.Pod)
				if !ok || p.Name != name {
					continue
				}
				if ok, err := cond(p); ok || err != nil {
					return p, err
				}
			}
		}
	}
}

// startedOrDone holds once the sandbox container runs or has run; it fails
// when the container cannot start, so the run does not wait out its
// deadline for an image that will never come.
func startedOrDone(p *corev1.Pod) (bool, error) {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true, nil
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.Name != ContainerName {
			continue
		}
		if c.State.Running != nil || c.State.Terminated != nil {
			return true, nil
		}
		if w := c.State.Waiting; w != nil && cannotStart[w.Reason] {
			return false, fmt.Errorf("pod %s cannot start its container: %s: %s", p.Name, w.Reason, w.Message)
		}
	}
	return false, nil
}

// cannotStart are the waiting reasons the kubelet gives a container that
// will not start without a change to its pod or its image.
var cannotStart = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"InvalidImageName":           true,
	"ErrImageNeverPull":          true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"RunContainerError":          true,
}

// terminated is the sandbox container's exit state, nil while it has none.
func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == ContainerName {
			return c.State.Terminated
		}
	}
	return nil
}

func randomID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
