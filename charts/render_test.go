package charts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// chartDir is the chart under test, relative to this package.
const chartDir = "testfirst"

// releaseName and releaseNamespace are the release every test renders.
const (
	releaseName      = "testfirst"
	releaseNamespace = "testfirst"
)

// object is one rendered manifest, decoded strictly into its k8s.io/api
// type.
type object struct {
	// source is the template it came from.
	source string
	kind   string
	name   string
	// namespace is the one the manifest names; empty: the release's.
	namespace string
	value     any
	// raw is the manifest's YAML.
	raw string
}

// rendered is one render of the chart.
type rendered struct {
	objects []object
	// text is every manifest, for searches.
	text string
}

// newObject returns an empty value of the API type of apiVersion and
// kind, or an error naming a kind the chart must not render unknown.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 Namespace":
		return &corev1.Namespace{}, nil
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "batch/v1 Job":
		return &batchv1.Job{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "networking.k8s.io/v1 NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, nil
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}, nil
	case "rbac.authorization.k8s.io/v1 Role":
		return &rbacv1.Role{}, nil
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return &rbacv1.RoleBinding{}, nil
	}
	return nil, fmt.Errorf("%s %s: a kind this test does not decode; the chart renders none but the kinds newObject lists", apiVersion, kind)
}

// readValues reads a values file of the chart.
func readValues(t *testing.T, name string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(filepath.Join(chartDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return v.AsMap()
}

// testImage and gkeImage are the sandbox images of the default values'
// tests and of values-gke.yaml.
const (
	testImage = "registry.example/testfirst-grader@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	gkeImage  = "europe-west1-docker.pkg.dev/example-project/testfirst/grader@sha256:0000000000000000000000000000000000000000000000000000000000000000"
)

// required is what the default values leave to the operator: the chart
// renders nothing without them.
func required() map[string]any {
	return map[string]any{
		"publicURL": "https://testfirst.example.com",
		"github":    map[string]any{"appID": 4242},
		"sandbox":   map[string]any{"image": testImage},
		"store": map[string]any{
			"url":              "gs://example-testfirst-hidden/tests",
			"graderRecipients": "age15d855hxddsq6sp4n6m9dt968379mzkgd7aquhyu05xw7ru4q6vpswdeay4",
			"cardRecipients":   "age1m8jfdslzsx8p0wxfakajd5ddcgs52mkhusekxvnpn2x8lp8gk5hqy30j7h",
		},
	}
}

// merge returns the values of each layer over the ones before, as helm's
// -f and --set do.
func merge(layers ...map[string]any) map[string]any {
	out := map[string]any{}
	for _, l := range layers {
		out = mergeInto(out, l)
	}
	return out
}

func mergeInto(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeInto(mergeInto(map[string]any{}, dv), sv)
				continue
			}
			dst[k] = mergeInto(map[string]any{}, sv)
			continue
		}
		dst[k] = v
	}
	return dst
}

// render renders the chart with user values over its values.yaml as an
// install would (schema validated, strict templates), and decodes every
// manifest strictly: a field the API type lacks is an error.
func render(values map[string]any) (*rendered, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(chrt, values, opts, nil)
	if err != nil {
		return nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(chrt, vals)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	r := &rendered{}
	var text strings.Builder
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(files[name], -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			text.WriteString(doc + "\n---\n")
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				return nil, fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			v, err := newObject(head.APIVersion, head.Kind)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
				return nil, fmt.Errorf("%s: %s %s does not decode strictly: %w\n%s", name, head.Kind, head.Metadata.Name, err, doc)
			}
			r.objects = append(r.objects, object{source: name, kind: head.Kind, name: head.Metadata.Name,
				namespace: head.Metadata.Namespace, value: v, raw: doc})
		}
	}
	r.text = text.String()
	return r, nil
}

// stripComments drops YAML comment lines.
func stripComments(doc string) string {
	var b bytes.Buffer
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// mustRender renders values or fails the test.
func mustRender(t *testing.T, values map[string]any) *rendered {
	t.Helper()
	r, err := render(values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// get returns the object of kind and name, failing the test without it.
func get[T any](t *testing.T, r *rendered, kind, name string) T {
	t.Helper()
	for _, o := range r.objects {
		if o.kind == kind && o.name == name {
			v, ok := o.value.(T)
			if !ok {
				t.Fatalf("%s %s is a %T", kind, name, o.value)
			}
			return v
		}
	}
	t.Fatalf("no %s %s rendered; have %s", kind, name, r.inventory())
	var zero T
	return zero
}

// inventory lists the rendered objects as "Kind namespace/name".
func (r *rendered) inventory() []string {
	var out []string
	for _, o := range r.objects {
		ns := o.namespace
		if ns == "" {
			ns = releaseNamespace
		}
		out = append(out, o.kind+" "+ns+"/"+o.name)
	}
	sort.Strings(out)
	return out
}

// readFile reads a file of the chart.
func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
