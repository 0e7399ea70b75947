package card

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCardRequesterIsAnAccountNotALogin: the requester's rights (the
// card, the runner's output, decisions) belong to the account that
// labelled the issue, known by its numeric id, not to whoever holds its
// login later. The requester renames their account; someone else takes
// the freed login and signs in with it: they get what a reader gets (the
// ticket's summary, a grade's details without the output), never the
// card. The requester's own account keeps its rights.
func TestCardRequesterIsAnAccountNotALogin(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	grade := f.addGrade(t, v, `{"verdict":"fail","trust":"isolated","counts":{"passed":1,"failed":1,"total":2},"output":"ran the runner"}`)
	gradePath := fmt.Sprintf("/grades/%d", grade)
	f.gh.SetPermission(cardOwner, cardRepo, requester, "read")

	// The requester's account: the card (with its decision forms) and the output.
	b := f.signIn(t, requester)
	if code, body, _ := b.get(t, cardPath); code != http.StatusOK || !strings.Contains(body, "/approve") {
		t.Fatalf("the requester's card: %d, want it with its decision forms:\n%s", code, body)
	}
	if _, body, _ := b.get(t, gradePath); !strings.Contains(body, "ran the runner") {
		t.Errorf("the requester's grade page lacks the runner's output:\n%s", body)
	}

	// Someone else now holds the login.
	f.gh.ClaimLogin(requester)
	c := f.signIn(t, requester)
	if code, body, _ := c.get(t, cardPath); strings.Contains(body, "/approve") || strings.Contains(body, "/reject") {
		t.Errorf("the login's new holder gets the requester's card: %d\n%s", code, body)
	}
	if _, body, _ := c.get(t, gradePath); strings.Contains(body, "ran the runner") {
		t.Errorf("the login's new holder reads the runner's output:\n%s", body)
	}
	if code, _, _ := c.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v.Digest}, "reason": {"taken over"}}); code == http.StatusOK || code == http.StatusSeeOther {
		t.Errorf("the login's new holder rejected v1: %d", code)
	}
}
