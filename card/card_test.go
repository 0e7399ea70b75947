package card

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/testfirst-app/testfirst/db"
	"github.com/testfirst-app/testfirst/handlers"
	"github.com/testfirst-app/testfirst/pipeline"
	"github.com/testfirst-app/testfirst/report"
	"github.com/testfirst-app/testfirst/store"
)

// realCanary matches a canary token as the store makes it; no page may
// ever show one.
var realCanary = regexp.MustCompile(`tfc-[0-9a-f]{32}`)

// writerCriteria maps two of the issue's three criteria (by number and by
// text) and one the issue does not list.
var writerCriteria = map[string][]string{
	"AC1":                         {"tests/hidden/test_totals.py::test_whole"},
	"an empty list sums to zero.": {"tests/hidden/test_totals.py::test_empty"},
	"keeps old totals":            {"tests/hidden/test_totals.py::test_existing", "tests/hidden/test_totals.py::test_gone"},
}

const cardPath = "/tickets/" + cardOwner + "/" + cardRepo + "/1"

// TestCardAccess walks every page for every kind of person: the requester
// and everyone with write access see the ticket; someone who may only
// read sees the grade's details (what its check run says, never the
// output) and, where the card would be, the ticket's summary (never a
// test body, a reason or a decision's form); someone GitHub does not know
// gets 404 everywhere, the same as for a ticket that does not exist; a signed-out
// browser is sent to sign in. A collaborator with write access may not
// reject (only the requester and maintainers decide alone).
func TestCardAccess(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	grade := f.addGrade(t, v, `{"verdict":"fail","trust":"isolated","counts":{"passed":1,"failed":1,"total":2},"tests":[{"id":"tests/hidden/test_totals.py::test_whole","outcome":"passed"}],"output":"ran the runner"}`)
	gradePath := fmt.Sprintf("/grades/%d", grade)

	tests := []struct {
		login                 string
		sees, details, output bool
	}{
		{"dev", true, true, true}, {"ada", true, true, true}, {"max", true, true, true},
		{"wes", true, true, false}, {"sam", false, true, false}, {"ghost", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.login, func(t *testing.T) {
			b := f.signIn(t, tt.login)
			_, missing, _ := b.get(t, "/tickets/"+cardOwner+"/"+cardRepo+"/99")
			_, home, _ := b.get(t, "/")
			if got := strings.Contains(home, cardPath); got != tt.sees {
				t.Errorf("home lists the ticket: %v, want %v", got, tt.sees)
			}
			for _, path := range []string{cardPath, cardPath + "/versions/1"} {
				code, body, _ := b.get(t, path)
				if tt.sees {
					if code != http.StatusOK {
						t.Errorf("GET %s: %d, want 200", path, code)
					}
					continue
				}
				if !tt.details {
					if code != http.StatusNotFound || body != missing {
						t.Errorf("GET %s: %d, want the 404 of a ticket that does not exist", path, code)
					}
					continue
				}
				if code != http.StatusOK || !strings.Contains(body, "as its check runs tell it") || !strings.Contains(body, "Sums of whole numbers are exact") {
					t.Errorf("GET %s by a reader: %d, want the ticket's summary:\n%s", path, code, body)
				}
				for _, secret := range []string{"assert total", "tfc-", "reference patch", "/versions/1/approve", "/versions/1/reject", "Reject v1", "Approve v1"} {
					if strings.Contains(body, secret) {
						t.Errorf("GET %s by a reader shows %q", path, secret)
					}
				}
			}
			code, body, _ := b.get(t, gradePath)
			switch {
			case tt.details && code != http.StatusOK:
				t.Errorf("GET %s: %d, want the grade's details", gradePath, code)
			case !tt.details && (code != http.StatusNotFound || body != missing):
				t.Errorf("GET %s: %d, want 404", gradePath, code)
			case tt.details:
				for _, want := range []string{"tests/hidden/test_totals.py::test_whole", "trust isolated", "Trust isolated: the hidden tests ran as root-owned files",
					"<h2>The approved tests</h2>", "of them guard tests"} {
					if !strings.Contains(body, want) {
						t.Errorf("the grade's details lack %q", want)
					}
				}
				if got := strings.Contains(body, "ran the runner"); got != tt.output {
					t.Errorf("the grade page shows the output: %v, want %v", got, tt.output)
				}
				if got := strings.Contains(body, `href="`+cardPath+`"`); !got {
					t.Errorf("the grade page does not link the ticket's page")
				}
			}
			if tt.sees && tt.output {
				return
			}
			form := url.Values{"digest": {v.Digest}, "reason": {"no"}}
			for _, action := range []string{"approve", "reject"} {
				code, body, _ := b.post(t, cardPath+"/versions/1/"+action, form)
				if tt.sees {
					if code != http.StatusConflict {
						t.Errorf("POST %s by a collaborator with write access under single: %d, want 409", action, code)
					}
					continue
				}
				if code != http.StatusNotFound || body != missing {
					t.Errorf("POST %s: %d, want 404", action, code)
				}
			}
		})
	}
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.Decision != nil {
		t.Fatalf("someone without access decided: %+v", got.Decision)
	}
	// Those who see the ticket may decide.
	if code, _, _ := f.signIn(t, "max").post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v.Digest}, "reason": {"no"}}); code != http.StatusSeeOther {
		t.Errorf("a maintainer rejects: %d", code)
	}

	t.Run("signed out", func(t *testing.T) {
		b := f.signIn(t, "")
		code, body, _ := b.get(t, "/")
		if code != http.StatusOK || !strings.Contains(body, `href="/login"`) || strings.Contains(body, cardPath) {
			t.Errorf("home: %d, want the sign-in page", code)
		}
		for _, path := range []string{cardPath, gradePath, "/tickets/" + cardOwner + "/" + cardRepo + "/99"} {
			code, _, resp := b.get(t, path)
			if loc := resp.Header.Get("Location"); code != http.StatusSeeOther || loc != "/login?next="+url.QueryEscape(path) {
				t.Errorf("GET %s: %d to %q, want to sign in and come back", path, code, loc)
			}
		}
		if code, _, _ := b.post(t, cardPath+"/versions/1/approve", url.Values{"digest": {v.Digest}}); code != http.StatusNotFound {
			t.Errorf("POST approve: %d, want 404", code)
		}
	})
}

