package github

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"

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
	tree, err := in.createTree(ctx, op, owner, repo, baseCommit.GetTree().GetSHA(), changes)
	if err != nil {
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

// createTree makes the blobs of changes and a tree of them on baseTree.
func (in *Installation) createTree(ctx context.Context, op, owner, repo, baseTree string, changes []FileChange) (*gh.Tree, error) {
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
				return nil, err
			}
			e.SHA = b.SHA
		}
		entries = append(entries, e)
	}
	tree, resp, err := in.gh.Git.CreateTree(ctx, owner, repo, baseTree, entries)
	if err := classify(op+": create tree", resp, err, in.now()); err != nil {
		return nil, err
	}
	return tree, nil
}

// ErrBranchMoved is wrapped by CommitOnto's error when the branch's head
// is no longer the commit it was to follow.
var ErrBranchMoved = errors.New("the branch moved on: its head is no longer the commit this one follows")

// CommitOnto commits changes on top of parent to branch, a branch that is
// not testfirst's (a pull request's head): the commit's tree is parent's
// with the changes, and the branch moves to it only as a fast forward from
// parent, never by force. A branch whose head is no longer parent is left
// as it is, and the error wraps ErrBranchMoved. The commit is made with the
// installation's token, so GitHub makes the app its author.
func (in *Installation) CommitOnto(ctx context.Context, owner, repo, branch, parent, message string, changes []FileChange) (string, error) {
	op := fmt.Sprintf("commit onto %s of %s/%s", branch, owner, repo)
	if len(changes) == 0 {
		return "", &APIError{Op: op, Err: errors.New("no change to commit")}
	}
	ref, resp, err := in.gh.Git.GetRef(ctx, owner, repo, "heads/"+branch)
	if err := classify(op+": get branch", resp, err, in.now()); err != nil {
		return "", err
	}
	if ref.GetObject().GetSHA() != parent {
		return "", &APIError{Op: op, Err: fmt.Errorf("%w (%s, not %s)", ErrBranchMoved, ref.GetObject().GetSHA(), parent)}
	}
	parentCommit, resp, err := in.gh.Git.GetCommit(ctx, owner, repo, parent)
	if err := classify(op+": get parent commit "+parent, resp, err, in.now()); err != nil {
		return "", err
	}
	tree, err := in.createTree(ctx, op, owner, repo, parentCommit.GetTree().GetSHA(), changes)
	if err != nil {
		return "", err
	}
	commit, resp, err := in.gh.Git.CreateCommit(ctx, owner, repo, &gh.Commit{Message: gh.String(message), Tree: &gh.Tree{SHA: tree.SHA},
		Parents: []*gh.Commit{{SHA: gh.String(parent)}}}, nil)
	if err := classify(op+": create commit", resp, err, in.now()); err != nil {
		return "", err
	}
	_, resp, err = in.gh.Git.UpdateRef(ctx, owner, repo, &gh.Reference{Ref: gh.String("refs/heads/" + branch), Object: &gh.GitObject{SHA: commit.SHA}}, false)
	if err := classify(op+": move branch", resp, err, in.now()); err != nil {
		// GitHub refuses a move that is not a fast forward with 422.
		if resp != nil && resp.StatusCode == http.StatusUnprocessableEntity {
			return "", &APIError{Op: op, Status: resp.StatusCode, Err: fmt.Errorf("%w: %v", ErrBranchMoved, err)}
		}
		return "", err
	}
	return commit.GetSHA(), nil
}

// Commit is a commit as the Git data API shows it.
type Commit struct {
	SHA string
	// Tree is the commit's tree id.
	Tree    string
	Message string
	Parents []string
	// Author is the author's name.
	Author string
}

// GitCommit reads commit sha of owner/repo.
func (in *Installation) GitCommit(ctx context.Context, owner, repo, sha string) (Commit, error) {
	c, resp, err := in.gh.Git.GetCommit(ctx, owner, repo, sha)
	if err := classify(fmt.Sprintf("get commit %s of %s/%s", sha, owner, repo), resp, err, in.now()); err != nil {
		return Commit{}, err
	}
	out := Commit{SHA: c.GetSHA(), Tree: c.GetTree().GetSHA(), Message: c.GetMessage(), Author: c.GetAuthor().GetName()}
	for _, p := range c.Parents {
		out.Parents = append(out.Parents, p.GetSHA())
	}
	return out, nil
}

// TreeWith returns the id of the tree that is parent's with changes: the
// tree a commit of changes onto parent has. It makes the blobs and the
// tree (Git objects no ref names until a commit does), nothing else.
func (in *Installation) TreeWith(ctx context.Context, owner, repo, parent string, changes []FileChange) (string, error) {
	op := fmt.Sprintf("tree of %s with changes in %s/%s", parent, owner, repo)
	c, resp, err := in.gh.Git.GetCommit(ctx, owner, repo, parent)
	if err := classify(op+": get commit "+parent, resp, err, in.now()); err != nil {
		return "", err
	}
	tree, err := in.createTree(ctx, op, owner, repo, c.GetTree().GetSHA(), changes)
	if err != nil {
		return "", err
	}
	return tree.GetSHA(), nil
}
