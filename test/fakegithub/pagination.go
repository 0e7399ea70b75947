package fakegithub

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

const (
	// defaultPerPage and maxPerPage are GitHub's page sizes.
	defaultPerPage = 30
	maxPerPage     = 100
)

// perPage reads the per_page query parameter like GitHub: default 30,
// at most 100.
func perPage(q url.Values) int {
	n, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || n <= 0 {
		return defaultPerPage
	}
	return min(n, maxPerPage)
}

// page slices n items by the page and per_page query parameters and builds
// GitHub's Link header (prev, next, last, first) for it.
func (c *call) page(n int) (start, end int, link string) {
	q := c.r.URL.Query()
	per := perPage(q)
	pg, err := strconv.Atoi(q.Get("page"))
	if err != nil || pg < 1 {
		pg = 1
	}
	last := max(1, (n+per-1)/per)
	start = min(n, (pg-1)*per)
	end = min(n, start+per)
	var rels []string
	add := func(p int, rel string) {
		q.Set("page", strconv.Itoa(p))
		rels = append(rels, fmt.Sprintf("<%s?%s>; rel=%q", c.s.apiURL(strings.TrimPrefix(c.r.URL.Path, "/")), q.Encode(), rel))
	}
	if pg > 1 {
		add(min(pg-1, last), "prev")
	}
	if pg < last {
		add(pg+1, "next")
		add(last, "last")
	}
	if pg > 1 {
		add(1, "first")
	}
	return start, end, strings.Join(rels, ", ")
}

// withLink adds a Link header when there is one.
func withLink(resp *response, link string) *response {
	if link != "" {
		resp.header.Set("Link", link)
	}
	return resp
}
