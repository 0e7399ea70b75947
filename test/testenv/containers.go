package testenv

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// EngineClient is a client of the Docker engine the environment names,
// closed when the test ends.
func EngineClient(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Labelled lists the containers with label (key=value), in status when
// it is set.
func Labelled(t testing.TB, cli *client.Client, label, status string) []container.Summary {
	t.Helper()
	args := filters.NewArgs(filters.Arg("label", label))
	if status != "" {
		args.Add("status", status)
	}
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: args})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// RemoveLabelled force-removes the containers with label (key=value), as
// a test's clean-up.
func RemoveLabelled(cli *client.Client, label string) {
	ctx := context.Background()
	list, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", label))})
	for _, c := range list {
		cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	}
}
