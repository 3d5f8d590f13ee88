package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
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
		"add's calls":         `<tr data-usage="a/add"><th scope="row"><a [^>]*>a</a></th><td><a href="/usage\?window=24h&amp;server=a&amp;tool=add"[^>]*>add</a></td><td>3</td><td>0</td><td>[0-9.]+ m?s</td>`,
		"fail's failed call":  `<tr data-usage="a/fail"><th scope="row"><a [^>]*>a</a></th><td><a [^>]*>fail</a></td><td>1</td><td>1</td>`,
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

	// Over time: the charts' points add up to the calls made, every
	// server's, one server's tool's.
	for _, c := range []struct {
		path          string
		calls, errors float64
	}{
		{"/usage?window=24h", 4, 1},
		{"/usage?window=1h&server=a", 4, 1},
		{"/usage?window=1h&server=a&tool=add", 3, 0},
		{"/usage?window=1h&server=b", 0, 0},
	} {
		status, _, body := s.do("GET", c.path, nil)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", c.path, status, body)
		}
		if got := chartSum(t, body, "chart-calls", "calls"); got != c.calls {
			t.Errorf("GET %s: the calls chart's points add up to %v, want %v", c.path, got, c.calls)
		}
		if got := chartSum(t, body, "chart-calls", "errors"); got != c.errors {
			t.Errorf("GET %s: the errors' points add up to %v, want %v", c.path, got, c.errors)
		}
		if !strings.Contains(body, `<svg role="img" aria-labelledby="chart-latency-title chart-latency-desc"`) {
			t.Errorf("GET %s: no latency chart\n%s", c.path, body)
		}
	}
	status, _, body = s.do("GET", "/usage?tool=add", nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "give a server (and one of its tools)") {
		t.Errorf("GET /usage?tool=add: %d, want 400 saying why\n%s", status, body)
	}

	status, _, body = s.do("GET", "/usage?window=soon", nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "window soon: give a duration") {
		t.Errorf("GET /usage?window=soon: %d, want 400 saying why\n%s", status, body)
	}
}

// TestUsageByEndpoint: calls made through a named endpoint are listed by
// endpoint, each a link to the page of its calls alone (which keeps the
// endpoint across windows and lists no runs); a name no endpoint can have
// is a 400 saying why.
func TestUsageByEndpoint(t *testing.T) {
	bin := interop.Build(t, fixturePkg)
	s := serveWith(t, func(o *daemon.Options) {
		o.Config.Endpoints = []config.Endpoint{{Name: "code", Servers: []string{"a"}}}
	}, config.Server{ID: "a", Transport: config.TransportStdio, Command: bin})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/e/code/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp_a_add", Arguments: map[string]any{"a": 1, "b": 2}}); err != nil || res.IsError {
		t.Fatalf("add through /e/code/mcp: %v %+v", err, res)
	}
	if _, err := s.d.Host().CallTool(ctx, "mcp_a_add", json.RawMessage(`{"a":1,"b":2}`), nil); err != nil {
		t.Fatal(err)
	}
	_, _, body := s.do("GET", "/usage", nil)
	for what, re := range map[string]string{
		"both calls":           `<tr data-usage="a/add"><th scope="row"><a [^>]*>a</a></th><td><a [^>]*>add</a></td><td>2</td>`,
		"code's one, a link":   `<tr data-usage="endpoint/code"><th scope="row"><a href="/usage\?window=1h&amp;endpoint=code">code</a></th><td>1</td><td>0</td>`,
		"the runs, unfiltered": `No runs in this window\.`,
	} {
		if !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("GET /usage: %s not shown (%s)\n%s", what, re, body)
		}
	}
	status, _, body := s.do("GET", "/usage?window=1h&endpoint=code", nil)
	for what, re := range map[string]string{
		"code's call alone":     `<tr data-usage="a/add"><th scope="row"><a [^>]*>a</a></th><td><a href="/usage\?window=1h&amp;endpoint=code&amp;server=a&amp;tool=add"[^>]*>add</a></td><td>1</td>`,
		"what is shown":         `the calls made through the endpoint <a href="/endpoints/code">code</a> alone`,
		"windows keep endpoint": `<a href="/usage\?window=24h&amp;endpoint=code">last 24h</a>`,
	} {
		if status != http.StatusOK || !regexp.MustCompile(re).MatchString(body) {
			t.Errorf("GET /usage?endpoint=code: %d, %s not shown (%s)\n%s", status, what, re, body)
		}
	}
	if strings.Contains(body, "Runs and tokens") {
		t.Errorf("GET /usage?endpoint=code lists runs, which are made through no endpoint:\n%s", body)
	}
	status, _, body = s.do("GET", "/usage?endpoint=Code", nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "invalid endpoint name") {
		t.Errorf("GET /usage?endpoint=Code: %d, want 400 saying why\n%s", status, body)
	}
}

// chartSum adds up the values of the markers of series in the chart id of
// a page (data-v).
func chartSum(t *testing.T, page, id, series string) float64 {
	t.Helper()
	fig := regexp.MustCompile(`(?s)<figure class="chart" id="` + id + `">.*?</figure>`).FindString(page)
	if fig == "" {
		t.Fatalf("no chart %s in the page:\n%s", id, page)
	}
	g := regexp.MustCompile(`(?s)<g class="series s\d" data-series="` + series + `">.*?</g>`).FindString(fig)
	if g == "" {
		t.Fatalf("no series %s in chart %s:\n%s", series, id, fig)
	}
	sum := 0.0
	for _, m := range regexp.MustCompile(`data-v="([0-9.e+-]+)"`).FindAllStringSubmatch(g, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}
