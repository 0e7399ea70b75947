package pipeline

import "fmt"

// PastedReason is a grade's reason when a hidden test of its ticket was
// seen pasted, without its canary, where the implementer can read it:
// where, never what matched (that is on the card, for the requester).
func PastedReason(seenIn, url string) string {
	s := "a hidden test of this ticket was seen pasted, without its canary, into " + seenIn
	if url != "" {
		s += fmt.Sprintf(" (%s)", url)
	}
	return s + ": the implementer could read it"
}
