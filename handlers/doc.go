// Package handlers holds testfirst's HTTP side: webhook intake, health,
// readiness, metrics, the app's registration from a manifest, and the
// approval card's pages.
//
// Intake answers fast: it verifies the signature, records the delivery and
// its jobs through the app's Intake in one transaction, and returns 202.
// Nothing slow happens in the request: no GitHub call, no Docker, no
// storage.
//
// The approval card (Card) signs people in with GitHub's OAuth web flow and
// keeps who they are in a signed cookie. It renders server-side pages from
// the app's Cards interface, which decides who may see what: anything a
// person may not see is the same 404 as what does not exist. Decisions are
// POSTs behind cross-origin protection; no page needs JavaScript.
package handlers
