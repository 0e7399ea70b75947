package kubernetes_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/testfirst-app/testfirst/sandbox"
	"github.com/testfirst-app/testfirst/sandbox/kubernetes"
)

var (
	testNow      = time.Unix(1_900_000_000, 0)
	testDeadline = testNow.Add(90*time.Second + 300*time.Millisecond)
)

// TestPodSealed checks the sealing invariants on every pod the provider
// can make, field by field on the object it sends.
func TestPodSealed(t *testing.T) {
	small := sandbox.Limits{Memory: 64 << 20, NanoCPUs: 5e8, Pids: 32, RepoSize: 1 << 20, HiddenSize: 2 << 20, TmpSize: 3 << 20}
	tests := []struct {
		name         string
		spec         sandbox.Spec
		runtimeClass string
		capAdd       []corev1.Capability
	}{
		{
			name:         "uid split under gvisor",
			spec:         sandbox.Spec{Image: "registry.example/grader:1", Entrypoint: []string{"/testfirst-wrapper"}, UIDSplit: true, TestUID: 1000, Limits: sandbox.DefaultLimits},
			runtimeClass: "gvisor",
			capAdd:       []corev1.Capability{"SETUID", "SETGID"},
		},
		{
			name: "no uid split, default runtime",
			spec: sandbox.Spec{Image: "img", Entrypoint: []string{"/testfirst-wrapper"}, Limits: sandbox.DefaultLimits},
		},
		{
			name:         "small limits and labels",
			spec:         sandbox.Spec{Image: "img", Entrypoint: []string{"/w", "x"}, UIDSplit: true, TestUID: 4242, Labels: map[string]string{"grade": "7", sandbox.LabelSandbox: "0", kubernetes.LabelRun: "forged"}, Limits: small},
			runtimeClass: "gvisor",
			capAdd:       []corev1.Capability{"SETUID", "SETGID"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := kubernetes.PodFor(tt.spec, "sandboxes", tt.runtimeClass, "r1", testDeadline, testNow)
			if err != nil {
				t.Fatal(err)
			}
			s := pod.Spec
			if pod.Name != "testfirst-r1" || pod.Namespace != "sandboxes" {
				t.Errorf("pod %s/%s, want sandboxes/testfirst-r1", pod.Namespace, pod.Name)
			}
			for k, want := range map[string]string{sandbox.LabelSandbox: "1", sandbox.LabelDeadline: "1900000090", kubernetes.LabelRun: "r1"} {
				if got := pod.Labels[k]; got != want {
					t.Errorf("label %s = %q, want %q (a caller's label must not unmark a sandbox)", k, got, want)
				}
			}
			for k, v := range tt.spec.Labels {
				if k != sandbox.LabelSandbox && k != kubernetes.LabelRun && pod.Labels[k] != v {
					t.Errorf("caller's label %s = %q, want %q", k, pod.Labels[k], v)
				}
			}
			if got := deref(s.RuntimeClassName); got != tt.runtimeClass {
				t.Errorf("runtimeClassName = %q, want %q", got, tt.runtimeClass)
			}
			if deref(s.TerminationGracePeriodSeconds) != 1 {
				t.Errorf("terminationGracePeriodSeconds = %v, want 1 (0 deletes the object before the container is dead)", s.TerminationGracePeriodSeconds)
			}
			if s.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("restartPolicy = %s, want Never", s.RestartPolicy)
			}
			// 90.3s to the deadline: the kubelet's kill is rounded up, never before the caller's.
			if got := deref(s.ActiveDeadlineSeconds); got != 91 {
				t.Errorf("activeDeadlineSeconds = %d, want 91", got)
			}
			if deref(s.AutomountServiceAccountToken) != false || s.AutomountServiceAccountToken == nil {
				t.Error("automountServiceAccountToken must be false: no credentials in a sandbox")
			}
			if s.EnableServiceLinks == nil || *s.EnableServiceLinks {
				t.Error("enableServiceLinks must be false: no service addresses in the environment")
			}
			if s.HostNetwork || s.HostPID || s.HostIPC || deref(s.ShareProcessNamespace) {
				t.Error("a sandbox shares no namespace with the node or another container")
			}
			// The API server requires a nameserver with dnsPolicy None
			// (ValidatePodDNSConfig): the pod's own loopback, where nothing
			// answers, is the only one.
			if s.DNSPolicy != corev1.DNSNone || s.DNSConfig == nil || !slices.Equal(s.DNSConfig.Nameservers, []string{"127.0.0.1"}) ||
				len(s.DNSConfig.Searches) != 0 || len(s.DNSConfig.Options) != 0 {
				t.Errorf("dnsPolicy = %s, dnsConfig = %+v: want None and only the pod's loopback as nameserver", s.DNSPolicy, s.DNSConfig)
			}
			if s.ServiceAccountName != "" || len(s.ImagePullSecrets) != 0 || len(s.InitContainers) != 0 || len(s.EphemeralContainers) != 0 || s.NodeName != "" {
				t.Error("a sandbox pod names no account, pull secret, other container or node")
			}
			if len(s.Containers) != 1 {
				t.Fatalf("%d containers, want 1", len(s.Containers))
			}
			c := s.Containers[0]
			if c.Name != kubernetes.ContainerName || c.Image != tt.spec.Image || !slices.Equal(c.Command, tt.spec.Entrypoint) || len(c.Args) != 0 {
				t.Errorf("container %s runs %s %v %v, want the spec's entrypoint as PID 1 and no arguments", c.Name, c.Image, c.Command, c.Args)
			}
			if !c.Stdin || !c.StdinOnce || c.TTY {
				t.Error("input must go in on stdin, once, without a tty")
			}
			if len(c.EnvFrom) != 0 || len(c.Env) != 1 || c.Env[0].Name != "PATH" {
				t.Errorf("env = %v, want PATH only", c.Env)
			}
			if len(c.Ports) != 0 || c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil || c.Lifecycle != nil {
				t.Error("a sandbox container has no ports, probes or hooks")
			}
			sc := c.SecurityContext
			if sc == nil || sc.Capabilities == nil {
				t.Fatal("no securityContext or capabilities")
			}
			if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("capabilities drop %v, want ALL", sc.Capabilities.Drop)
			}
			if !slices.Equal(sc.Capabilities.Add, tt.capAdd) {
				t.Errorf("capabilities add %v, want %v", sc.Capabilities.Add, tt.capAdd)
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Error("allowPrivilegeEscalation must be false (no_new_privs)")
			}
			if sc.Privileged == nil || *sc.Privileged {
				t.Error("privileged must be false")
			}
			if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Error("the root filesystem must be read-only")
			}
			if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
				t.Errorf("procMount = %s, want Default (masked /proc)", *sc.ProcMount)
			}
			if deref(sc.RunAsUser) != 0 || deref(s.SecurityContext.RunAsUser) != 0 {
				t.Error("the wrapper runs as root inside the container, as on Docker")
			}
			if s.SecurityContext.SeccompProfile == nil || s.SecurityContext.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Error("seccomp must be the runtime's default profile")
			}
			l := tt.spec.Limits
			for _, rl := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				if got := rl[corev1.ResourceMemory]; got.Value() != l.Memory {
					t.Errorf("memory %s, want %d bytes", got.String(), l.Memory)
				}
				if got := rl[corev1.ResourceCPU]; got.MilliValue() != l.NanoCPUs/1e6 {
					t.Errorf("cpu %s, want %dm", got.String(), l.NanoCPUs/1e6)
				}
			}
			if !cmp.Equal(c.Resources.Requests, c.Resources.Limits) {
				t.Errorf("requests %v != limits %v: the pod must be Guaranteed", c.Resources.Requests, c.Resources.Limits)
			}
			if got := pod.Annotations[kubernetes.AnnotationPids]; got != itoa(l.Pids) {
				t.Errorf("pids annotation = %q, want %d", got, l.Pids)
			}
			wantMounts := map[string]int64{sandbox.RepoMount: l.RepoSize, sandbox.HiddenMount: l.HiddenSize, sandbox.TmpMount: l.TmpSize}
			if len(c.VolumeMounts) != len(wantMounts) || len(s.Volumes) != len(wantMounts) {
				t.Fatalf("mounts %v, volumes %v: want exactly %v", c.VolumeMounts, s.Volumes, wantMounts)
			}
			for _, m := range c.VolumeMounts {
				size, ok := wantMounts[m.MountPath]
				if !ok || m.ReadOnly || m.SubPath != "" || m.MountPropagation != nil {
					t.Errorf("mount %+v is not one of the sandbox's tmpfs paths", m)
					continue
				}
				v := volume(s.Volumes, m.Name)
				if v == nil || v.EmptyDir == nil {
					t.Errorf("mount %s is not an emptyDir: %+v", m.MountPath, v)
					continue
				}
				if v.HostPath != nil || v.EmptyDir.Medium != corev1.StorageMediumMemory {
					t.Errorf("volume %s: medium %q, want Memory (a tmpfs)", m.MountPath, v.EmptyDir.Medium)
				}
				if v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Value() != size {
					t.Errorf("volume %s: sizeLimit %v, want %d", m.MountPath, v.EmptyDir.SizeLimit, size)
				}
			}
		})
	}
}