// TestCardShowsVersion: the card shows the criteria map with the
// uncovered one flagged first, the guard test, the ids as the implementer
// sees them, the masked files and never the real canary.
func TestCardShowsVersion(t *testing.T) {
	f := newCardFixture(t, "")
	b := f.signIn(t, requester)
	// No writer agent is configured: the card says nobody writes them and
	// how to upload, not that a writer is at work.
	if _, body, _ := b.get(t, cardPath); !strings.Contains(body, "No hidden tests yet") || !strings.Contains(body, "no writer agent is at work on this ticket") ||
		strings.Contains(body, "is at work (round") {
		t.Errorf("before any version: %s", body)
	}
	v := f.push(t, writerCriteria)
	_, body, _ := b.get(t, cardPath)
	for _, want := range []string{"Base check not run yet", "not ready for review yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("unchecked card lacks %q", want)
		}
	}
	f.sync(t, v, &defaultCheck, true)
	code, body, resp := b.get(t, cardPath)
	if code != 200 {
		t.Fatalf("card: %d", code)
	}
	for _, want := range []string{
		"1 acceptance criterion has no test", "Sums round half to even",
		"this is all the implementer learns", "tests/hidden/test_totals.py::test_whole",
		"1 guard test", "keeps old totals", "Not among the hidden tests", "tests/hidden/test_totals.py::test_gone",
		"tfc-masked", v.Digest, "writer-bot", "Approve v1", "Reject v1", "Policy <strong>single</strong>",
		"From the base commit", "<code>tests/helpers.py</code>", "Left out for size: <code>tests/data/huge.bin</code>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q", want)
		}
	}
	if strings.Index(body, "has no test") > strings.Index(body, "this is all the implementer learns") {
		t.Error("the uncovered criteria are not flagged above the rest")
	}
	if strings.Contains(body, "not a criterion") {
		t.Error("a numbered line inside a code block was taken for a criterion")
	}
	if realCanary.MatchString(body) {
		t.Error("the card shows a real canary token")
	}
	if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", resp.Header)
	}
	if code, _, _ := b.get(t, cardPath+"/versions/2"); code != http.StatusNotFound {
		t.Errorf("a version that does not exist: %d", code)
	}
	if code, css, _ := b.get(t, "/static/card.css"); code != 200 || !strings.Contains(css, ".chroma") {
		t.Errorf("stylesheet: %d", code)
	}
}

