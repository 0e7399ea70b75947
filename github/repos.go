package github

import (
	"context"
	"fmt"
	"io"
	"net/http"

	gh "github.com/google/go-github/v66/github"
)

// Repository is what testfirst needs to know of a repository.
type Repository struct {
	Owner, Name   string
	DefaultBranch string
	Private       bool
}

// Repository fetches owner/repo.
func (in *Installation) Repository(ctx context.Context, owner, repo string) (Repository, error) {
	r, resp, err := in.gh.Repositories.Get(ctx, owner, repo)
	if err := classify(fmt.Sprintf("get repository %s/%s", owner, repo), resp, err, in.now()); err != nil {
		return Repository{}, err
	}
	return Repository{Owner: r.GetOwner().GetLogin(), Name: r.GetName(), DefaultBranch: r.GetDefaultBranch(), Private: r.GetPrivate()}, nil
}

// BranchHead returns the commit sha a branch points at.
func (in *Installation) BranchHead(ctx context.Context, owner, repo, branch string) (string, error) {
	b, resp, err := in.gh.Repositories.GetBranch(ctx, owner, repo, branch, 0)
	if err := classify(fmt.Sprintf("get branch %s of %s/%s", branch, owner, repo), resp, err, in.now()); err != nil {
		return "", err
	}
	return b.GetCommit().GetSHA(), nil
}

// File returns the content of path at ref; the error wraps ErrNotFound
// when there is no such file.
func (in *Installation) File(ctx context.Context, owner, repo, ref, path string) ([]byte, error) {
	op := fmt.Sprintf("get %s at %s of %s/%s", path, ref, owner, repo)
	f, _, resp, err := in.gh.Repositories.GetContents(ctx, owner, repo, path, &gh.RepositoryContentGetOptions{Ref: ref})
	if err := classify(op, resp, err, in.now()); err != nil {
		return nil, err
	}
	if f == nil {
		return nil, &APIError{Op: op, Err: fmt.Errorf("%w: it is a directory", ErrNotFound)}
	}
	content, err := f.GetContent()
	if err != nil {
		return nil, &APIError{Op: op, Err: err}
	}
	return []byte(content), nil
}

// Tarball streams the gzip tarball of the tree at ref, as GitHub serves it
// (one top directory). The caller closes it.
func (in *Installation) Tarball(ctx context.Context, owner, repo, ref string) (io.ReadCloser, error) {
	op := fmt.Sprintf("download tarball of %s/%s at %s", owner, repo, ref)
	u, resp, err := in.gh.Repositories.GetArchiveLink(ctx, owner, repo, gh.Tarball, &gh.RepositoryContentGetOptions{Ref: ref}, 3)
	if err := classify(op, resp, err, in.now()); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &APIError{Op: op, Err: err}
	}
	// The archive URL carries its own short-lived token; the plain client
	// sends no credentials of ours to wherever it points.
	res, err := in.plain.Do(req)
	if err != nil {
		return nil, &APIError{Op: op, Retryable: true, Err: err}
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, &APIError{Op: op, Status: res.StatusCode, Retryable: res.StatusCode >= 500, Err: fmt.Errorf("archive download answered %s", res.Status)}
	}
	return res.Body, nil
}

// Permission returns login's permission on owner/repo: "admin",
// "maintain", "write", "triage", "read" or "none".
func (in *Installation) Permission(ctx context.Context, owner, repo, login string) (string, error) {
	p, resp, err := in.gh.Repositories.GetPermissionLevel(ctx, owner, repo, login)
	if err := classify(fmt.Sprintf("get permission of %s on %s/%s", login, owner, repo), resp, err, in.now()); err != nil {
		return "", err
	}
	if rn := p.GetRoleName(); rn != "" {
		return rn, nil
	}
	return p.GetPermission(), nil
}

// Collaborators returns the logins of the users with at least permission
// on owner/repo ("pull", "triage", "push", "maintain" or "admin"), every
// page of them, bots left out.
func (in *Installation) Collaborators(ctx context.Context, owner, repo, permission string) ([]string, error) {
	opts := &gh.ListCollaboratorsOptions{Permission: permission, ListOptions: gh.ListOptions{PerPage: 100}}
	var out []string
	for {
		users, resp, err := in.gh.Repositories.ListCollaborators(ctx, owner, repo, opts)
		if err := classify(fmt.Sprintf("list the collaborators of %s/%s with %s", owner, repo, permission), resp, err, in.now()); err != nil {
			return nil, err
		}
		for _, u := range users {
			if u.GetType() != "Bot" {
				out = append(out, u.GetLogin())
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
