package evaluate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/testfirst-app/testfirst/report"
)

// JUnitCase is one <testcase> of a JUnit XML report.
type JUnitCase struct {
	ClassName string
	Name      string
	Outcome   report.Outcome
}

// ParseJUnit reads a JUnit XML report as pytest writes it: one root
// element, <testsuites> or <testsuite>, holding <testcase> elements. A
// second root (a report appended to another), a truncated document or an
// unknown root is an error: the grade fails closed on it.
func ParseJUnit(data []byte) ([]JUnitCase, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the runner wrote no JUnit report")
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	var (
		cases []JUnitCase
		depth int
		roots int
		cur   *JUnitCase
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("JUnit report is malformed or truncated: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if roots > 1 {
					return nil, errors.New("JUnit report has more than one root element: something wrote a second report")
				}
				if t.Name.Local != "testsuites" && t.Name.Local != "testsuite" {
					return nil, fmt.Errorf("JUnit report has root <%s>, want <testsuites> or <testsuite>", t.Name.Local)
				}
			}
			depth++
			switch t.Name.Local {
			case "testcase":
				if cur != nil {
					return nil, errors.New("JUnit report nests a <testcase> in another")
				}
				cur = &JUnitCase{Outcome: report.OutcomePassed}
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "classname":
						cur.ClassName = a.Value
					case "name":
						cur.Name = a.Value
					}
				}
			case "error":
				if cur != nil {
					cur.Outcome = report.OutcomeError
				}
			case "failure":
				if cur != nil && cur.Outcome != report.OutcomeError {
					cur.Outcome = report.OutcomeFailed
				}
			case "skipped":
				if cur != nil && cur.Outcome == report.OutcomePassed {
					cur.Outcome = report.OutcomeSkipped
				}
			}
		case xml.EndElement:
			depth--
			if t.Name.Local == "testcase" && cur != nil {
				cases = append(cases, *cur)
				cur = nil
			}
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("JUnit report has text outside its root element")
			}
		}
	}
	if roots == 0 {
		return nil, errors.New("JUnit report has no root element")
	}
	if depth != 0 {
		return nil, errors.New("JUnit report is truncated")
	}
	return cases, nil
}