// TestCardDecisions: reject with a reason, refuse what was not seen, and
// approve the newest version with its review time; the grader then accepts
// the approved digest.
func TestCardDecisions(t *testing.T) {
	f := newCardFixture(t, "")
	ctx := t.Context()
	b := f.signIn(t, requester)
	v1 := f.push(t, writerCriteria)
	f.sync(t, v1, &defaultCheck, true)

	// A rejection needs a reason.
	code, body, _ := b.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v1.Digest}, "reason": {"  "}})
	if code != http.StatusConflict || !strings.Contains(body, "needs a reason") {
		t.Errorf("reject without reason: %d", code)
	}
	code, _, resp := b.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v1.Digest}, "reason": {"Rounding is not tested"}})
	if code != http.StatusSeeOther || resp.Header.Get("Location") != cardPath+"/versions/1?decided=rejected" {
		t.Fatalf("reject: %d to %q", code, resp.Header.Get("Location"))
	}
	if got, _ := f.store.Version(ctx, f.st, 1); got.State != store.StateRejected || got.Decision.Reason != "Rounding is not tested" || got.Decision.By != requester {
		t.Errorf("store after reject: %+v", got)
	}
	f.checkDB(t, 1, "rejected", "Rounding is not tested")
	if _, body, _ := b.get(t, cardPath+"/versions/1?decided=rejected"); !strings.Contains(body, "Rejected. The reason goes to the writer") || strings.Contains(body, "Approve v1") {
		t.Error("the rejected card does not say so, or still offers approval")
	}
	if _, body, _ := b.get(t, cardPath+"/versions/1?decided=rejected"); !strings.Contains(body, "ticket writing: v1 was rejected") {
		t.Error("the header does not follow the rejection")
	}

	// v2 is pushed but not ready: no approval yet.
	v2 := f.push(t, writerCriteria)
	f.sync(t, v2, nil, false)
	code, body, _ = b.post(t, cardPath+"/versions/2/approve", url.Values{"digest": {v2.Digest}})
	if code != http.StatusConflict || !strings.Contains(body, "not ready for review yet") {
		t.Errorf("approve before ready: %d", code)
	}
	f.sync(t, v2, &defaultCheck, true)

	// The card of v2 is open; v3 arrives before the form is posted.
	v3 := f.push(t, writerCriteria)
	code, body, _ = b.post(t, cardPath+"/versions/2/approve", url.Values{"digest": {v2.Digest}})
	if code != http.StatusConflict || !strings.Contains(body, "v3 was pushed after you opened the card of v2") || !strings.Contains(body, v3.Digest) {
		t.Errorf("approve a superseded version: %d", code)
	}
	f.sync(t, v3, &defaultCheck, true)

	// A digest that is not the version's is refused.
	code, body, _ = b.post(t, cardPath+"/versions/3/approve", url.Values{"digest": {v2.Digest}})
	if code != http.StatusConflict || !strings.Contains(body, "Review the card again") {
		t.Errorf("approve with another digest: %d", code)
	}

	// Approved after a minute on the card: fast.
	f.clock.advance(time.Minute)
	code, _, resp = b.post(t, cardPath+"/versions/3/approve", url.Values{"digest": {v3.Digest}})
	if code != http.StatusSeeOther || resp.Header.Get("Location") != cardPath+"/versions/3?decided=approved" {
		t.Fatalf("approve: %d to %q", code, resp.Header.Get("Location"))
	}
	if got, _ := f.store.Version(ctx, f.st, 3); got.State != store.StateApproved || got.Decision.By != requester || got.Decision.Digest != v3.Digest {
		t.Errorf("store after approve: %+v", got)
	}
	if _, body, _ := b.get(t, cardPath+"/versions/3?decided=approved"); !strings.Contains(body, "ticket approved: pull requests are graded against v3") {
		t.Error("the header does not follow the approval")
	}
	if _, _, err := f.reader.Open(ctx, f.st, v3.Digest); err != nil {
		t.Errorf("the grader refuses the approved version: %v", err)
	}
	row := f.checkDB(t, 3, "approved", "")
	var sigs []db.Approval
	f.db.Tx(ctx, func(tx *db.Tx) error { sigs, _ = tx.Approvals(ctx, row.ID); return nil })
	if len(sigs) != 1 || sigs[0].ApprovedBy != requester || sigs[0].ReviewSeconds != 60 || !sigs[0].Fast {
		t.Errorf("signatures %+v; want dev after 60s, fast", sigs)
	}
	if n := testutil.ToFloat64(f.svc.metrics.approvals.WithLabelValues("true")); n != 1 {
		t.Errorf("fast approvals metric %v", n)
	}
	// Once approved, nothing more to decide.
	if code, body, _ := b.post(t, cardPath+"/versions/3/approve", url.Values{"digest": {v3.Digest}}); code != http.StatusConflict || !strings.Contains(body, "approved already") {
		t.Errorf("second approval: %d", code)
	}

	kinds := f.audit(t)
	if diff := cmp.Diff([]string{"version.rejected", "version.approved"}, kinds); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if f.hooks.count() != 2 {
		t.Errorf("hook called %d times, want 2", f.hooks.count())
	}
	// The history keeps every version, with the rejection's reason.
	_, body, _ = b.get(t, cardPath)
	for _, want := range []string{"v1", "rejected by dev", "Rounding is not tested", "v2", "superseded", "approved by dev"} {
		if !strings.Contains(body, want) {
			t.Errorf("history lacks %q", want)
		}
	}

	// A reader of the repository (the implementer) gets the summary: the
	// approved version, its ids and what each criterion asks, the
	// rejection without its reason.
	_, body, _ = f.signIn(t, "sam").get(t, cardPath)
	for _, want := range []string{"graded against hidden tests <strong>v3</strong>", v3.Digest, "tests/hidden/test_totals.py::test_whole",
		"Sums of whole numbers are exact", "rejected by dev"} {
		if !strings.Contains(body, want) {
			t.Errorf("the reader's summary lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Rounding is not tested") {
		t.Error("the reader's summary shows the rejection's reason")
	}

	// A new version reopens the approval: the card shows it, pending,
	// and the approved one is superseded.
	v4 := f.push(t, writerCriteria)
	f.sync(t, v4, &defaultCheck, true)
	_, body, _ = b.get(t, cardPath)
	if !strings.Contains(body, "Hidden tests v4") || !strings.Contains(body, "Approve v4") || !strings.Contains(body, v4.Digest) {
		t.Error("the card does not show the new version for approval")
	}
	if got, _ := f.store.Version(ctx, f.st, 3); got.State != store.StateSuperseded {
		t.Errorf("v3 is %s after v4, want superseded", got.State)
	}
	if _, _, err := f.reader.Open(ctx, f.st, v3.Digest); err == nil {
		t.Error("the grader still opens the superseded approval")
	}
}

// TestCardEnforce: under policy enforce the requester's signature waits
// for a second approver with write access who is not the requester; the
// card shows who signed; slow approvals are not fast.
func TestCardEnforce(t *testing.T) {
	f := newCardFixture(t, "approval:\n  policy: enforce\n  fast_approval: 5m\n")
	ctx := t.Context()
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	form := url.Values{"digest": {v.Digest}}

	// An admin cannot stand in for the requester.
	f.clock.advance(10 * time.Minute)
	ada := f.signIn(t, "ada")
	if code, _, _ := ada.post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther {
		t.Fatalf("ada signs: %d", code)
	}
	maxi := f.signIn(t, "max")
	if code, body, _ := maxi.post(t, cardPath+"/versions/1/approve", form); code != http.StatusConflict || !strings.Contains(body, "the requester, dev, must sign too") {
		t.Errorf("a second non-requester: %d", code)
	}
	if got, _ := f.store.Version(ctx, f.st, 1); got.State != store.StatePending {
		t.Fatalf("approved with one signature: %+v", got)
	}
	dev := f.signIn(t, requester)
	if _, body, _ := dev.get(t, cardPath); !strings.Contains(body, "<strong>ada</strong>") || !strings.Contains(body, "Policy <strong>enforce</strong>") {
		t.Error("the card does not show ada's signature and the policy")
	}
	code, _, resp := dev.post(t, cardPath+"/versions/1/approve", form)
	if code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=approved") {
		t.Fatalf("dev completes: %d %q", code, resp.Header.Get("Location"))
	}
	got, _ := f.store.Version(ctx, f.st, 1)
	if got.State != store.StateApproved || got.Decision.By != "ada, dev" {
		t.Errorf("store: %+v", got.Decision)
	}
	if diff := cmp.Diff([]string{"version.signed", "version.approved"}, f.audit(t)); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
	if n := testutil.ToFloat64(f.svc.metrics.approvals.WithLabelValues("false")); n != 2 {
		t.Errorf("slow signatures %v, want 2", n)
	}

	// The requester first, then a maintainer.
	f2 := newCardFixture(t, "approval:\n  policy: enforce\n")
	v = f2.push(t, writerCriteria)
	f2.sync(t, v, &defaultCheck, true)
	form = url.Values{"digest": {v.Digest}}
	dev = f2.signIn(t, requester)
	if code, _, resp := dev.post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=signed") {
		t.Fatalf("dev signs: %d", code)
	}
	if code, body, _ := dev.post(t, cardPath+"/versions/1/approve", form); code != http.StatusConflict || !strings.Contains(body, "You signed v1") {
		t.Errorf("dev twice: %d", code)
	}
	if code, _, _ := f2.signIn(t, "max").post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther {
		t.Errorf("max completes: %d", code)
	}
	if got, _ := f2.store.Version(ctx, f2.st, 1); got.State != store.StateApproved || got.Decision.By != "dev, max" {
		t.Errorf("store: %+v", got)
	}

	// The requester, then a collaborator with write access only: the
	// second approver the card asks for can open it and sign.
	f3 := newCardFixture(t, "approval:\n  policy: enforce\n")
	v = f3.push(t, writerCriteria)
	f3.sync(t, v, &defaultCheck, true)
	form = url.Values{"digest": {v.Digest}}
	if code, _, _ := f3.signIn(t, requester).post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther {
		t.Fatalf("dev signs: %d", code)
	}
	wes := f3.signIn(t, "wes")
	if code, body, _ := wes.get(t, cardPath); code != http.StatusOK || !strings.Contains(body, "Approve v1") {
		t.Fatalf("wes, with write access, opens the card: %d, want it with Approve v1", code)
	}
	if code, _, resp := wes.post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=approved") {
		t.Errorf("wes completes: %d", code)
	}
	if got, _ := f3.store.Version(ctx, f3.st, 1); got.State != store.StateApproved || got.Decision.By != "dev, wes" {
		t.Errorf("store: %+v", got)
	}
}

