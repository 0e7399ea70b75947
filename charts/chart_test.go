package charts

import (
	"encoding/json"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"

	"github.com/testfirst-app/testfirst/app"
)

// The names the release renders.
const (
	appName          = "testfirst-app"
	graderName       = "testfirst-grader"
	migrateName      = "testfirst-migrate"
	sandboxNamespace = "testfirst-sandbox"
	secretDir        = "/etc/testfirst/secrets"
)

// sandboxEnv are the grader's sandbox settings: read by the Kubernetes
// provider, which no other part of the binary knows, so they are not in
// app's configuration.
var sandboxEnv = []string{"TESTFIRST_SANDBOX_PROVIDER", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE", "TESTFIRST_SANDBOX_KUBERNETES_RUNTIME_CLASS", "TESTFIRST_SANDBOX_KUBERNETES_IMAGE"}

// binaryEnv are the variables of app's configuration the chart sets.
var binaryEnv = []string{app.EnvConfigFile, "TESTFIRST_DATABASE_URL", app.EnvGraderRecipients, app.EnvGraderIdentity,
	app.EnvCardRecipients, app.EnvCardIdentity}

// cases are the values the chart is rendered with: its defaults with the
// settings they leave to the operator, and the GKE example.
func cases(t *testing.T) map[string]map[string]any {
	return map[string]map[string]any{
		"defaults": required(),
		"gke":      readValues(t, "values-gke.yaml"),
	}
}

func TestDefaultValuesNameWhatIsMissing(t *testing.T) {
	_, err := render(nil)
	if err == nil || !strings.Contains(err.Error(), "publicURL is required") {
		t.Fatalf("render with values.yaml alone: %v; want the refusal naming publicURL", err)
	}
}

func TestLint(t *testing.T) {
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			l := lint.All(chartDir, values, releaseNamespace, false)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %s", m)
				}
			}
		})
	}
}

// TestInventory pins what the chart renders: a new kind or object must be
// asserted here before it ships.
func TestInventory(t *testing.T) {
	common := []string{
		"ConfigMap testfirst/testfirst-app", "ConfigMap testfirst/testfirst-grader",
		"Deployment testfirst/testfirst-app", "Deployment testfirst/testfirst-grader",
		"Job testfirst/testfirst-migrate",
		"Namespace testfirst/testfirst-sandbox",
		"NetworkPolicy testfirst-sandbox/testfirst-sandbox-deny-all",
		"PodDisruptionBudget testfirst/testfirst-app", "PodDisruptionBudget testfirst/testfirst-grader",
		"Role testfirst-sandbox/testfirst-grader-sandbox", "RoleBinding testfirst-sandbox/testfirst-grader-sandbox",
		"Service testfirst/testfirst-app",
		"ServiceAccount testfirst/testfirst-app", "ServiceAccount testfirst/testfirst-grader",
	}
	want := map[string][]string{
		"defaults": common,
		"gke":      append(slices.Clone(common), "Ingress testfirst/testfirst-app"),
	}
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			got := mustRender(t, values).inventory()
			w := want[name]
			sort.Strings(w)
			if d := cmp.Diff(w, got); d != "" {
				t.Errorf("rendered objects (-want +got):\n%s", d)
			}
		})
	}
}

