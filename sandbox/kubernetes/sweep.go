package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/testfirst-app/testfirst/sandbox"
)

// sweepGrace is how long past its deadline a sandbox pod may still be in
// use (being killed, its output drained) before Sweep deletes it.
const sweepGrace = time.Minute

// Sweep deletes sandbox pods left behind by a crashed process: those in
// the sandbox namespace whose deadline label lies more than a minute in the
// past. Pods of runs still in progress are never touched. It returns how
// many it deleted.
func (e *Engine) Sweep(ctx context.Context, now time.Time) (int, error) {
	pods := e.cs.CoreV1().Pods(e.namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sandbox.LabelSandbox})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in namespace %s: %w", e.namespace, err)
	}
	var n int
	var errs []error
	for _, p := range list.Items {
		deadline, err := strconv.ParseInt(p.Labels[sandbox.LabelDeadline], 10, 64)
		if err != nil || now.Sub(time.Unix(deadline, 0)) < sweepGrace {
			continue
		}
		err = pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(deleteGrace)})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("delete leftover pod %s: %w", p.Name, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// RemoveLabelled deletes the sandbox pods labelled key=value, running or
// not: a rescued job's dead replica's pods, which would otherwise run to
// their deadline beside the new attempt's. It returns how many it deleted.
func (e *Engine) RemoveLabelled(ctx context.Context, key, value string) (int, error) {
	sel, err := labels.Parse(sandbox.LabelSandbox + "," + key + "=" + value)
	if err != nil {
		return 0, fmt.Errorf("sandbox pods labelled %s=%s: %w", key, value, err)
	}
	pods := e.cs.CoreV1().Pods(e.namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in namespace %s: %w", e.namespace, err)
	}
	var n int
	var errs []error
	for _, p := range list.Items {
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(deleteGrace)})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// Running counts the sandbox pods in the sandbox namespace that have not
// ended (pending or running).
func (e *Engine) Running(ctx context.Context) (int, error) {
	list, err := e.cs.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: sandbox.LabelSandbox})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in namespace %s: %w", e.namespace, err)
	}
	var n int
	for _, p := range list.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n, nil
}
