// Package pipeline is testfirst's domain: the test-first pipeline's rules,
// with no I/O. It holds the typed states of tickets, versions, grades and
// announcements and the transitions between them; the approval policy and
// the rejection cap; criteria coverage; command parsing; which tickets a
// pull request links to; the repository's config; and what check runs and
// issue comments say. The jobs and the card read the world, call these
// functions, and write what they decide. Its dependencies hold no
// database, GitHub, River, Docker engine or net/http.
package pipeline