// TestCardCrossOrigin: an approval posted from another site is refused,
// and a GET cannot approve.
func TestCardCrossOrigin(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	b := f.signIn(t, requester)
	form := url.Values{"digest": {v.Digest}}
	for _, h := range [][]string{
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example", "Sec-Fetch-Site", ""},
	} {
		code, body, _ := b.post(t, cardPath+"/versions/1/approve", form, h...)
		if code != http.StatusForbidden || !strings.Contains(body, "posted from another site") {
			t.Errorf("cross-origin post %v: %d", h, code)
		}
	}
	if code, _, _ := b.get(t, cardPath+"/versions/1/approve?digest="+url.QueryEscape(v.Digest)); code != http.StatusMethodNotAllowed {
		t.Errorf("GET approve: %d, want 405", code)
	}
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.Decision != nil {
		t.Fatalf("approved from another site: %+v", got.Decision)
	}
	if code, _, _ := b.post(t, cardPath+"/versions/1/approve", form); code != http.StatusSeeOther {
		t.Errorf("same-origin post: %d", code)
	}
}

// TestCardRejectionCap: after max_rejections the card says the ticket
// stopped, and the count is there for the store sync.
func TestCardRejectionCap(t *testing.T) {
	f := newCardFixture(t, "approval:\n  max_rejections: 2\n")
	b := f.signIn(t, requester)
	for k := 1; k <= 2; k++ {
		v := f.push(t, writerCriteria)
		f.sync(t, v, &defaultCheck, true)
		if code, _, _ := b.post(t, fmt.Sprintf("%s/versions/%d/reject", cardPath, k), url.Values{"digest": {v.Digest}, "reason": {fmt.Sprint("try ", k)}}); code != http.StatusSeeOther {
			t.Fatalf("reject v%d: %d", k, code)
		}
	}
	_, body, _ := b.get(t, cardPath)
	if !strings.Contains(body, "This ticket stopped after 2 rejections") {
		t.Error("the card does not say the ticket stopped")
	}
	_, home, _ := b.get(t, "/")
	if !strings.Contains(home, "stopped after 2 rejections") {
		t.Error("the list does not say the ticket stopped")
	}
	vs, _ := f.store.Versions(t.Context(), f.st)
	cfg, _ := f.svc.repoConfig(t.Context(), db.Repository{InstallationID: cardInst, Owner: cardOwner, Name: cardRepo, DefaultBranch: "main"})
	if n, stopped := rejections(vs), cfg.Config.RejectionCapReached(rejections(vs)); n != 2 || !stopped {
		t.Errorf("TicketStopped = %d, %v; want 2, true", n, stopped)
	}
	var n int
	f.db.Tx(t.Context(), func(tx *db.Tx) error { n, _ = tx.Rejections(t.Context(), f.tk.ID); return nil })
	if n != 2 {
		t.Errorf("db rejections %d", n)
	}
}

// TestCardBrokenConfig: a config that does not parse blocks approvals
// (the policy is unknown) but not rejections.
func TestCardBrokenConfig(t *testing.T) {
	f := newCardFixture(t, "approval:\n  policy: anyone\n")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	b := f.signIn(t, requester)
	code, body, _ := b.post(t, cardPath+"/versions/1/approve", url.Values{"digest": {v.Digest}})
	if code != http.StatusConflict || !strings.Contains(body, "approval.policy") {
		t.Errorf("approve under a broken config: %d", code)
	}
	if code, _, _ := b.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v.Digest}, "reason": {"x"}}); code != http.StatusSeeOther {
		t.Errorf("reject under a broken config: %d", code)
	}
}

// TestCardInvalidVersion: tests that all pass on base, or fail with the
// reference patch, cannot be approved.
func TestCardInvalidVersion(t *testing.T) {
	for name, check := range map[string]pipeline.VersionCheck{
		"all pass on base": {Tests: defaultCheck.Tests, Base: report.BaseCheck{AllPass: true, Counts: report.Counts{Passed: 3, Total: 3}}},
		"reference fails":  {Tests: defaultCheck.Tests, Base: defaultCheck.Base, Reference: &report.ReferenceCheck{Failed: []string{"tests/hidden/test_totals.py::test_whole"}}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newCardFixture(t, "")
			v := f.push(t, writerCriteria)
			f.sync(t, v, &check, true)
			b := f.signIn(t, requester)
			if _, body, _ := b.get(t, cardPath); strings.Contains(body, "Approve v1") || !strings.Contains(body, "cannot be approved") {
				t.Error("the card offers to approve an invalid version")
			}
			if code, _, _ := b.post(t, cardPath+"/versions/1/approve", url.Values{"digest": {v.Digest}}); code != http.StatusConflict {
				t.Errorf("approve: %d", code)
			}
		})
	}
}

