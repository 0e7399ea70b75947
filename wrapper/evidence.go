package wrapper

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"slices"
	"sync"
)

// EvidenceModule is the wrapper-owned pytest plugin, loaded with -p before
// PluginModule, that writes the JUnit report itself, reports runtime
// evidence and closes the run with a signed end record.
const EvidenceModule = "testfirst_evidence"

// The descriptors of a pytest run beyond stdio: the plugin takes them at
// import and moves them to private numbers.
const (
	reportFD   = 3 // the plugin's JUnit report, plugin -> wrapper
	evidenceFD = 4 // signed evidence records, plugin -> wrapper
	keyFD      = 5 // the records' key, wrapper -> plugin, read once
	// tripwireFD is a pipe the plugin puts on fds 3, 4 and 5 once it has
	// taken them: whatever is written there later was written by code that
	// looked for the runner's report.
	tripwireFD = 6
)

const (
	evidenceKeyBytes = 32
	// evidenceLimit bounds the evidence read from one run.
	evidenceLimit = 4 << 20
	// maxEvidenceExamples bounds the examples kept per reason.
	maxEvidenceExamples = 5
	// maxGarbled bounds the reasons kept why a channel is garbled.
	maxGarbled = 10
)

// Strengths of a runtime evidence event, as the plugin reports them.
const (
	StrengthStrong = "strong"
	StrengthWeak   = "weak"
)

// RuntimeEvidence is what the plugin reported on the evidence pipe, checked
// by the wrapper: every record signed with the run's key, numbered without
// gaps per process.
type RuntimeEvidence struct {
	// Started is true when the plugin's start record came, first, from the
	// runner process itself.
	Started bool `json:"started"`
	// Events are the plugin's sightings, one per reason, strongest first.
	Events []EvidenceEvent `json:"events"`
	// End is the end record of the runner process; Ends counts every end
	// record, from any process.
	End  *EndRecord `json:"end,omitempty"`
	Ends int        `json:"ends"`
	// ForkedEnds counts end records written by a process other than the
	// runner: the session was finished in a forked child.
	ForkedEnds int `json:"forked_ends"`
	// Garbled lists why the channel is not to be trusted: lines that are
	// not signed records, sequence gaps.
	Garbled []string `json:"garbled,omitempty"`
	// Overflow is true when the pipe carried more than the wrapper keeps
	// (forked children each report too); what came past the limit is lost,
	// so an end record there counts as missing.
	Overflow bool `json:"overflow,omitempty"`
	// ReportSHA256 and ReportBytes are the digest and size of everything
	// the report pipe carried.
	ReportSHA256 string `json:"report_sha256"`
	ReportBytes  int64  `json:"report_bytes"`
	// TripwireBytes counts what was written to fds 3, 4 and 5 after the
	// plugin had moved the real pipes away.
	TripwireBytes int64 `json:"tripwire_bytes,omitempty"`
}

