package cli

import (
	"regexp"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/store"
)

// TestFormatUsageEndpoints: stats' table lists the calls per named
// endpoint under the servers' tools; narrowed to one endpoint it lists its
// tools alone, and says so when it had no calls.
func TestFormatUsageEndpoints(t *testing.T) {
	rep := &store.UsageReport{
		Calls:     []store.CallStats{{Server: "fx", Tool: "echo", Calls: 3, P50MS: 1.5}},
		Endpoints: []store.EndpointStats{{Endpoint: "code", Calls: 2, Errors: 1, P50MS: 1.2}},
	}
	got := formatUsage(rep, time.Hour)
	for _, re := range []string{`(?m)^fx +echo +3 +0 +1\.5ms`, `(?m)^ENDPOINT +CALLS +ERRORS +P50 +P95 +P99$`, `(?m)^code +2 +1 +1\.2ms`} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("stats' table lacks %s:\n%s", re, got)
		}
	}
	rep.Endpoint = "code"
	if got := formatUsage(rep, time.Hour); regexp.MustCompile(`ENDPOINT`).MatchString(got) {
		t.Errorf("stats --endpoint code lists the endpoints again:\n%s", got)
	}
	if got := formatUsage(&store.UsageReport{Endpoint: "code"}, time.Hour); got != "no calls through endpoint code in the last 1h0m0s\n" {
		t.Errorf("stats --endpoint code without calls = %q", got)
	}
}
