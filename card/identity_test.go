package card

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/testfirst-app/testfirst/store"
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

// TestCardEnforceOneAccountSignsOnce: under enforce the requester signs,
// renames their account and signs again under the new login. Both
// signatures are one person's: the second is refused and the version
// waits. A second approver's signature completes it.
func TestCardEnforceOneAccountSignsOnce(t *testing.T) {
	f := newCardFixture(t, "approval:\n  policy: enforce\n")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	form := url.Values{"digest": {v.Digest}}
	if code, _, resp := f.signIn(t, requester).post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=signed") {
		t.Fatalf("dev signs: %d %q", code, resp.Header.Get("Location"))
	}

	f.gh.RenameLogin(requester, "dev-renamed")
	code, body, _ := f.signIn(t, "dev-renamed").post(t, cardPath+"/versions/1/approve", form)
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.State != store.StatePending {
		t.Fatalf("the requester's second signature, under a new login, approved v1 (%+v)", got.Decision)
	}
	if code != http.StatusConflict || !strings.Contains(body, "You signed v1") {
		t.Errorf("the requester's second signature under a new login: %d, want 409 saying they signed:\n%s", code, body)
	}

	// Honest: another person with write access completes it.
	if code, _, resp := f.signIn(t, "wes").post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=approved") {
		t.Fatalf("wes completes: %d %q", code, resp.Header.Get("Location"))
	}
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.State != store.StateApproved || got.Decision.By != "dev, wes" {
		t.Errorf("store: %+v", got.Decision)
	}
}

// TestCardEnforceRequesterSignsByAccount: under enforce the requester's
// signature is the requester account's, whatever login signs. The
// requester renames their account and a colleague with write access takes
// the freed login: the colleague's signature is a second approver's, so a
// maintainer's after it does not complete the approval; the requester,
// signing under the new login, does.
func TestCardEnforceRequesterSignsByAccount(t *testing.T) {
	f := newCardFixture(t, "approval:\n  policy: enforce\n")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	form := url.Values{"digest": {v.Digest}}
	f.gh.RenameLogin(requester, "dev-renamed")
	f.gh.ClaimLogin(requester)
	f.gh.SetPermission(cardOwner, cardRepo, requester, "write")

	if code, _, _ := f.signIn(t, requester).post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther {
		t.Fatalf("the login's new holder signs: %d", code)
	}
	f.signIn(t, "max").post(t, cardPath+"/versions/1/approve", form)
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.State != store.StatePending {
		t.Fatalf("approved without the requester's signature: the login's new holder counted as the requester (%+v)", got.Decision)
	}

	// Honest: the requester, renamed, is still the requester.
	code, body, resp := f.signIn(t, "dev-renamed").post(t, cardPath+"/versions/1/approve", form)
	if code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=approved") {
		t.Fatalf("the renamed requester completes: %d %q\n%s", code, resp.Header.Get("Location"), body)
	}
}
