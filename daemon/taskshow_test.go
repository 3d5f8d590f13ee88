package daemon_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/daemon"
)

func TestTaskOutcomeOf(t *testing.T) {
	for _, tc := range []struct {
		name          string
		result, error string
		want          daemon.TaskOutcome
	}{
		{"none", "", "", daemon.TaskOutcome{}},
		{"texts", `{"content":[{"type":"text","text":"Hello\n"},{"type":"image","data":"x"},{"type":"text","text":"two"}]}`, "",
			daemon.TaskOutcome{Texts: []string{"Hello", "[image content]", "two"}}},
		{"isError", `{"isError":true,"content":[{"type":"text","text":"boom"}]}`, "", daemon.TaskOutcome{IsError: true, Texts: []string{"boom"}}},
		{"structured", `{"content":[],"structuredContent":{"n":1}}`, "", daemon.TaskOutcome{Texts: []string{`{"n":1}`}}},
		{"error", "", `{"code":-32603,"message":"upstream gone"}`, daemon.TaskOutcome{Error: "upstream gone (-32603)"}},
		{"not JSON", "{", "[", daemon.TaskOutcome{}},
	} {
		got := daemon.TaskOutcomeOf(json.RawMessage(tc.result), json.RawMessage(tc.error))
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: TaskOutcomeOf(%q, %q) (-want +got):\n%s", tc.name, tc.result, tc.error, d)
		}
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45s", 12 * time.Minute: "12m", 3 * time.Hour: "3h", 50 * time.Hour: "2d"} {
		if got := daemon.Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
