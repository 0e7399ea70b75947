// Package charts holds testfirst's Helm chart, charts/testfirst, and the
// test that renders it with Helm's own Go packages (no helm binary),
// decodes every manifest strictly into the Kubernetes API's types and
// asserts what the deployment's security rests on: two identities, no
// secret value, the sandbox namespace's NetworkPolicy and the grader's
// Role, every securityContext and probe. The package has no code of its
// own.
package charts