// TestTwoIdentities: the app and the grader are two Kubernetes accounts,
// each bound to its own Google account, and each Deployment runs as its
// own.
func TestTwoIdentities(t *testing.T) {
	wantGCP := map[string][2]string{
		"defaults": {"", ""},
		"gke":      {"testfirst-app@example-project.iam.gserviceaccount.com", "testfirst-grader@example-project.iam.gserviceaccount.com"},
	}
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			r := mustRender(t, values)
			for i, sa := range []string{appName, graderName} {
				acct := get[*corev1.ServiceAccount](t, r, "ServiceAccount", sa)
				got := acct.Annotations["iam.gke.io/gcp-service-account"]
				if got != wantGCP[name][i] {
					t.Errorf("%s: iam.gke.io/gcp-service-account = %q, want %q", sa, got, wantGCP[name][i])
				}
				if len(acct.Annotations) > 1 || (got == "" && len(acct.Annotations) > 0) {
					t.Errorf("%s: annotations %v, want only the Workload Identity one", sa, acct.Annotations)
				}
				if acct.AutomountServiceAccountToken == nil || *acct.AutomountServiceAccountToken {
					t.Errorf("%s: automountServiceAccountToken not false on the account", sa)
				}
			}
			appPod := get[*appsv1.Deployment](t, r, "Deployment", appName).Spec.Template.Spec
			graderPod := get[*appsv1.Deployment](t, r, "Deployment", graderName).Spec.Template.Spec
			if appPod.ServiceAccountName != appName || graderPod.ServiceAccountName != graderName {
				t.Errorf("service accounts: app runs as %q, grader as %q", appPod.ServiceAccountName, graderPod.ServiceAccountName)
			}
			// Only the grader talks to the Kubernetes API (the sandbox pods).
			if appPod.AutomountServiceAccountToken == nil || *appPod.AutomountServiceAccountToken {
				t.Error("app pod: the Kubernetes API token is mounted")
			}
			if graderPod.AutomountServiceAccountToken == nil || !*graderPod.AutomountServiceAccountToken {
				t.Error("grader pod: no Kubernetes API token for the Kubernetes provider")
			}
			job := get[*batchv1.Job](t, r, "Job", migrateName).Spec.Template.Spec
			if job.ServiceAccountName != "" || job.AutomountServiceAccountToken == nil || *job.AutomountServiceAccountToken {
				t.Errorf("migration: account %q, automount %v; want the namespace's default, no token", job.ServiceAccountName, job.AutomountServiceAccountToken)
			}
			if args := appPod.Containers[0].Args; !slices.Equal(args, []string{"serve", "--role", "app"}) {
				t.Errorf("app args %q", args)
			}
			if args := graderPod.Containers[0].Args; !slices.Equal(args, []string{"serve", "--role", "grader"}) {
				t.Errorf("grader args %q", args)
			}
			if args := job.Containers[0].Args; !slices.Equal(args, []string{"migrate"}) {
				t.Errorf("migration args %q", args)
			}
		})
	}
}

// pods are the pod templates a render holds, by owner.
func pods(t *testing.T, r *rendered) map[string]corev1.PodSpec {
	return map[string]corev1.PodSpec{
		appName:     get[*appsv1.Deployment](t, r, "Deployment", appName).Spec.Template.Spec,
		graderName:  get[*appsv1.Deployment](t, r, "Deployment", graderName).Spec.Template.Spec,
		migrateName: get[*batchv1.Job](t, r, "Job", migrateName).Spec.Template.Spec,
	}
}

