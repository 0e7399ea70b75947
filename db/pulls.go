package db

import (
	"context"
	"fmt"
	"time"
)

// PullRequest is a pull request as last seen, with the issues its body
// closes.
type PullRequest struct {
	RepositoryID int64
	Number       int
	HeadSHA      string
	Author       string
	Open         bool
	// Links are the issue numbers, in the same repository, its body
	// closes.
	Links     []int
	UpdatedAt time.Time
}

// UpsertPullRequest records a pull request's head, state and links,
// replacing the links it had.
func (t *Tx) UpsertPullRequest(ctx context.Context, pr PullRequest) error {
	at := t.dia.time(now())
	if _, err := t.q.exec(ctx, `INSERT INTO pull_requests (repository_id, number, head_sha, author, open, updated_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (repository_id, number) DO UPDATE SET head_sha = excluded.head_sha, author = excluded.author,
open = excluded.open, updated_at = excluded.updated_at`, pr.RepositoryID, pr.Number, pr.HeadSHA, pr.Author, pr.Open, at); err != nil {
		return fmt.Errorf("record pull request #%d: %w", pr.Number, err)
	}
	if _, err := t.q.exec(ctx, "DELETE FROM pull_links WHERE repository_id = $1 AND pr_number = $2", pr.RepositoryID, pr.Number); err != nil {
		return fmt.Errorf("record links of pull request #%d: %w", pr.Number, err)
	}
	for _, issue := range pr.Links {
		if _, err := t.q.exec(ctx, `INSERT INTO pull_links (repository_id, pr_number, issue_number) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`, pr.RepositoryID, pr.Number, issue); err != nil {
			return fmt.Errorf("record links of pull request #%d: %w", pr.Number, err)
		}
	}
	return nil
}

// PullRequest returns a pull request with its links; ErrNotFound when it
// was never seen.
func (t *Tx) PullRequest(ctx context.Context, repositoryID int64, number int) (PullRequest, error) {
	pr := PullRequest{RepositoryID: repositoryID, Number: number}
	err := t.q.queryRow(ctx, "SELECT head_sha, author, open, updated_at FROM pull_requests WHERE repository_id = $1 AND number = $2",
		repositoryID, number).Scan(&pr.HeadSHA, &pr.Author, &pr.Open, timeCol{&pr.UpdatedAt})
	if err != nil {
		return PullRequest{}, fmt.Errorf("get pull request #%d: %w", number, err)
	}
	rs, err := t.q.query(ctx, "SELECT issue_number FROM pull_links WHERE repository_id = $1 AND pr_number = $2 ORDER BY issue_number", repositoryID, number)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get links of pull request #%d: %w", number, err)
	}
	defer rs.Close()
	for rs.Next() {
		var n int
		if err := rs.Scan(&n); err != nil {
			return PullRequest{}, fmt.Errorf("get links of pull request #%d: %w", number, err)
		}
		pr.Links = append(pr.Links, n)
	}
	return pr, rs.Err()
}

// OpenPullsClosing lists the open pull requests whose bodies close an
// issue, by number (their Links are not filled).
func (t *Tx) OpenPullsClosing(ctx context.Context, repositoryID int64, issue int) ([]PullRequest, error) {
	rs, err := t.q.query(ctx, `SELECT p.number, p.head_sha, p.author, p.updated_at FROM pull_requests p
JOIN pull_links l ON l.repository_id = p.repository_id AND l.pr_number = p.number
WHERE p.repository_id = $1 AND l.issue_number = $2 AND p.open ORDER BY p.number`, repositoryID, issue)
	if err != nil {
		return nil, fmt.Errorf("list pull requests closing #%d: %w", issue, err)
	}
	defer rs.Close()
	var prs []PullRequest
	for rs.Next() {
		pr := PullRequest{RepositoryID: repositoryID, Open: true}
		if err := rs.Scan(&pr.Number, &pr.HeadSHA, &pr.Author, timeCol{&pr.UpdatedAt}); err != nil {
			return nil, fmt.Errorf("list pull requests closing #%d: %w", issue, err)
		}
		prs = append(prs, pr)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list pull requests closing #%d: %w", issue, err)
	}
	return prs, nil
}
