package jobs

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
)

// webhookFixtures holds real webhook payloads as GitHub sends them:
// beside the repository, or where TESTFIRST_WEBHOOK_FIXTURES says.
var webhookFixtures = cmp.Or(os.Getenv("TESTFIRST_WEBHOOK_FIXTURES"), filepath.Join("..", "..", "shared", "fixtures", "github-webhooks"))

// runID names one test run's deliveries, so runs sharing a PostgreSQL
// database do not see each other's.
func runID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "bench-" + hex.EncodeToString(b)
}