// TestSecurityContexts: every pod of testfirst's own runs non-root under
// the runtime's seccomp profile, every container with a read-only root,
// no privilege escalation and no capability, and nothing of the node.
func TestSecurityContexts(t *testing.T) {
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			for owner, pod := range pods(t, mustRender(t, values)) {
				psc := pod.SecurityContext
				switch {
				case psc == nil:
					t.Errorf("%s: no pod securityContext", owner)
					continue
				case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
					t.Errorf("%s: runAsNonRoot not true", owner)
				case psc.RunAsUser == nil || *psc.RunAsUser == 0:
					t.Errorf("%s: runAsUser %v", owner, psc.RunAsUser)
				case psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
					t.Errorf("%s: pod seccomp %v, want RuntimeDefault", owner, psc.SeccompProfile)
				}
				if pod.HostNetwork || pod.HostPID || pod.HostIPC {
					t.Errorf("%s: a host namespace", owner)
				}
				if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
					t.Errorf("%s: service links in the environment", owner)
				}
				for _, v := range pod.Volumes {
					if v.HostPath != nil {
						t.Errorf("%s: hostPath volume %s", owner, v.Name)
					}
				}
				if len(pod.InitContainers) > 0 || len(pod.Containers) != 1 {
					t.Errorf("%s: %d containers, %d init containers; want one container", owner, len(pod.Containers), len(pod.InitContainers))
				}
				for _, c := range pod.Containers {
					sc := c.SecurityContext
					want := &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr(false),
						ReadOnlyRootFilesystem:   ptr(true),
						RunAsNonRoot:             ptr(true),
						Privileged:               ptr(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					}
					if d := cmp.Diff(want, sc); d != "" {
						t.Errorf("%s/%s securityContext (-want +got):\n%s", owner, c.Name, d)
					}
					if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
						t.Errorf("%s/%s: resources %v, want a memory limit and a CPU request", owner, c.Name, c.Resources)
					}
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestProbes: both roles are live on /healthz and ready on /readyz, on
// the port the binary listens on.
func TestProbes(t *testing.T) {
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			p := pods(t, mustRender(t, values))
			for _, owner := range []string{appName, graderName} {
				c := p[owner].Containers[0]
				if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
					t.Errorf("%s: ports %v, want http 8080", owner, c.Ports)
				}
				for probe, want := range map[string]struct {
					p    *corev1.Probe
					path string
				}{"startup": {c.StartupProbe, "/healthz"}, "liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}} {
					if want.p == nil || want.p.HTTPGet == nil {
						t.Errorf("%s: no %s probe over HTTP", owner, probe)
						continue
					}
					if want.p.HTTPGet.Path != want.path || want.p.HTTPGet.Port.String() != "http" {
						t.Errorf("%s: %s probe %s on %s, want %s on http", owner, probe, want.p.HTTPGet.Path, want.p.HTTPGet.Port.String(), want.path)
					}
				}
			}
		})
	}
}

// TestSandboxNamespace: the sandbox pods' namespace denies them every
// connection, in and out, and the grader may manage its pods there and do
// nothing else, anywhere.
func TestSandboxNamespace(t *testing.T) {
	for name, values := range cases(t) {
		t.Run(name, func(t *testing.T) {
			r := mustRender(t, values)
			ns := get[*corev1.Namespace](t, r, "Namespace", sandboxNamespace)
			if ns.Labels["pod-security.kubernetes.io/enforce"] != "baseline" {
				t.Errorf("sandbox namespace labels %v: want Pod Security baseline enforced", ns.Labels)
			}
			np := get[*networkingv1.NetworkPolicy](t, r, "NetworkPolicy", "testfirst-sandbox-deny-all")
			wantNP := networkingv1.NetworkPolicySpec{
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			}
			if np.Namespace != sandboxNamespace {
				t.Errorf("NetworkPolicy in %q, want %q", np.Namespace, sandboxNamespace)
			}
			if d := cmp.Diff(wantNP, np.Spec); d != "" {
				t.Errorf("NetworkPolicy: want every pod selected and no rule (-want +got):\n%s", d)
			}
			if len(np.Spec.PodSelector.MatchLabels)+len(np.Spec.PodSelector.MatchExpressions) != 0 {
				t.Errorf("NetworkPolicy selects %v, want every pod", np.Spec.PodSelector)
			}

			role := get[*rbacv1.Role](t, r, "Role", "testfirst-grader-sandbox")
			wantRules := []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch", "delete"}},
				{APIGroups: []string{""}, Resources: []string{"pods/attach"}, Verbs: []string{"create", "get"}},
				{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			}
			if role.Namespace != sandboxNamespace {
				t.Errorf("Role in %q, want %q", role.Namespace, sandboxNamespace)
			}
			if d := cmp.Diff(wantRules, role.Rules); d != "" {
				t.Errorf("grader's Role rules (-want +got):\n%s", d)
			}
			rb := get[*rbacv1.RoleBinding](t, r, "RoleBinding", "testfirst-grader-sandbox")
			wantRB := rbacv1.RoleBinding{
				RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "testfirst-grader-sandbox"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: graderName, Namespace: releaseNamespace}},
			}
			if rb.Namespace != sandboxNamespace {
				t.Errorf("RoleBinding in %q, want %q", rb.Namespace, sandboxNamespace)
			}
			if d := cmp.Diff(wantRB.RoleRef, rb.RoleRef); d != "" {
				t.Errorf("RoleBinding roleRef (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantRB.Subjects, rb.Subjects); d != "" {
				t.Errorf("RoleBinding subjects: want the grader's account alone (-want +got):\n%s", d)
			}
			for _, o := range r.objects {
				if o.namespace == sandboxNamespace && o.kind != "NetworkPolicy" && o.kind != "Role" && o.kind != "RoleBinding" {
					t.Errorf("%s %s in the sandbox namespace: it holds the sandbox pods and their policy only", o.kind, o.name)
				}
			}
			grader := get[*appsv1.Deployment](t, r, "Deployment", graderName).Spec.Template.Spec.Containers[0]
			wantEnv := map[string]string{"TESTFIRST_SANDBOX_PROVIDER": "kubernetes", "TESTFIRST_SANDBOX_KUBERNETES_NAMESPACE": sandboxNamespace,
				"TESTFIRST_SANDBOX_KUBERNETES_IMAGE": testImage}
			if name == "gke" {
				wantEnv["TESTFIRST_SANDBOX_KUBERNETES_RUNTIME_CLASS"] = "gvisor"
				wantEnv["TESTFIRST_SANDBOX_KUBERNETES_IMAGE"] = gkeImage
			}
			gotEnv := map[string]string{}
			for _, e := range grader.Env {
				if slices.Contains(sandboxEnv, e.Name) {
					gotEnv[e.Name] = e.Value
				}
			}
			if d := cmp.Diff(wantEnv, gotEnv); d != "" {
				t.Errorf("grader's sandbox settings (-want +got):\n%s", d)
			}
		})
	}
}