// EvidenceEvent is one reason the plugin reported, with its sightings.
type EvidenceEvent struct {
	Reason   string   `json:"reason"`
	Strength string   `json:"strength"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// EndRecord is the plugin's last word on a run, written only after its own
// checks held.
type EndRecord struct {
	PID        int `json:"pid"`
	ExitStatus int `json:"exitstatus"`
	// Cases is how many <testcase> elements the plugin wrote.
	Cases int `json:"cases"`
	// Tallies counts the reports as pytest's terminal summary does:
	// passed, failed, error, skipped, xfailed, xpassed.
	Tallies      map[string]int `json:"tallies"`
	ReportSHA256 string         `json:"report_sha256"`
	ReportBytes  int64          `json:"report_bytes"`
	// More counts sightings per reason beyond those sent one by one.
	More map[string]int `json:"more"`
}

// evidenceChannel is the wrapper's end of the plugin's pipes.
type evidenceChannel struct {
	key []byte

	mu    sync.Mutex
	data  []byte
	total int64

	report      hash.Hash
	reportBytes int64

	tripwire int64
}

func newEvidenceChannel() *evidenceChannel {
	key := make([]byte, evidenceKeyBytes)
	rand.Read(key)
	return &evidenceChannel{key: key, report: sha256.New()}
}

// Write keeps what the evidence pipe carries, up to evidenceLimit.
func (c *evidenceChannel) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := evidenceLimit - len(c.data); room > 0 {
		c.data = append(c.data, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// reportWriter hashes what the report pipe carries on its way to dst.
func (c *evidenceChannel) reportWriter(dst interface{ Write([]byte) (int, error) }) writerFunc {
	return func(p []byte) (int, error) {
		c.report.Write(p)
		c.reportBytes += int64(len(p))
		return dst.Write(p)
	}
}

// tripwireWriter counts what the tripwire pipe carries.
func (c *evidenceChannel) tripwireWriter() writerFunc {
	return func(p []byte) (int, error) {
		c.mu.Lock()
		c.tripwire += int64(len(p))
		c.mu.Unlock()
		return len(p), nil
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// keyPipe returns the read end of a pipe that holds the key and nothing
// else: the plugin reads it to EOF at import.
func (c *evidenceChannel) keyPipe() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create key pipe: %w", err)
	}
	_, err = w.Write(c.key)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("write key pipe: %w", err)
	}
	return r, nil
}

// record is one line of the evidence pipe.
type record struct {
	V        int            `json:"v"`
	PID      int            `json:"pid"`
	Seq      int            `json:"seq"`
	Kind     string         `json:"kind"`
	Reason   string         `json:"reason"`
	Strength string         `json:"strength"`
	Detail   string         `json:"detail"`
	Exit     *int           `json:"exitstatus"`
	Cases    int            `json:"cases"`
	Tallies  map[string]int `json:"tallies"`
	SHA256   string         `json:"report_sha256"`
	Bytes    int64          `json:"report_bytes"`
	More     map[string]int `json:"more"`
}

// verify checks every record of the channel against the key and the
// runner's pid and returns what they say.
func (c *evidenceChannel) verify(runner int) *RuntimeEvidence {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := &RuntimeEvidence{ReportSHA256: hex.EncodeToString(c.report.Sum(nil)), ReportBytes: c.reportBytes, TripwireBytes: c.tripwire}
	garble := func(format string, args ...any) {
		if len(ev.Garbled) < maxGarbled {
			ev.Garbled = append(ev.Garbled, fmt.Sprintf(format, args...))
		}
	}
	ev.Overflow = c.total > evidenceLimit
	byReason := map[string]*EvidenceEvent{}
	next := map[int]int{}
	lines := bytes.Split(c.data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	} else if len(lines) > 0 && c.total <= evidenceLimit {
		garble("the last evidence line is not complete")
		lines = lines[:len(lines)-1]
	}
	for i, line := range lines {
		sp := bytes.LastIndexByte(line, ' ')
		if sp < 0 {
			garble("line %d is not a signed record", i+1)
			continue
		}
		payload, sig := line[:sp], line[sp+1:]
		want := hmac.New(sha256.New, c.key)
		want.Write(payload)
		got, err := hex.DecodeString(string(sig))
		if err != nil || !hmac.Equal(got, want.Sum(nil)) {
			garble("line %d has a wrong signature", i+1)
			continue
		}
		var r record
		if err := json.Unmarshal(payload, &r); err != nil || r.V != 1 {
			garble("line %d is a signed record the wrapper cannot read", i+1)
			continue
		}
		if r.Seq != next[r.PID] {
			garble("record %d of pid %d came as number %d: a record was lost, repeated or replayed", next[r.PID], r.PID, r.Seq)
		}
		next[r.PID] = r.Seq + 1
		switch r.Kind {
		case "start":
			if i != 0 || r.PID != runner || r.Seq != 0 {
				garble("a start record that is not the runner's first")
				continue
			}
			ev.Started = true
		case "event":
			if r.Strength != StrengthStrong && r.Strength != StrengthWeak || r.Reason == "" {
				garble("line %d is an event without a reason or strength", i+1)
				continue
			}
			e := byReason[r.Reason]
			if e == nil {
				e = &EvidenceEvent{Reason: r.Reason, Strength: r.Strength}
				byReason[r.Reason] = e
			}
			if r.Strength == StrengthStrong {
				e.Strength = StrengthStrong
			}
			e.Count++
			if r.Detail != "" && len(e.Examples) < maxEvidenceExamples && !slices.Contains(e.Examples, r.Detail) {
				e.Examples = append(e.Examples, r.Detail)
			}
		case "end":
			ev.Ends++
			if r.PID != runner {
				ev.ForkedEnds++
				continue
			}
			if r.Exit == nil {
				garble("an end record without an exit status")
				continue
			}
			ev.End = &EndRecord{PID: r.PID, ExitStatus: *r.Exit, Cases: r.Cases, Tallies: r.Tallies,
				ReportSHA256: r.SHA256, ReportBytes: r.Bytes, More: r.More}
			for reason, n := range r.More {
				if e := byReason[reason]; e != nil && n > 0 {
					e.Count += n
				}
			}
		default:
			garble("line %d has an unknown kind %q", i+1, r.Kind)
		}
	}
	for _, e := range byReason {
		ev.Events = append(ev.Events, *e)
	}
	slices.SortFunc(ev.Events, func(a, b EvidenceEvent) int {
		if a.Strength != b.Strength {
			if a.Strength == StrengthStrong {
				return -1
			}
			return 1
		}
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return bytes.Compare([]byte(a.Reason), []byte(b.Reason))
	})
	return ev
}
