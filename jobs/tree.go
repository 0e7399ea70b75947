package jobs

import (
	"context"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/github"
	"github.com/testfirst-app/testfirst/tree"
)

// downloadTree downloads the repository's tree at ref.
func downloadTree(ctx context.Context, gi *github.Installation, repo db.Repository, ref string) (*tree.Tree, error) {
	rc, err := gi.Tarball(ctx, repo.Owner, repo.Name, ref)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	entries, err := github.ExtractTarball(rc)
	if err != nil {
		return nil, err
	}
	files := make([]tree.File, 0, len(entries))
	for _, e := range entries {
		files = append(files, tree.File{Path: e.Path, Mode: e.Mode, Data: e.Data, Link: e.Link})
	}
	return tree.New(files)
}