// TestCardGradePage: the full report, output included, canaries masked.
func TestCardGradePage(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	rep := report.Report{Verdict: report.VerdictFail, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 1, Failed: 1, Total: 2},
		Tests:  []report.TestResult{{ID: "tests/hidden/test_totals.py::test_whole", Outcome: report.OutcomePassed}, {ID: "tests/hidden/test_totals.py::test_empty", Outcome: report.OutcomeFailed}},
		Output: "# testfirst-canary: tfc-0123456789abcdef0123456789abcdef\nE   assert total([]) == 0\nseen tfc-fedcba9876543210fedcba9876543210 here\n",
		Runner: []string{"python", "-m", "pytest"}, Sentinels: "ok"}
	data, _ := json.Marshal(rep)
	id := f.addGrade(t, v, string(data))
	b := f.signIn(t, requester)
	code, body, _ := b.get(t, fmt.Sprintf("/grades/%d", id))
	if code != 200 {
		t.Fatalf("grade page: %d", code)
	}
	for _, want := range []string{"fail", "trust isolated", "tests/hidden/test_totals.py::test_empty", "failed", "assert total([]) == 0", "tfc-masked", "AC1", "<td>AC1 Sums of whole numbers are exact</td>", "python -m pytest"} {
		if !strings.Contains(body, want) {
			t.Errorf("grade page lacks %q", want)
		}
	}
	if realCanary.MatchString(body) {
		t.Error("the grade page shows a canary token")
	}

	// The grader's sentinels are not the ticket's: the page neither shows
	// them nor counts them.
	rep = report.Report{Verdict: report.VerdictPass, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 2, Total: 2},
		Tests:  []report.TestResult{{ID: "tests/hidden/test_totals.py::test_whole", Outcome: report.OutcomePassed}, {ID: "tests/hidden/test_totals.py::test_empty", Outcome: report.OutcomePassed}},
		Output: sentinelOutput, Sentinels: "ok"}
	data, _ = json.Marshal(rep)
	_, body, _ = b.get(t, fmt.Sprintf("/grades/%d", f.addGrade(t, v, string(data))))
	for _, want := range []string{"collected 2 items", "../hidden/tests/hidden/test_totals.py ..\n", "= 2 passed in 0.05s ="} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	for _, bad := range []string{"sentinel", "collected 4", "AssertionError", "1 failed", "FAILURES", "short test summary"} {
		if strings.Contains(body, bad) {
			t.Errorf("the output shows %q", bad)
		}
	}
	if code, _, _ := b.get(t, "/grades/9999"); code != http.StatusNotFound {
		t.Errorf("missing grade: %d", code)
	}
	// A grade without its report yet.
	id2 := f.addGrade(t, v, "")
	if _, body, _ := b.get(t, fmt.Sprintf("/grades/%d", id2)); !strings.Contains(body, "No report yet") {
		t.Error("a running grade does not say so")
	}
}

// TestCardPermissionCache: GitHub is asked once a minute per person and
// repository, not on every page.
func TestCardPermissionCache(t *testing.T) {
	f := newCardFixture(t, "")
	asked := func() int {
		n := 0
		for _, r := range f.gh.Requests() {
			if strings.HasSuffix(r.Path, "/collaborators/ada/permission") {
				n++
			}
		}
		return n
	}
	b := f.signIn(t, "ada")
	for range 3 {
		b.get(t, cardPath)
	}
	if n := asked(); n != 1 {
		t.Errorf("asked %d times within a minute, want 1", n)
	}
	f.clock.advance(2 * time.Minute)
	b.get(t, cardPath)
	if n := asked(); n != 2 {
		t.Errorf("asked %d times after the cache expired, want 2", n)
	}
}

