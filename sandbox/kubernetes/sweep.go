package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/testfirst-app/testfirst/sandbox"
)

// Sweep deletes sandbox pods left behind by a crashed process: those in
// the sandbox namespace whose deadline label lies more than a minute in the
// past. Pods of runs still in progress are never touched. It returns how
// many it deleted.
func (e *Engine) Sweep(ctx context.Context, now time.Time) (int, error) {
	list, err := e.cs.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: sandbox.LabelSandbox})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in namespace %s: %w", e.namespace, err)
	}
	var stale []corev1.Pod
	for _, p := range list.Items {
		if sandbox.PastDeadline(p.Labels, now) {
			stale = append(stale, p)
		}
	}
	return e.deleteAll(ctx, stale, "leftover pod")
}

// RemoveLabelled deletes the sandbox pods labelled key=value, running or
// not: a rescued job's dead replica's pods, which would otherwise run to
// their deadline beside the new attempt's. It returns how many it deleted.
func (e *Engine) RemoveLabelled(ctx context.Context, key, value string) (int, error) {
	sel, err := labels.Parse(sandbox.LabelSandbox + "," + key + "=" + value)
	if err != nil {
		return 0, fmt.Errorf("sandbox pods labelled %s=%s: %w", key, value, err)
	}
	list, err := e.cs.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return 0, fmt.Errorf("list sandbox pods in namespace %s: %w", e.namespace, err)
	}
	return e.deleteAll(ctx, list.Items, "pod")
}

// deleteAll deletes pods, counting those it deleted; one already gone is
// neither counted nor an error. what names them in errors.
func (e *Engine) deleteAll(ctx context.Context, pods []corev1.Pod, what string) (int, error) {
	var n int
	var errs []error
	for _, p := range pods {
		err := e.cs.CoreV1().Pods(e.namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(deleteGrace)})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", what, p.Name, err))
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
