// Package kubernetes runs sandboxes as Kubernetes pods, through the API
// server only (client-go): one fresh pod per run in a namespace of its own,
// configured in one function (pod.go), its input one tar on the attach
// stream's stdin and its result read from the attach stream's stdout, as
// on Docker; killed at its deadline and always deleted, labelled for the
// sweep of leftovers. It is the adapter for a cluster (GKE Sandbox: the
// gvisor runtime class) as sandbox/docker is for one engine; it runs
// sandboxes only and builds no images: the grader image comes from a
// registry the cluster pulls from.
package kubernetes