// addGrade records a grade of version v with a report ("" for none).
func (f *cardFixture) addGrade(t *testing.T, v store.Version, report string) int64 {
	t.Helper()
	ctx := t.Context()
	var id int64
	if err := f.db.Tx(ctx, func(tx *db.Tx) error {
		g, _, err := tx.CreateGrade(ctx, db.Grade{TicketID: f.tk.ID, PRNumber: 2, HeadSHA: fmt.Sprintf("h%d", time.Now().UnixNano()), Digest: v.Digest, VersionNumber: v.Number, InstallationID: cardInst, State: pipeline.GradeCompleted})
		if err != nil {
			return err
		}
		id = g.ID
		if report == "" {
			return nil
		}
		return tx.SetGradeReport(ctx, g.ID, json.RawMessage(report))
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkDB checks version k's row after a decision.
func (f *cardFixture) checkDB(t *testing.T, k int, state, reason string) db.Version {
	t.Helper()
	var row db.Version
	if err := f.db.Tx(t.Context(), func(tx *db.Tx) error {
		var err error
		row, err = tx.Version(t.Context(), f.tk.ID, k)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if string(row.State) != state || row.RejectionReason != reason {
		t.Errorf("db v%d: state %q reason %q, want %q %q", k, row.State, row.RejectionReason, state, reason)
	}
	return row
}

// audit lists the kinds of the ticket's audit events.
func (f *cardFixture) audit(t *testing.T) []string {
	t.Helper()
	var kinds []string
	f.db.Tx(t.Context(), func(tx *db.Tx) error {
		es, err := tx.AuditLog(t.Context(), f.tk.ID)
		for _, e := range es {
			kinds = append(kinds, e.Kind)
		}
		return err
	})
	return kinds
}

// TestCardEnforceConcurrentSigners: the requester and an admin sign at the
// same moment, each before seeing the other's signature; the version still
// ends approved, once.
func TestCardEnforceConcurrentSigners(t *testing.T) {
	f := newCardFixture(t, "approval:\n  policy: enforce\n")
	ctx := t.Context()
	ref := handlers.TicketRef{Owner: cardOwner, Repo: cardRepo, Issue: 1}
	const rounds = 20
	for k := 1; k <= rounds; k++ {
		v := f.push(t, writerCriteria)
		f.sync(t, v, &defaultCheck, true)
		var wg sync.WaitGroup
		results := make([]string, 2)
		for i, login := range []string{requester, "ada"} {
			wg.Go(func() {
				d, err := f.svc.Approve(handlers.WithViewerID(ctx, f.gh.UserID(login)), login, ref, k, v.Digest)
				results[i] = fmt.Sprint(d, err)
			})
		}
		wg.Wait()
		got, _ := f.store.Version(ctx, f.st, k)
		if got.State != store.StateApproved {
			t.Fatalf("round %d: v%d is %s after both signed (%q)", k, k, got.State, results)
		}
		f.checkDB(t, k, "approved", "")
	}
	approved := 0
	for _, kind := range f.audit(t) {
		if kind == "version.approved" {
			approved++
		}
	}
	if approved != rounds {
		t.Errorf("%d version.approved events for %d approvals", approved, rounds)
	}
}

// TestCardRequesterWithoutAccess: a requester who can no longer read the
// repository sees nothing.
func TestCardRequesterWithoutAccess(t *testing.T) {
	f := newCardFixture(t, "")
	f.gh.SetPermission(cardOwner, cardRepo, requester, "none")
	b := f.signIn(t, requester)
	if code, _, _ := b.get(t, cardPath); code != http.StatusNotFound {
		t.Errorf("card: %d, want 404", code)
	}
	if _, home, _ := b.get(t, "/"); strings.Contains(home, cardPath) {
		t.Error("the list shows the ticket")
	}
}

// sentinelOutput is pytest's output of two hidden tests and the grader's
// two sentinels, as the grader keeps it.
const sentinelOutput = `============================= test session starts ==============================
platform linux -- Python 3.11.2, pytest-7.2.1, pluggy-1.0.0+repack
rootdir: /hidden, configfile: ../dev/null
collected 4 items

../hidden/tests/hidden/test_totals.py .F..

=================================== FAILURES ===================================
____________________________ sentinel_must_fail _____________________________

    def sentinel_must_fail():
>       assert not isinstance(result, object)
E       AssertionError: assert not True

/hidden/tests/hidden/test_totals.py:31: AssertionError
=========================== short test summary info ============================
FAILED ../hidden/tests/hidden/test_totals.py::sentinel_must_fail - AssertionErro...
========================= 1 failed, 3 passed in 0.05s =========================
`

// TestCardWithoutCriteriaMap: a version that came without a criteria map
// raises no alarm that criteria have no test; the card says plainly that
// there is no map and how to add one.
func TestCardWithoutCriteriaMap(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, nil)
	f.sync(t, v, &defaultCheck, true)
	_, body, _ := f.signIn(t, requester).get(t, cardPath)
	for _, bad := range []string{"have no test", "has no test", "<strong>no test</strong>", `class="uncovered"`} {
		if strings.Contains(body, bad) {
			t.Errorf("the card shows %q for a version without a criteria map", bad)
		}
	}
	for _, want := range []string{"came without a criteria map", "testfirst tests push --criteria FILE", "not mapped"} {
		if !strings.Contains(body, want) {
			t.Errorf("the card lacks %q", want)
		}
	}
}

// TestCardAuditLog: the ticket's audit page lists every event, newest
// first, decisions with where they were taken, filterable by kind and
// actor, with links; it is shown to whoever sees the card. The
// repository's page is its admins' only.
func TestCardAuditLog(t *testing.T) {
	f := newCardFixture(t, "")
	v1 := f.push(t, writerCriteria)
	f.sync(t, v1, &defaultCheck, true)
	dev := f.signIn(t, requester)
	if code, _, _ := dev.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v1.Digest}, "reason": {"Rounding is not tested"}}); code != http.StatusSeeOther {
		t.Fatalf("reject: %d", code)
	}
	v2 := f.push(t, writerCriteria)
	f.sync(t, v2, &defaultCheck, true)
	if code, _, _ := dev.post(t, cardPath+"/versions/2/approve", url.Values{"digest": {v2.Digest}}); code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	ctx := t.Context()
	// An approval that came into the database from outside the card.
	f.db.Tx(ctx, func(tx *db.Tx) error {
		return tx.AppendAudit(ctx, db.AuditEvent{Actor: "mallory", TicketID: f.tk.ID, Kind: "version.approved", Detail: json.RawMessage(`{"version":2,"digest":"` + v2.Digest + `"}`)})
	})

	code, body, _ := dev.get(t, cardPath+"/audit")
	if code != http.StatusOK {
		t.Fatalf("audit: %d", code)
	}
	approved, rejected := strings.Index(body, "<code>version.approved</code>"), strings.Index(body, "<code>version.rejected</code>")
	if approved < 0 || rejected < 0 || approved > rejected {
		t.Errorf("the log is not newest first (approved at %d, rejected at %d)", approved, rejected)
	}
	for _, want := range []string{"source: the card, signed in with GitHub", "source: the store, outside the card: not proven to be mallory",
		"reason: Rounding is not tested", `href="` + cardPath + `/versions/2"`, `<option value="version.rejected"`} {
		if !strings.Contains(html.UnescapeString(body), want) {
			t.Errorf("the audit page lacks %q", want)
		}
	}
	if !strings.Contains(func() string { _, b, _ := dev.get(t, cardPath); return b }(), `href="`+cardPath+`/audit"`) {
		t.Error("the card does not link its audit log")
	}
	_, body, _ = dev.get(t, cardPath+"/audit?kind=version.rejected")
	if strings.Contains(body, "<code>version.approved</code>") || !strings.Contains(body, "<code>version.rejected</code>") {
		t.Error("the kind filter does not select")
	}
	_, body, _ = dev.get(t, cardPath+"/audit?actor=mallory")
	if strings.Count(body, "<code>version.") != 1 {
		t.Error("the actor filter does not select")
	}
	if code, _, _ := f.signIn(t, "sam").get(t, cardPath+"/audit"); code != http.StatusNotFound {
		t.Errorf("a reader opens the audit log: %d", code)
	}
	repoPath := "/repos/" + cardOwner + "/" + cardRepo + "/audit"
	if code, body, _ := f.signIn(t, "ada").get(t, repoPath); code != http.StatusOK || !strings.Contains(body, "<code>version.rejected</code>") || !strings.Contains(body, `href="`+cardPath+`"`) {
		t.Errorf("an admin's repository audit: %d", code)
	}
	for _, login := range []string{requester, "max", "wes"} {
		if code, _, _ := f.signIn(t, login).get(t, repoPath); code != http.StatusNotFound {
			t.Errorf("%s opens the repository's audit log: %d", login, code)
		}
	}
}

// TestCardUploadAccess: the upload page is the requester's, the
// maintainers' and the admins'; write access alone gets a refusal, and
// those who may not see the ticket get 404.
func TestCardUploadAccess(t *testing.T) {
	f := newCardFixture(t, "")
	for login, want := range map[string]int{requester: http.StatusOK, "ada": http.StatusOK, "max": http.StatusOK,
		"wes": http.StatusConflict, "sam": http.StatusNotFound, "ghost": http.StatusNotFound} {
		code, body, _ := f.signIn(t, login).get(t, cardPath+"/upload")
		if code != want {
			t.Errorf("%s: upload page %d, want %d", login, code, want)
		}
		if code == http.StatusOK && !strings.Contains(body, `name="criterion.AC1"`) {
			t.Errorf("%s: the upload page does not offer the issue's criteria", login)
		}
	}
}

// TestCardGradePageSaysEnvironmentContextAndCases: the grade page says the
// environment the grade ran in, the signals taken as context and the tests
// excused as skipped on the base to every reader; the real ids of numbered
// cases, which quote the hidden tests' parameters, only to those who see
// the output.
func TestCardGradePageSaysEnvironmentContextAndCases(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	rep := report.Report{Verdict: report.VerdictPass, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 1, Skipped: 1, Total: 2},
		Tests: []report.TestResult{{ID: "tests/hidden/test_totals.py::test_whole[case-1]", Outcome: report.OutcomePassed},
			{ID: "tests/hidden/test_totals.py::test_empty", Outcome: report.OutcomeSkipped}},
		SkippedOnBase: []string{"tests/hidden/test_totals.py::test_empty"},
		TamperContext: []report.TamperSignal{{Path: "tox.ini", Reason: "tox.ini can configure pytest"}},
		CaseNames:     map[string]string{"tests/hidden/test_totals.py::test_whole[case-1]": "tests/hidden/test_totals.py::test_whole[secret parameter]"},
		Environment:   &report.Environment{Image: "testfirst-env:0123456789abcdef", Python: "3.11", Packages: []string{"greetlib==1.0"}, BuiltFrom: []string{"requirements.txt"}},
		Sentinels:     "ok"}
	data, _ := json.Marshal(rep)
	id := f.addGrade(t, v, string(data))
	common := []string{"greetlib==1.0", "tox.ini can configure pytest", "Skipped as on the base", "tests/hidden/test_totals.py::test_empty"}
	for _, who := range []string{requester, "sam"} {
		code, body, _ := f.signIn(t, who).get(t, fmt.Sprintf("/grades/%d", id))
		if code != http.StatusOK {
			t.Fatalf("%s: grade page %d", who, code)
		}
		body = html.UnescapeString(body)
		for _, want := range common {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the grade page lacks %q", who, want)
			}
		}
		if shows := strings.Contains(body, "secret parameter"); shows != (who == requester) {
			t.Errorf("%s: the real id of a numbered case shown = %v, want %v", who, shows, who == requester)
		}
	}
}

