package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v66/github"
)

// FileChange is one file of a commit testfirst makes: its new content, or
// its deletion.
type FileChange struct {
	// Path is slash-separated and relative to the repository's root.
	Path       string
	Content    []byte
	Executable bool
	Deleted    bool
}

// CommitFiles commits changes on top of base's tree to branch through the
// Git data API (blobs, a tree, a commit, the ref), with the installation's
// token, and returns the new commit's sha. The commit's tree is base's with
// the changes; its parent is the branch's head when the branch exists
// (a new round's commit follows the last one), else base, and the branch
// is made then. A branch moved meanwhile by someone else is moved on all
// the same: testfirst owns the branches it names.
func (in *Installation) CommitFiles(ctx context.Context, owner, repo, branch, base, message string, changes []FileChange) (string, error) {
	op := fmt.Sprintf("commit to %s of %s/%s", branch, owner, repo)
	if len(changes) == 0 {
		return "", &APIError{Op: op, Err: errors.New("no change to commit")}
	}
	baseCommit, resp, err := in.gh.Git.GetCommit(ctx, owner, repo, base)
	if err := classify(op+": get base commit "+base, resp, err, in.now()); err != nil {
		return "", err
	}
	entries := make([]*gh.TreeEntry, 0, len(changes))
	for _, c := range changes {
		mode := "100644"
		if c.Executable {
			mode = "100755"
		}
		e := &gh.TreeEntry{Path: gh.String(c.Path), Mode: gh.String(mode), Type: gh.String("blob")}
		if !c.Deleted {
			b, resp, err := in.gh.Git.CreateBlob(ctx, owner, repo, &gh.Blob{Content: gh.String(base64.StdEncoding.EncodeToString(c.Content)), Encoding: gh.String("base64")})
			if err := classify(op+": create blob of "+c.Path, resp, err, in.now()); err != nil {
				return "", err
			}
			e.SHA = b.SHA
		}
		entries = append(entries, e)
	}
	tree, resp, err := in.gh.Git.CreateTree(ctx, owner, repo, baseCommit.GetTree().GetSHA(), entries)
	if err := classify(op+": create tree", resp, err, in.now()); err != nil {
		return "", err
	}
	ref, resp, err := in.gh.Git.GetRef(ctx, owner, repo, "heads/"+branch)
	exists := true
	if err := classify(op+": get branch", resp, err, in.now()); err != nil {
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
		exists = false
	}
	parent := base
	if exists {
		parent = ref.GetObject().GetSHA()
	}
	commit, resp, err := in.gh.Git.CreateCommit(ctx, owner, repo, &gh.Commit{Message: gh.String(message), Tree: &gh.Tree{SHA: tree.SHA},
		Parents: []*gh.Commit{{SHA: gh.String(parent)}}}, nil)
	if err := classify(op+": create commit", resp, err, in.now()); err != nil {
		return "", err
	}
	if exists {
		_, resp, err = in.gh.Git.UpdateRef(ctx, owner, repo, &gh.Reference{Ref: gh.String("refs/heads/" + branch), Object: &gh.GitObject{SHA: commit.SHA}}, true)
	} else {
		_, resp, err = in.gh.Git.CreateRef(ctx, owner, repo, &gh.Reference{Ref: gh.String("refs/heads/" + branch), Object: &gh.GitObject{SHA: commit.SHA}})
	}
	if err := classify(op+": move branch", resp, err, in.now()); err != nil {
		return "", err
	}
	return commit.GetSHA(), nil
}
