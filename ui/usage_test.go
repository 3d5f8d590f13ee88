package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/ui"
)

// TestUsage: the Usage page, linked in every page's menu, shows the calls
// made through the daemon's host per server and tool (with their errors),
// over the window chosen (the last hour by default, a day by link); a
// window that is no duration is a 400 saying so. The page is local like
// the others (its Content-Security-Policy, its references).
func TestUsage(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	_, _, servers := s.do("GET", "/servers", nil)
	if !strings.Contains(servers, `<a href="/usage">Usage</a>`) {
		t.Errorf("the menu has no Usage link:\n%s", servers)
	}
	status, _, body := s.do("GET", "/usage", nil)
	if status != http.StatusOK || !strings.Contains(body, "No tool calls in this window.") ||
		!strings.Contains(body, `<a href="/usage" aria-current="page">Usage</a>`) ||
		!strings.Contains(body, `<a href="/usage?window=1h" aria-current="page">last 1h</a>`) {
		t.Fatalf("GET /usage before any call: %d\n%s", status, body)
	}

	h := s.d.Host()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 3 {
		if _, err := h.CallTool(ctx, "mcp_a_add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.CallTool(ctx, "mcp_a_fail", json.RawMessage(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	status, hdr, body := s.do("GET", "/usage?window=24h", nil)
	if status != http.StatusOK || hdr.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
		t.Fatalf("GET /usage?window=24h: %d, CSP %q\n%s", status, hdr.Get("Content-Security-Policy"), body)
	}
	for what, re := range map[string]string{
		"add's calls":         `<tr data-usage="a/add"><th scope="row">a</th><td>add</td><td>3</td><td>0</td><td>[0-9.]+ m?s</td>`,
		"fail's failed call":  `<tr data-usage="a/fail"><th scope="row">a</th><td>fail</td><td>1</td><td>1</td>`,
		"the window chosen":   `<a href="/usage\?window=24h" aria-current="page">last 24h</a>`,
		"no runs yet":         `No runs in this window\.`,
		"the other as a link": `<a href="/usage\?window=1h">last 1h</a>`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("GET /usage?window=24h: %s not shown (%s)\n%s", what, re, body)
		}
	}
	for _, m := range attrRef.FindAllStringSubmatch(body, -1) {
		if !local(m[2]) {
			t.Errorf("GET /usage: %s=%q is not on this origin", m[1], m[2])
		}
	}

	status, _, body = s.do("GET", "/usage?window=soon", nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "window soon: give a duration") {
		t.Errorf("GET /usage?window=soon: %d, want 400 saying why\n%s", status, body)
	}
}