// TestServiceReachesOnlyTheApp: the Service and the Ingress lead to the
// app's pods, never the grader's.
func TestServiceReachesOnlyTheApp(t *testing.T) {
	r := mustRender(t, readValues(t, "values-gke.yaml"))
	svc := get[*corev1.Service](t, r, "Service", appName)
	want := map[string]string{"app.kubernetes.io/name": "testfirst", "app.kubernetes.io/instance": releaseName, "app.kubernetes.io/component": "app"}
	if d := cmp.Diff(want, svc.Spec.Selector); d != "" {
		t.Errorf("Service selector (-want +got):\n%s", d)
	}
	appPod := get[*appsv1.Deployment](t, r, "Deployment", appName).Spec.Template.Labels
	graderPod := get[*appsv1.Deployment](t, r, "Deployment", graderName).Spec.Template.Labels
	if !selects(want, appPod) || selects(want, graderPod) {
		t.Errorf("Service selects app pod %t, grader pod %t; want only the app's", selects(want, appPod), selects(want, graderPod))
	}
	ing := get[*networkingv1.Ingress](t, r, "Ingress", appName)
	if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "testfirst.example.com" ||
		ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name != appName {
		t.Errorf("Ingress rules %+v, want testfirst.example.com to the app's Service", ing.Spec.Rules)
	}
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// mountedFiles are the files a pod's container sees from Secrets: path ->
// "secret/key".
func mountedFiles(t *testing.T, pod corev1.PodSpec) map[string]string {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	out := map[string]string{}
	for _, m := range pod.Containers[0].VolumeMounts {
		v := vols[m.Name]
		if v.Secret != nil {
			t.Errorf("volume %s: secrets come in one projected volume", v.Name)
		}
		if v.Projected == nil {
			continue
		}
		if !m.ReadOnly {
			t.Errorf("volume %s mounted writable", m.Name)
		}
		if v.Projected.DefaultMode == nil || *v.Projected.DefaultMode&0o007 != 0 {
			t.Errorf("volume %s: mode %v lets others read it", v.Name, v.Projected.DefaultMode)
		}
		for _, src := range v.Projected.Sources {
			if src.Secret == nil {
				t.Errorf("volume %s: a source that is not a Secret", v.Name)
				continue
			}
			for _, it := range src.Secret.Items {
				out[path.Join(m.MountPath, it.Path)] = src.Secret.Name + "/" + it.Key
			}
		}
	}
	return out
}

// TestSecretsAsFiles: each role holds the secrets it needs as files, and
// only those: the app never the grader's identity, the grader never the
// webhook secret, the OAuth secret, the session key or the card's
// identity. Every file the configuration names is mounted.
func TestSecretsAsFiles(t *testing.T) {
	want := map[string]map[string]string{
		appName: {
			secretDir + "/github-private-key.pem": "testfirst-github-app/private-key.pem",
			secretDir + "/webhook-secret":         "testfirst-github-app/webhook-secret",
			secretDir + "/card-identity.txt":      "testfirst-store-card/identity.txt",
			secretDir + "/github-client-secret":   "testfirst-github-app/client-secret",
			secretDir + "/session-key":            "testfirst-session/session-key",
		},
		graderName: {
			secretDir + "/github-private-key.pem": "testfirst-github-app/private-key.pem",
			secretDir + "/grader-identity.txt":    "testfirst-store-grader/identity.txt",
		},
		migrateName: {},
	}
	r := mustRender(t, readValues(t, "values-gke.yaml"))
	for owner, pod := range pods(t, r) {
		files := mountedFiles(t, pod)
		if d := cmp.Diff(want[owner], files); d != "" {
			t.Errorf("%s: secret files (-want +got):\n%s", owner, d)
		}
		var named []string
		for _, e := range pod.Containers[0].Env {
			if e.ValueFrom != nil {
				if e.Name != "TESTFIRST_DATABASE_URL" || e.ValueFrom.SecretKeyRef == nil ||
					e.ValueFrom.SecretKeyRef.Name != "testfirst-database" || e.ValueFrom.SecretKeyRef.Key != "url" {
					t.Errorf("%s: env %s from %+v; only the database URL comes from a Secret as a variable", owner, e.Name, e.ValueFrom)
				}
				continue
			}
			if strings.HasSuffix(e.Name, "_FILE") {
				named = append(named, e.Value)
			}
		}
		if !slices.ContainsFunc(pod.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == "TESTFIRST_DATABASE_URL" }) {
			t.Errorf("%s: no database URL", owner)
		}
		if owner != migrateName {
			named = append(named, configFiles(t, r, owner)...)
		}
		for _, f := range named {
			if _, ok := files[f]; !ok {
				t.Errorf("%s: the configuration names %s, which no Secret is mounted at", owner, f)
			}
		}
		if len(named) != len(files) {
			t.Errorf("%s: %d secret files mounted, %d named by the configuration: %v", owner, len(files), len(named), named)
		}
	}
	// Without the OAuth client the card is off: no client secret, no
	// session key, and neither Secret needs to exist.
	r = mustRender(t, required())
	files := mountedFiles(t, pods(t, r)[appName])
	for _, f := range []string{"/github-client-secret", "/session-key", "/operator-token"} {
		if _, ok := files[secretDir+f]; ok {
			t.Errorf("app without github.clientID or an operator token mounts %s", f)
		}
	}
	// With an operator token, both roles mount it and name it in their
	// configuration (operator_token_file): /metrics and /readyz's reasons
	// answer its bearer on either.
	r = mustRender(t, merge(readValues(t, "values-gke.yaml"), map[string]any{"secrets": map[string]any{"operatorToken": map[string]any{"name": "testfirst-operator", "key": "token"}}}))
	for _, owner := range []string{appName, graderName} {
		if got := mountedFiles(t, pods(t, r)[owner])[secretDir+"/operator-token"]; got != "testfirst-operator/token" {
			t.Errorf("%s: the operator token is mounted from %q", owner, got)
		}
		if !slices.Contains(configFiles(t, r, owner), secretDir+"/operator-token") {
			t.Errorf("%s: the configuration does not name the operator token", owner)
		}
	}
}