// TestCardDecisionReadsThePolicyAfresh: an admin turns enforce on while
// the card holds the repository's config: the next signature follows
// enforce at once, not a minute later when the kept config expires.
func TestCardDecisionReadsThePolicyAfresh(t *testing.T) {
	f := newCardFixture(t, "")
	ctx := t.Context()
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	dev := f.signIn(t, requester)
	if code, body, _ := dev.get(t, cardPath); code != http.StatusOK || !strings.Contains(body, "Policy <strong>single</strong>") {
		t.Fatalf("card under single: %d", code)
	}
	f.gh.Commit(cardOwner, cardRepo, "main", map[string]string{"README.md": "# widgets\n", ".github/testfirst.yml": "approval:\n  policy: enforce\n"})
	code, _, resp := dev.post(t, cardPath+"/versions/1/approve", url.Values{"digest": {v.Digest}})
	if code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=signed") {
		t.Fatalf("the requester's signature after enforce was turned on: %d %q, want signed", code, resp.Header.Get("Location"))
	}
	if got, _ := f.store.Version(ctx, f.st, 1); got.State != store.StatePending {
		t.Errorf("approved with one signature under enforce: %+v", got)
	}
}

// racingSync is the store as the store sync races the card: the sync
// mirrors an approval into the database the moment the store holds it,
// before the card records it there.
type racingSync struct {
	*store.Writer
	mirror func(ctx context.Context, k int, digest, by string) error
}

func (r racingSync) Approve(ctx context.Context, t store.Ticket, k int, digest, by string) (store.Version, error) {
	v, err := r.Writer.Approve(ctx, t, k, digest, by)
	if err == nil {
		err = r.mirror(ctx, k, digest, by)
	}
	return v, err
}

// TestCardApprovalRacesTheSync: an approval the store sync mirrored first
// (as it does every store_sync_interval) is the approval the card made,
// not an error: the requester is told it is approved.
func TestCardApprovalRacesTheSync(t *testing.T) {
	f := newCardFixture(t, "")
	v1 := f.push(t, writerCriteria)
	f.sync(t, v1, &defaultCheck, true)
	f.svc.store = racingSync{Writer: f.store, mirror: func(ctx context.Context, k int, digest, by string) error {
		return f.db.Tx(ctx, func(tx *db.Tx) error {
			row, err := tx.Version(ctx, f.tk.ID, k)
			if err != nil {
				return err
			}
			if _, err := tx.Approve(ctx, db.Approval{VersionID: row.ID, ApprovedBy: by, ApprovedAt: time.Now(), Digest: digest}); err != nil {
				return err
			}
			return tx.SetVersionDecision(ctx, row.ID, pipeline.VersionApproved, "")
		})
	}}
	b := f.signIn(t, requester)
	code, body, resp := b.post(t, cardPath+"/versions/1/approve", url.Values{"digest": {v1.Digest}})
	if code != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "decided=approved") {
		t.Fatalf("approve while the sync mirrors it: %d %s", code, body)
	}
	f.checkDB(t, 1, "approved", "")
}

// TestCardOfAnInvalidVersion: a version the base check found invalid (a
// hidden module with a syntax error, so no test collected) is said to be
// invalid everywhere on its card, never "pending", "not run yet" or "has
// not finished", and the card says what to do next.
func TestCardOfAnInvalidVersion(t *testing.T) {
	f := newCardFixture(t, "")
	b := f.signIn(t, requester)
	v := f.push(t, writerCriteria)
	broken := pipeline.VersionCheck{Base: report.BaseCheck{Broken: []string{"tests/hidden/test_totals.py does not import: SyntaxError: invalid syntax (line 3)"}}}
	f.sync(t, v, &broken, false)
	_, body, _ := b.get(t, cardPath)
	for _, wrong := range []string{"the base check has not finished", "Base check not run yet", `badge pending`} {
		if strings.Contains(body, wrong) {
			t.Errorf("the card of an invalid version says %q", wrong)
		}
	}
	for _, want := range []string{`<span class="badge invalid">not a valid task</span>`, "never: the base check found this version invalid",
		"The base check collected no test", "SyntaxError: invalid syntax (line 3)", "upload a new version"} {
		if !strings.Contains(body, want) {
			t.Errorf("the card of an invalid version lacks %q", want)
		}
	}
}

