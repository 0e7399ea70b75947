// Package handlers holds testfirst's HTTP side: webhook intake, health,
// readiness, metrics and the app's registration from a manifest (the
// approval card's pages come later).
//
// Intake answers fast: it verifies the signature, records the delivery and
// its jobs through the app's Intake in one transaction, and returns 202.
// Nothing slow happens in the request: no GitHub call, no Docker, no
// storage.
package handlers