// configFiles parses a role's rendered configuration file the way the
// binary does (app.ParseConfigYAML refuses unknown keys) and returns the
// secret files it names.
func configFiles(t *testing.T, r *rendered, owner string) []string {
	t.Helper()
	cm := get[*corev1.ConfigMap](t, r, "ConfigMap", owner)
	if len(cm.Data) != 1 || cm.Data["config.yaml"] == "" {
		t.Fatalf("ConfigMap %s: data keys %v, want config.yaml", owner, cm.Data)
	}
	c := app.DefaultConfig()
	if err := app.ParseConfigYAML([]byte(cm.Data["config.yaml"]), &c); err != nil {
		t.Fatalf("ConfigMap %s: the binary refuses its config.yaml: %v", owner, err)
	}
	if c.DatabaseURL != app.DefaultDatabaseURL {
		t.Errorf("%s: database_url %q in the ConfigMap", owner, c.DatabaseURL)
	}
	var out []string
	for _, f := range []string{c.GitHubPrivateKeyFile, c.WebhookSecretFile, c.GitHubClientSecretFile, c.SessionKeyFile, c.OperatorTokenFile} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// TestConfigurationTheBinaryReads: the configuration files name the
// release's settings, and every variable the chart sets is one the binary
// (or the Kubernetes provider) reads.
func TestConfigurationTheBinaryReads(t *testing.T) {
	r := mustRender(t, readValues(t, "values-gke.yaml"))
	for _, owner := range []string{appName, graderName} {
		c := app.DefaultConfig()
		if err := app.ParseConfigYAML([]byte(get[*corev1.ConfigMap](t, r, "ConfigMap", owner).Data["config.yaml"]), &c); err != nil {
			t.Fatal(err)
		}
		if c.PublicURL != "https://testfirst.example.com" || c.StoreURL != "gs://example-project-testfirst-hidden/tests" || c.GitHubAppID != 123456 || c.Listen != ":8080" {
			t.Errorf("%s: config %+v", owner, c)
		}
		wantClient := ""
		if owner == appName {
			wantClient = "Iv23liEXAMPLEclient"
		}
		if c.GitHubClientID != wantClient {
			t.Errorf("%s: github_client_id %q, want %q", owner, c.GitHubClientID, wantClient)
		}
	}
	for owner, pod := range pods(t, r) {
		for _, e := range pod.Containers[0].Env {
			if !slices.Contains(binaryEnv, e.Name) && !(owner == graderName && slices.Contains(sandboxEnv, e.Name)) {
				t.Errorf("%s: env %s is read by no part of testfirst that runs there", owner, e.Name)
			}
		}
	}
	appEnv := envOf(pods(t, r)[appName])
	if appEnv[app.EnvGraderRecipients] != "age15d855hxddsq6sp4n6m9dt968379mzkgd7aquhyu05xw7ru4q6vpswdeay4" {
		t.Errorf("app: grader recipients %q", appEnv[app.EnvGraderRecipients])
	}
	if _, ok := appEnv[app.EnvGraderIdentity]; ok {
		t.Error("app is told where a grader identity is")
	}
	if _, ok := envOf(pods(t, r)[graderName])[app.EnvCardIdentity]; ok {
		t.Error("grader is told where the card's identity is")
	}
}

func envOf(pod corev1.PodSpec) map[string]string {
	out := map[string]string{}
	for _, e := range pod.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

// marker stands for a secret value in the tests below: it must never
// reach a manifest.
const marker = "tf-planted-secret-7f3a9c"

// TestNoSecretValue plants a secret value wherever values could take one
// and proves the render refuses it, never echoing it; and that a secret's
// name reaches the manifests only as a reference.
func TestNoSecretValue(t *testing.T) {
	secretFields := []string{"databaseURL", "githubPrivateKey", "webhookSecret", "githubClientSecret", "sessionKey", "cardIdentity", "graderIdentity"}
	type bad struct {
		name   string
		values map[string]any
		want   string
	}
	var tests []bad
	for _, f := range secretFields {
		tests = append(tests,
			bad{"secrets." + f + " as a value", map[string]any{"secrets": map[string]any{f: marker}}, "secrets." + f + " must be a reference to an existing Secret"},
			bad{"secrets." + f + ".value", map[string]any{"secrets": map[string]any{f: map[string]any{"value": marker}}}, "secrets." + f + ".value: a secret reference holds only name and key"},
		)
	}
	tests = append(tests,
		bad{"a secret key of its own", map[string]any{"secrets": map[string]any{"databasePassword": marker}}, "databasePassword"},
		bad{"a top-level value", map[string]any{"webhookSecret": marker}, "webhookSecret"},
		bad{"a database URL in the values", map[string]any{"database": map[string]any{"url": "postgres://u:" + marker + "@db/testfirst"}}, "database"},
		bad{"an environment of one's own", map[string]any{"app": map[string]any{"env": []any{map[string]any{"name": "X", "value": marker}}}}, "env"},
		bad{"a private key pasted", map[string]any{"github": map[string]any{"clientID": "-----BEGIN RSA PRIVATE KEY-----\n" + marker + "\n-----END RSA PRIVATE KEY-----"}}, "a private key is written in the values"},
		bad{"an age identity for recipients", map[string]any{"store": map[string]any{"graderRecipients": "AGE-SECRET-KEY-1" + strings.ToUpper(marker)}}, "an age identity (AGE-SECRET-KEY-...) is written in the values"},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(merge(readValues(t, "values-gke.yaml"), tt.values))
			if err == nil {
				t.Fatal("rendered")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
			if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(marker)) {
				t.Errorf("the refusal repeats the secret: %v", err)
			}
		})
	}

	// Secret names planted: each reaches the manifests only where a Secret
	// is referred to.
	refs := map[string]any{}
	for _, f := range secretFields {
		refs[f] = map[string]any{"name": marker + "-" + strings.ToLower(f), "key": "k"}
	}
	r := mustRender(t, merge(readValues(t, "values-gke.yaml"), map[string]any{"secrets": refs}))
	if strings.Contains(r.text, "kind: Secret") {
		t.Error("the chart renders a Secret")
	}
	for _, o := range r.objects {
		var tree any
		data, err := json.Marshal(o.value)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &tree); err != nil {
			t.Fatal(err)
		}
		walk(tree, o.kind+" "+o.name, func(at string, s string) {
			if !strings.Contains(s, marker) {
				return
			}
			if !strings.HasSuffix(at, ".secret.name") && !strings.HasSuffix(at, ".secretKeyRef.name") {
				t.Errorf("%s: a secret's name at %s, which is no Secret reference", o.kind, at)
			}
		})
	}
	// app: the database and 5 files; grader: the database and 2 files;
	// the migration: the database.
	if n := strings.Count(r.text, marker); n != 10 {
		t.Errorf("secret names referred to %d times, want 10", n)
	}
}

