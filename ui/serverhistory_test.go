package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/internal/testkit/wait"
)

// historySig is the poll's ?sig in a server page's history fragment.
var historySig = regexp.MustCompile(`hx-get="/servers/[^/"]+/history\?sig=([0-9a-f]+)"`)

// TestServerHistoryPage: a server's page shows its stderr (its secret
// redacted: s.do fails on the canary) and, once it crashed, the loss with
// the child's last words and the restart; the poll answers 204 while
// nothing changed, and 404 for an unknown server.
func TestServerHistoryPage(t *testing.T) {
	s := serve(t, map[string][]string{"c": {"-print-env", "-crash-on-call"}})
	var page string
	// Its stderr is read apart from its messages: it may come after ready.
	wait.For(t, "c's stderr on its page, the secret redacted", func() (string, bool) {
		status, _, body := s.do("GET", "/servers/c", nil)
		page = body
		return body, status == http.StatusOK && strings.Contains(body, `id="server-stderr"`) && strings.Contains(body, "CANARY=[REDACTED]")
	})
	if !strings.Contains(page, `id="server-history"`) || !strings.Contains(page, `hx-trigger="every 1s"`) || strings.Contains(page, `data-incident=`) {
		t.Errorf("GET /servers/c: want the polled history without incidents\n%s", page)
	}
	m := historySig.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no history poll in the page\n%s", page)
	}
	if status, _, body := s.do("GET", "/servers/c/history?sig="+m[1], nil); status != http.StatusNoContent {
		t.Errorf("the poll with nothing new: %d, want 204\n%s", status, body)
	}

	if _, err := s.d.Host().CallTool(context.Background(), "mcp_c_echo", json.RawMessage(`{"text":"x"}`), nil); err == nil {
		t.Fatal("the crashing call succeeded")
	}
	var frag string
	var status int
	wait.For(t, "the restart in the history", func() (string, bool) {
		status, _, frag = s.do("GET", "/servers/c/history?sig="+m[1], nil)
		// The new child's stderr is read apart from its messages: wait
		// for its environment too.
		return frag, status == http.StatusOK && strings.Contains(frag, `data-incident="restarted"`) && strings.Count(frag, "CANARY=[REDACTED]") == 2
	})
	for _, want := range []string{`<dd id="server-restarts" hx-swap-oob="true">1</dd>`, `id="state-63" class="state state-ready" hx-swap-oob="true"`, `data-incident="lost"`, "Connection lost; restarting", "exiting with status 3", "testserver: -crash-on-call: exiting with status 3"} {
		if !strings.Contains(frag, want) {
			t.Errorf("the history after the crash lacks %q\n%s", want, frag)
		}
	}
	if status, _, body := s.do("GET", "/servers/nope/history", nil); status != http.StatusNotFound {
		t.Errorf("GET /servers/nope/history: %d, want 404\n%s", status, body)
	}
}
