package ui_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/ui"
)

// TestTryHistory: a call from the try-it form shows its command line and
// enters this browser's history (the cookie the first call sets); Run
// again calls the tool with the same arguments, a second entry; the call
// loads into the form; another browser sees none of it, nor can run it.
func TestTryHistory(t *testing.T) {
	s := serve(t, map[string][]string{"a": nil})
	fields := fieldIDs(t, s, "/tools/mcp_a_echo")
	text := `it's "quoted" <b>`
	status, hdr, body := s.do("POST", "/tools/mcp_a_echo/call", url.Values{fields["text"]: {text}}, ui.CSRFHeader, "1")
	if status != http.StatusOK {
		t.Fatalf("call: %d\n%s", status, body)
	}
	var cookie string
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if c.Name == "switchboard_try" {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				t.Errorf("the history cookie is not HttpOnly and SameSite=Strict: %v", c)
			}
			cookie = c.Name + "=" + c.Value
		}
	}
	if cookie == "" {
		t.Fatalf("the call set no history cookie: %v", hdr)
	}
	wantLine := `switchboard call mcp_a_echo --args '{"text":"it'\''s \"quoted\" <b>"}'`
	if !strings.Contains(html.UnescapeString(body), `<pre id="command" class="mono">`+wantLine+`</pre>`) {
		t.Errorf("the command line %s is not shown:\n%s", wantLine, body)
	}
	entries := regexp.MustCompile(`data-call="(\d+)"`)
	m := entries.FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("%d history entries after one call:\n%s", len(m), body)
	}
	id := m[0][1]

	// Run it again: a second entry, newest first, with the same arguments.
	status, _, body = s.do("POST", "/tools/mcp_a_echo/history/"+id, url.Values{}, ui.CSRFHeader, "1", "Cookie", cookie)
	if status != http.StatusOK || !strings.Contains(html.UnescapeString(body), text) {
		t.Fatalf("run again: %d\n%s", status, body)
	}
	m = entries.FindAllStringSubmatch(body, -1)
	if len(m) != 2 || m[1][1] != id || m[0][1] == id {
		t.Fatalf("entries after running #%s again: %v\n%s", id, m, body)
	}
	args := regexp.MustCompile(`<code class="args">([^<]*)</code>`).FindAllStringSubmatch(body, -1)
	if len(args) != 2 || args[0][1] != args[1][1] || !strings.Contains(html.UnescapeString(args[0][1]), `"text":"it's \"quoted\" <b>"`) {
		t.Errorf("the two entries' arguments: %v", args)
	}
	if !strings.Contains(body, `id="loaded-from"`) {
		t.Errorf("run again does not say the form holds call #%s's arguments", id)
	}

	// Load into the form: the field holds the text.
	_, _, body = s.do("GET", "/tools/mcp_a_echo?from="+id, nil, "Cookie", cookie)
	if !strings.Contains(html.UnescapeString(body), `value="`+text+`"`) && !strings.Contains(body, `value="`+html.EscapeString(text)+`"`) {
		t.Errorf("the form is not loaded with call #%s's text:\n%s", id, body)
	}

	// Another browser: no history, and it cannot run this one's calls.
	_, _, body = s.do("GET", "/tools/mcp_a_echo", nil)
	if strings.Contains(body, `id="history"`) {
		t.Errorf("a browser without the cookie sees a history:\n%s", body)
	}
	status, _, _ = s.do("POST", "/tools/mcp_a_echo/history/"+id, url.Values{}, ui.CSRFHeader, "1", "Cookie", "switchboard_try=0123456789abcdef0123456789abcdef")
	if status != http.StatusNotFound {
		t.Errorf("another browser ran call #%s: %d", id, status)
	}
	// Without the CSRF header, refused.
	status, _, _ = s.do("POST", "/tools/mcp_a_echo/history/"+id, url.Values{}, "Cookie", cookie)
	if status != http.StatusForbidden {
		t.Errorf("run again without the CSRF header: %d, want 403", status)
	}
	// Logging out forgets it.
	s.do("POST", "/logout", url.Values{}, ui.CSRFHeader, "1", "Cookie", cookie)
	_, _, body = s.do("GET", "/tools/mcp_a_echo", nil, "Cookie", cookie)
	if strings.Contains(body, `id="history"`) {
		t.Errorf("the history is shown after logging out:\n%s", body)
	}
}
