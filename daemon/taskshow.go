package daemon

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// How the owner's faces show a task (the CLI's switchboard tasks, the web
// UI's Tasks page): one way, so that both say the same of it.

// TaskEnded reports whether a task in status has ended: completed,
// failed or cancelled (it can no longer be cancelled).
func TaskEnded(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// A TaskOutcome is what a task's stored result or error says, for a
// person to read.
type TaskOutcome struct {
	// Error is the JSON-RPC error's message and code (a failed task),
	// "" for none.
	Error string
	// IsError: the tool reported an error (its result's isError).
	IsError bool
	// Texts are the result's content, in order: each text as it is, other
	// content as "[TYPE content]"; with no content, the structured
	// content's JSON.
	Texts []string
}

// TaskOutcomeOf reads a task's result and error (as the gateway stored
// them: JSON, either may be empty); what does not parse is left out.
func TaskOutcomeOf(result, rpcErr json.RawMessage) TaskOutcome {
	var o TaskOutcome
	if len(rpcErr) > 0 {
		var je struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(rpcErr, &je) == nil {
			o.Error = fmt.Sprintf("%s (%d)", je.Message, je.Code)
		}
	}
	if len(result) > 0 {
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		}
		if json.Unmarshal(result, &res) == nil {
			o.IsError = res.IsError
			for _, c := range res.Content {
				if c.Type == "text" {
					o.Texts = append(o.Texts, strings.TrimRight(c.Text, "\n"))
				} else {
					o.Texts = append(o.Texts, "["+c.Type+" content]")
				}
			}
			if len(res.Content) == 0 && len(res.Structured) > 0 {
				o.Texts = append(o.Texts, string(res.Structured))
			}
		}
	}
	return o
}

// Age is d rounded for a list: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