// TestCardTestsArchive: whoever may see the card downloads a version's
// tests as the writer wrote them (no canary line) and the grade page gives
// them the commands that grade the head again with the grade's bounds; a
// reader of the repository gets neither.
func TestCardTestsArchive(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	rep := report.Report{Verdict: report.VerdictPass, Trust: report.TrustIsolated, Counts: report.Counts{Passed: 3, Total: 3},
		Settings: &report.Settings{TimeoutSeconds: 600, Memory: 2 << 30, NanoCPUs: 2e9, Pids: 512}}
	data, _ := json.Marshal(rep)
	id := f.addGrade(t, v, string(data))
	zipPath := cardPath + "/versions/1/tests.zip"

	b := f.signIn(t, requester)
	code, body, resp := b.get(t, zipPath)
	if code != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("GET %s: %d %s", zipPath, code, resp.Header.Get("Content-Type"))
	}
	zr, err := zip.NewReader(strings.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, zf := range zr.File {
		names = append(names, zf.Name)
		rc, _ := zf.Open()
		got, _ := io.ReadAll(rc)
		rc.Close()
		if strings.Contains(string(got), "testfirst-canary") || strings.Contains(string(got), "tfc-") {
			t.Errorf("%s in the archive keeps a canary line:\n%s", zf.Name, got)
		}
		if zf.Name == "tests/tests/hidden/test_totals.py" && !strings.HasPrefix(string(got), "from widgets import total\n") {
			t.Errorf("%s is not as the writer wrote it:\n%s", zf.Name, got)
		}
	}
	if !slices.Contains(names, "tests/tests/hidden/test_totals.py") {
		t.Errorf("archive holds %v", names)
	}
	_, page, _ := b.get(t, fmt.Sprintf("/grades/%d", id))
	for _, want := range []string{"Grade it again yourself", zipPath, "git fetch origin pull/", "testfirst grade --repo . --tests /tmp/testfirst-v1/tests --timeout 10m0s --memory 2147483648 --cpus 2 --pids 512"} {
		if !strings.Contains(page, want) {
			t.Errorf("the grade page lacks %q", want)
		}
	}

	sam := f.signIn(t, "sam")
	if code, _, _ := sam.get(t, zipPath); code != http.StatusNotFound {
		t.Errorf("a reader downloads the tests: %d", code)
	}
	if _, page, _ := sam.get(t, fmt.Sprintf("/grades/%d", id)); strings.Contains(page, "tests.zip") || strings.Contains(page, "Grade it again yourself") {
		t.Error("the grade page offers a reader the tests")
	}
}

// TestCardOfATicketTheWriterWorksOn: while the writer agent runs and no
// version exists, the card says which writer is at work and its round.
func TestCardOfATicketTheWriterWorksOn(t *testing.T) {
	f := newCardFixture(t, "")
	if err := f.db.Tx(t.Context(), func(tx *db.Tx) error {
		_, _, err := tx.CreateAgentRun(t.Context(), db.AgentRun{TicketID: f.tk.ID, Role: pipeline.RoleWriter, Harness: "claude-code", Round: 1,
			State: pipeline.AgentRunning, CreatedAt: time.Now()})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.signIn(t, requester).get(t, cardPath)
	if !strings.Contains(body, "The writer agent <code>claude-code</code> is at work (round 1)") || strings.Contains(body, "no writer agent is at work") {
		t.Errorf("the card while the writer runs:\n%s", body)
	}
}

// TestHomeShowsConfigProblemsToAdmins: a config error said on an issue is
// also on the app's home page for the repository's admins and maintainers,
// while the file stays broken; others do not see it.
func TestHomeShowsConfigProblemsToAdmins(t *testing.T) {
	f := newCardFixture(t, "labl: test-first\n")
	if err := f.db.Tx(t.Context(), func(tx *db.Tx) error {
		return tx.AppendAudit(t.Context(), db.AuditEvent{Actor: requester, Kind: pipeline.AuditConfigError,
			Detail: []byte(`{"owner":"` + cardOwner + `","repo":"` + cardRepo + `","issue":4,"error":"unknown key labl"}`)})
	}); err != nil {
		t.Fatal(err)
	}
	for login, sees := range map[string]bool{"ada": true, "max": true, "wes": false, "sam": false} {
		_, body, _ := f.signIn(t, login).get(t, "/")
		got := strings.Contains(body, `id="config-problems"`) && strings.Contains(body, "labl") && strings.Contains(body, "/issues/4")
		if got != sees {
			t.Errorf("%s sees the config problem on the home page: %v, want %v", login, got, sees)
		}
	}
	// Fixed on the default branch: gone once the cached file is read again.
	f.gh.Commit(cardOwner, cardRepo, "main", map[string]string{"README.md": "# widgets\n", ".github/testfirst.yml": "label: test-first\n"})
	f.clock.advance(2 * time.Minute)
	if _, body, _ := f.signIn(t, "ada").get(t, "/"); strings.Contains(body, `id="config-problems"`) {
		t.Error("the home page still shows a config problem that was fixed")
	}
}

// TestRevokedMaintainerCannotActOnTheCachedPermission: a maintainer whose
// access is taken away on GitHub cannot reject, approve or upload a moment
// later on the permission the card kept for a minute: decisions and
// uploads (the same resolveToAct) ask GitHub again.
func TestRevokedMaintainerCannotActOnTheCachedPermission(t *testing.T) {
	f := newCardFixture(t, "")
	v := f.push(t, writerCriteria)
	f.sync(t, v, &defaultCheck, true)
	b := f.signIn(t, "max")
	if code, _, _ := b.get(t, cardPath); code != http.StatusOK {
		t.Fatalf("the maintainer's card: %d", code)
	}
	f.gh.SetPermission(cardOwner, cardRepo, "max", "read")
	code, _, _ := b.post(t, cardPath+"/versions/1/reject", url.Values{"digest": {v.Digest}, "reason": {"not tested enough"}})
	if code == http.StatusSeeOther {
		t.Errorf("a maintainer revoked a moment ago rejected v1 on the cached permission")
	}
	if got, _ := f.store.Version(t.Context(), f.st, 1); got.Decision != nil {
		t.Errorf("v1 was decided: %+v", got.Decision)
	}
}
