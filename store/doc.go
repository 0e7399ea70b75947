// Package store keeps the versions of a ticket's hidden tests: written once,
// canaried, bound to a digest, and sealed so that only the grader can read
// them.
//
// The web and webhook side holds a Writer: it can create versions, read
// their metadata and the masked copy the approval card shows, and record
// decisions, but no method of it returns a canaried test body or a canary
// token (the token lives only inside the sealed tests). The grader holds a
// Reader, which opens the approved version of a ticket, verifies it against
// its digest, and checks that the card copy the requester reviewed is its
// masked rendering. Test bodies are encrypted with age to the grader's
// X25519 recipients before they reach any backend; the masked card copy is
// encrypted to the card's recipients and the grader's. Backends (a local directory, a GCS
// bucket) only ever create objects: a version is never replaced or deleted.
package store
