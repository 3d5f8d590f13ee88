package host

import (
	"fmt"
	"testing"
)

func TestScrubSessionIDs(t *testing.T) {
	var ids sessionIDs
	ids.add("k7PZQ3Q6WJ3XW2BDNMSMJ6QH5Y") // a go-sdk id (rand.Text)
	ids.add("short")                      // too short to replace wherever it appears
	for _, tc := range []struct{ in, want string }{
		// The go-sdk's texts, for a known id and an unknown one.
		{`sending "tools/call": failed to connect (session ID: k7PZQ3Q6WJ3XW2BDNMSMJ6QH5Y): session not found`,
			`sending "tools/call": failed to connect (session ID: [REDACTED]): session not found`},
		{`standalone SSE request failed (session ID: 0b7e-unknown-4c1f): EOF`,
			`standalone SSE request failed (session ID: [REDACTED]): EOF`},
		{`mismatching session IDs "k7PZQ3Q6WJ3XW2BDNMSMJ6QH5Y" and "another-one-9f8e"`,
			`mismatching session IDs [REDACTED] and [REDACTED]`},
		// A legacy SSE endpoint in a transport error, in its spellings.
		{`Post "http://127.0.0.1:8080/message?sessionid=ABCDEF123456": connection refused`,
			`Post "http://127.0.0.1:8080/message?sessionid=[REDACTED]": connection refused`},
		{`Post "https://x.example.com/messages?a=1&sessionId=3f2a-11&b=2": EOF`,
			`Post "https://x.example.com/messages?a=1&sessionId=[REDACTED]&b=2": EOF`},
		{`Post "https://x.example.com/messages/?session_id=3f2a11": EOF`,
			`Post "https://x.example.com/messages/?session_id=[REDACTED]": EOF`},
		// A header dump; a known id anywhere; a short id left alone.
		{`Mcp-Session-Id: 3f2a11cafe`, `Mcp-Session-Id: [REDACTED]`},
		{`server said k7PZQ3Q6WJ3XW2BDNMSMJ6QH5Y expired`, `server said [REDACTED] expired`},
		{`a short story`, `a short story`},
		{`no ids here`, `no ids here`},
	} {
		got := ids.scrub(tc.in)
		if got != tc.want {
			t.Errorf("scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := ids.scrub(got); again != got {
			t.Errorf("scrub is not idempotent: %q, then %q", got, again)
		}
	}
}

// Only the last maxSessionIDs ids are kept; an older one is still caught
// where the go-sdk quotes it.
func TestSessionIDsBounded(t *testing.T) {
	var ids sessionIDs
	for i := range maxSessionIDs + 10 {
		ids.add(fmt.Sprintf("session-%04d-0123456789", i))
	}
	if len(ids.ids) != maxSessionIDs {
		t.Errorf("%d ids kept, want %d", len(ids.ids), maxSessionIDs)
	}
	for _, tc := range []struct{ in, want string }{
		{"old session-0000-0123456789", "old session-0000-0123456789"},
		{"(session ID: session-0000-0123456789)", "(session ID: [REDACTED])"},
		{fmt.Sprintf("new session-%04d-0123456789", maxSessionIDs+9), "new [REDACTED]"},
	} {
		if got := ids.scrub(tc.in); got != tc.want {
			t.Errorf("scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
