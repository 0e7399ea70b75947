package kubernetes

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/testfirst-app/testfirst/sandbox"
)

// Names and labels of a sandbox pod.
const (
	// ContainerName is the one container of a sandbox pod.
	ContainerName = "sandbox"
	// LabelRun names the run a pod belongs to; it is the pod's name
	// without the "testfirst-" prefix.
	LabelRun = "app.testfirst.run"
	// AnnotationPids records the run's pids limit. A pod spec has no field
	// for it: the node's kubelet (podPidsLimit) enforces one for every pod.
	AnnotationPids = "app.testfirst.pids-limit"
	// deadNameserver is the only nameserver of a sandbox pod: its own
	// loopback.
	deadNameserver = "127.0.0.1"
	// podPrefix starts every sandbox pod's name.
	podPrefix = "testfirst-"
)

// volumes are the memory-backed emptyDirs of a sandbox pod, at the paths
// the Docker provider mounts a tmpfs on.
var volumes = []struct {
	name, path string
	size       func(sandbox.Limits) int64
}{
	{"repo", sandbox.RepoMount, func(l sandbox.Limits) int64 { return l.RepoSize }},
	{"hidden", sandbox.HiddenMount, func(l sandbox.Limits) int64 { return l.HiddenSize }},
	{"tmp", sandbox.TmpMount, func(l sandbox.Limits) int64 { return l.TmpSize }},
}

// podFor turns a Spec into the pod that runs it: named testfirst-<run> in
// namespace, with runtimeClass ("" is the cluster's default) and killed by
// the kubelet at deadline if nobody deletes it sooner. Every sandbox pod is
// made here; pod_test.go holds the invariants. The error says which part of
// spec a pod cannot carry.
func podFor(spec sandbox.Spec, namespace, runtimeClass, run string, deadline, now time.Time) (*corev1.Pod, error) {
	if spec.ProxySocket != "" {
		return nil, errors.New("sandbox: a Kubernetes pod has no host mounts, so no egress proxy socket: " +
			"dependency environments and network mirror need the Docker provider")
	}
	if spec.Image == "" {
		return nil, errors.New("sandbox: a run needs an image")
	}
	l := spec.Limits
	if l.Memory <= 0 || l.NanoCPUs <= 0 || l.RepoSize <= 0 || l.HiddenSize <= 0 || l.TmpSize <= 0 {
		return nil, fmt.Errorf("sandbox: limits %+v: memory, CPUs and every mount size must be positive (a pod without a limit is unbounded)", l)
	}
	labels := map[string]string{}
	keys := make([]string, 0, len(spec.Labels))
	for k := range spec.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := spec.Labels[k]
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			return nil, fmt.Errorf("sandbox: label %s=%q is not a Kubernetes label: %s", k, v, strings.Join(errs, "; "))
		}
		labels[k] = v
	}
	labels[sandbox.LabelSandbox] = "1"
	labels[sandbox.LabelDeadline] = strconv.FormatInt(deadline.Unix(), 10)
	labels[LabelRun] = run

	var capAdd []corev1.Capability
	if spec.UIDSplit {
		capAdd = []corev1.Capability{"SETUID", "SETGID"}
	}
	// The kubelet counts activeDeadlineSeconds from the pod's start: never
	// less than a second, rounded up so it never fires before the caller's
	// own kill at deadline.
	active := int64(math.Ceil(deadline.Sub(now).Seconds()))
	if active < 1 {
		active = 1
	}
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, v := range volumes {
		size := resource.NewQuantity(v.size(l), resource.BinarySI)
		vols = append(vols, corev1.Volume{Name: v.name, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: size}}})
		mounts = append(mounts, corev1.VolumeMount{Name: v.name, MountPath: v.path})
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(l.NanoCPUs/1e6, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(l.Memory, resource.BinarySI),
	}
	var rc *string
	if runtimeClass != "" {
		rc = &runtimeClass
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        podPrefix + run,
			Namespace:   namespace,
			Labels:      labels,
			Annotations: map[string]string{AnnotationPids: strconv.FormatInt(l.Pids, 10)},
		},
		Spec: corev1.PodSpec{
			RuntimeClassName:              rc,
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         &active,
			TerminationGracePeriodSeconds: ptr(deleteGrace),
			AutomountServiceAccountToken:  ptr(false),
			EnableServiceLinks:            ptr(false),
			HostNetwork:                   false,
			HostPID:                       false,
			HostIPC:                       false,
			ShareProcessNamespace:         ptr(false),
			Hostname:                      "sandbox",
			// The API server refuses dnsPolicy None without a nameserver;
			// the one given is the pod's own loopback, where nothing
			// answers, so no name resolves and no query leaves the pod.
			DNSPolicy: corev1.DNSNone,
			DNSConfig: &corev1.PodDNSConfig{Nameservers: []string{deadNameserver}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      ptr(int64(0)),
				RunAsGroup:     ptr(int64(0)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Volumes: vols,
			Containers: []corev1.Container{{
				Name:            ContainerName,
				Image:           spec.Image,
				Command:         spec.Entrypoint,
				Args:            []string{},
				WorkingDir:      "/",
				Env:             []corev1.EnvVar{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin"}},
				Stdin:           true,
				StdinOnce:       true,
				TTY:             false,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Resources:       corev1.ResourceRequirements{Requests: resources, Limits: resources.DeepCopy()},
				VolumeMounts:    mounts,
				SecurityContext: &corev1.SecurityContext{
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: capAdd},
					Privileged:               ptr(false),
					AllowPrivilegeEscalation: ptr(false),
					ReadOnlyRootFilesystem:   ptr(true),
					RunAsUser:                ptr(int64(0)),
					RunAsGroup:               ptr(int64(0)),
					RunAsNonRoot:             ptr(false),
				},
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
		},
	}, nil
}

func ptr[T any](v T) *T { return &v }
