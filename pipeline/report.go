package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/testfirst-app/testfirst/grader"
)

// ParseReport reads a stored grader report (grader.Report's JSON
// contract).
func ParseReport(data []byte) (*grader.Report, error) {
	var r grader.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read the grader's report: %w", err)
	}
	return &r, nil
}
