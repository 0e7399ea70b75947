package pipeline

import (
	"encoding/json"
	"fmt"

	"github.com/testfirst-app/testfirst/report"
)

// ParseReport reads a stored grader report (grader.Report's JSON
// contract).
func ParseReport(data []byte) (*report.Report, error) {
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read the grader's report: %w", err)
	}
	return &r, nil
}
