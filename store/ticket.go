package store

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Ticket names the issue a set of hidden tests is written for.
type Ticket struct {
	// Installation is the GitHub App installation id; 0 for tickets made
	// from the command line before the app knows the installation.
	Installation int64
	Owner, Repo  string
	Issue        int
}

var ticketPattern = regexp.MustCompile(`^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/([A-Za-z0-9._-]{1,100})#([1-9][0-9]{0,9})$`)

// ParseTicket reads "owner/repo#N".
func ParseTicket(s string) (Ticket, error) {
	m := ticketPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || m[2] == "." || m[2] == ".." {
		return Ticket{}, fmt.Errorf("ticket %q: want owner/repo#N, e.g. octo-org/widgets#12", s)
	}
	n, err := strconv.Atoi(m[3])
	if err != nil {
		return Ticket{}, fmt.Errorf("ticket %q: issue number: %w", s, err)
	}
	return Ticket{Owner: m[1], Repo: m[2], Issue: n}, nil
}

// String returns "owner/repo#N".
func (t Ticket) String() string { return fmt.Sprintf("%s/%s#%d", t.Owner, t.Repo, t.Issue) }

// prefix is where the ticket's objects live: per installation,
// repository, ticket. Owner and repo names are case-insensitive on GitHub.
func (t Ticket) prefix() string {
	return fmt.Sprintf("tickets/%d/%s/%s/%d/", t.Installation, strings.ToLower(t.Owner), strings.ToLower(t.Repo), t.Issue)
}

func (t Ticket) validate() error {
	if _, err := ParseTicket(t.String()); err != nil {
		return err
	}
	if t.Installation < 0 {
		return fmt.Errorf("ticket %s: negative installation id", t)
	}
	return nil
}
