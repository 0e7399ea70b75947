package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