// walk calls fn with every string of tree and its path.
func walk(tree any, at string, fn func(at, s string)) {
	switch v := tree.(type) {
	case map[string]any:
		for k, x := range v {
			walk(x, at+"."+k, fn)
		}
	case []any:
		for _, x := range v {
			walk(x, at, fn)
		}
	case string:
		fn(at, v)
	}
}

// TestBadValues: values that cannot work fail the render with a message
// that says what to set.
func TestBadValues(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"no sandbox image", map[string]any{"sandbox": map[string]any{"image": ""}}, `sandbox.image "": want the grader image the cluster pulls, pinned by digest`},
		{"a sandbox image by tag", map[string]any{"sandbox": map[string]any{"image": "registry.example/testfirst-grader:latest"}}, "pinned by digest"},
		{"kubernetes provider without a namespace", map[string]any{"sandbox": map[string]any{"provider": "kubernetes", "namespace": ""}},
			"sandbox.namespace is required with sandbox.provider kubernetes"},
		{"sandboxes in the release's namespace", map[string]any{"sandbox": map[string]any{"namespace": releaseNamespace}},
			"is the release's own namespace"},
		{"sandboxes in kube-system", map[string]any{"sandbox": map[string]any{"namespace": "kube-system"}},
			"is a namespace of the cluster's own"},
		{"docker provider", map[string]any{"sandbox": map[string]any{"provider": "docker"}},
			"sandbox.provider docker is not supported by the chart"},
		{"unknown provider", map[string]any{"sandbox": map[string]any{"provider": "firecracker"}},
			`sandbox.provider "firecracker": want kubernetes`},
		{"a file store", map[string]any{"store": map[string]any{"url": "file:///var/hidden"}},
			"want the hidden-test bucket, gs://BUCKET/PREFIX"},
		{"no app id", map[string]any{"github": map[string]any{"appID": 0}},
			"github.appID is required"},
		{"no recipients", map[string]any{"store": map[string]any{"cardRecipients": " "}},
			"store.cardRecipients is required"},
		{"a recipient that is not one", map[string]any{"store": map[string]any{"cardRecipients": "ssh-ed25519 AAAA"}},
			`store.cardRecipients: "ssh-ed25519" is not an age recipient`},
		{"one Google account for both", map[string]any{"grader": map[string]any{"serviceAccount": map[string]any{"gcpServiceAccount": "testfirst-app@example-project.iam.gserviceaccount.com"}}},
			"are one Google account"},
		{"one Kubernetes account for both", map[string]any{"app": map[string]any{"serviceAccount": map[string]any{"name": "testfirst"}}, "grader": map[string]any{"serviceAccount": map[string]any{"name": "testfirst"}}},
			"are one Kubernetes service account"},
		{"a secret reference without a key", map[string]any{"secrets": map[string]any{"graderIdentity": map[string]any{"key": ""}}},
			"secrets.graderIdentity needs name and key"},
		{"root", map[string]any{"podSecurityContext": map[string]any{"runAsUser": 0}},
			"runAsUser"},
		{"a misspelt key", map[string]any{"sandbox": map[string]any{"runtimeClass": "gvisor"}},
			"runtimeClass"},
		{"ingress without a host", map[string]any{"ingress": map[string]any{"host": ""}},
			"ingress.enabled needs ingress.host"},
		{"a relative public URL", map[string]any{"publicURL": "testfirst.example.com"},
			"want an absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(merge(readValues(t, "values-gke.yaml"), tt.values))
			if err == nil {
				t.Fatal("rendered")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestValuesDocumented: every key of values.yaml is covered by a
// comment: one right above it, above the group of sibling keys it opens
// with, or above the block that holds it (resources, a secret reference).
func TestValuesDocumented(t *testing.T) {
	lines := strings.Split(readFile(t, "values.yaml"), "\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	isKey := func(l string) bool {
		trim := strings.TrimSpace(l)
		return trim != "" && !strings.HasPrefix(trim, "#") && !strings.HasPrefix(trim, "- ") && strings.Contains(trim, ":")
	}
	memo := map[int]bool{}
	var documented func(i int) bool
	documented = func(i int) bool {
		if v, ok := memo[i]; ok {
			return v
		}
		v := false
		if i > 0 {
			prev := lines[i-1]
			switch {
			case strings.HasPrefix(strings.TrimSpace(prev), "#"):
				v = true
			case isKey(prev) && indent(prev) == indent(lines[i]):
				v = documented(i - 1)
			}
		}
		for j := i - 1; !v && j >= 0; j-- {
			if isKey(lines[j]) && indent(lines[j]) < indent(lines[i]) {
				v = documented(j)
				break
			}
		}
		memo[i] = v
		return v
	}
	for i, line := range lines {
		if isKey(line) && !documented(i) {
			t.Errorf("values.yaml:%d: %q has no comment", i+1, strings.TrimSpace(line))
		}
	}
}