// TestPodFollowsLimits changes each field of Limits in turn: every one must
// change the pod.
func TestPodFollowsLimits(t *testing.T) {
	base := sandbox.Spec{Image: "img", UIDSplit: true, TestUID: 1000, Limits: sandbox.DefaultLimits}
	before, err := kubernetes.PodFor(base, "ns", "", "r", testDeadline, testNow)
	if err != nil {
		t.Fatal(err)
	}
	lv := reflect.ValueOf(&base.Limits).Elem()
	for i := range lv.NumField() {
		name := lv.Type().Field(i).Name
		t.Run(name, func(t *testing.T) {
			spec := base
			f := reflect.ValueOf(&spec.Limits).Elem().Field(i)
			f.SetInt(f.Int()*2 + 1_000_000)
			after, err := kubernetes.PodFor(spec, "ns", "", "r", testDeadline, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Equal(before, after) {
				t.Errorf("doubling Limits.%s left the pod unchanged", name)
			}
		})
	}
}

// TestPodRefused: what a pod cannot carry is an error, never a pod without it.
func TestPodRefused(t *testing.T) {
	ok := sandbox.Spec{Image: "img", Limits: sandbox.DefaultLimits}
	tests := []struct {
		name string
		edit func(*sandbox.Spec)
		want string
	}{
		{"egress socket", func(s *sandbox.Spec) { s.ProxySocket = "/run/egress.sock" }, "no host mounts"},
		{"no image", func(s *sandbox.Spec) { s.Image = "" }, "needs an image"},
		{"no memory limit", func(s *sandbox.Spec) { s.Limits.Memory = 0 }, "must be positive"},
		{"no hidden size", func(s *sandbox.Spec) { s.Limits.HiddenSize = 0 }, "must be positive"},
		{"label value", func(s *sandbox.Spec) { s.Labels = map[string]string{"app.testfirst.environment": "img:tag"} }, "not a Kubernetes label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := ok
			tt.edit(&spec)
			_, err := kubernetes.PodFor(spec, "ns", "", "r", testDeadline, testNow)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func volume(vs []corev1.Volume, name string) *corev1.Volume {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func itoa(n int64) string { return resource.NewQuantity(n, resource.DecimalSI).String() }
