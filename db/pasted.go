package db

import (
	"context"
	"fmt"
	"time"
)

// PastedSighting is a hidden test seen pasted, without its canary, into
// text testfirst read: where, and what of the hidden tests matched (names
// and counts, never test text).
type PastedSighting struct {
	ID       int64
	TicketID int64
	// SeenIn says where, for anyone who reads the repository ("comment on
	// #12", "description of pull request #14", "the implementer's task,
	// round 2"); URL links it when GitHub has one; Author wrote it.
	SeenIn string
	URL    string
	Author string
	// Version, HiddenFile and Test are what matched (Test "" for pieces
	// of several tests of the file); Matched of Of its new shingles, on
	// lines FirstLine to LastLine of the text.
	Version    int
	HiddenFile string
	Test       string
	Matched    int
	Of         int
	FirstLine  int
	LastLine   int
	SeenAt     time.Time
}

// AddPastedSighting records s once per place and hidden test; created
// says whether it is new.
func (t *Tx) AddPastedSighting(ctx context.Context, s PastedSighting) (bool, error) {
	if s.SeenAt.IsZero() {
		s.SeenAt = now()
	}
	n, err := t.q.exec(ctx, `INSERT INTO pasted_sightings (ticket_id, seen_in, url, author, version, hidden_file, test, matched, of_total,
		first_line, last_line, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (ticket_id, seen_in, version, hidden_file, test) DO NOTHING`,
		s.TicketID, s.SeenIn, s.URL, s.Author, s.Version, s.HiddenFile, s.Test, s.Matched, s.Of, s.FirstLine, s.LastLine, t.dia.time(s.SeenAt))
	if err != nil {
		return false, fmt.Errorf("record pasted sighting on ticket %d: %w", s.TicketID, err)
	}
	return n > 0, nil
}

// PastedSightings lists a ticket's pasted sightings, oldest first.
func (t *Tx) PastedSightings(ctx context.Context, ticketID int64) ([]PastedSighting, error) {
	rs, err := t.q.query(ctx, `SELECT id, ticket_id, seen_in, url, author, version, hidden_file, test, matched, of_total, first_line, last_line, seen_at
		FROM pasted_sightings WHERE ticket_id = $1 ORDER BY id`, ticketID)
	if err != nil {
		return nil, fmt.Errorf("read pasted sightings of ticket %d: %w", ticketID, err)
	}
	defer rs.Close()
	var out []PastedSighting
	for rs.Next() {
		var s PastedSighting
		if err := rs.Scan(&s.ID, &s.TicketID, &s.SeenIn, &s.URL, &s.Author, &s.Version, &s.HiddenFile, &s.Test, &s.Matched, &s.Of,
			&s.FirstLine, &s.LastLine, timeCol{&s.SeenAt}); err != nil {
			return nil, fmt.Errorf("read pasted sightings of ticket %d: %w", ticketID, err)
		}
		out = append(out, s)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read pasted sightings of ticket %d: %w", ticketID, err)
	}
	return out, nil
}

// RepositoryTickets lists the tickets of a repository, oldest first.
func (t *Tx) RepositoryTickets(ctx context.Context, repositoryID int64) ([]Ticket, error) {
	var out []Ticket
	rs, err := t.q.query(ctx, "SELECT id FROM tickets WHERE repository_id = $1 ORDER BY id", repositoryID)
	if err != nil {
		return nil, fmt.Errorf("read tickets of repository %d: %w", repositoryID, err)
	}
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			rs.Close()
			return nil, fmt.Errorf("read tickets of repository %d: %w", repositoryID, err)
		}
		ids = append(ids, id)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read tickets of repository %d: %w", repositoryID, err)
	}
	for _, id := range ids {
		tk, err := t.Ticket(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, tk)
	}
	return out, nil
}
