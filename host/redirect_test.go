package host_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/netguard"
)

// TestCrossOriginRedirect: an MCP server at one origin that redirects to
// another is refused unless it sets allow_cross_origin_redirects; when it
// does, the redirected requests carry neither Authorization nor any other
// configured header (nor a Referer), and the target must still be admitted by the dialer
// and the floor (here by [network] allow_cidrs, since allow_local_endpoint
// never admits a redirect target).
func TestCrossOriginRedirect(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "target", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	var atTarget []string // the credential headers each request to the target carried
	var atFirst []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		// Nor a Referer: it would name the first server's URL.
		atTarget = append(atTarget, r.Header.Get("Authorization")+r.Header.Get("X-Team")+r.Header.Get("Referer"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(target.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		atFirst = append(atFirst, r.Header.Get("Authorization")+" "+r.Header.Get("X-Team"))
		mu.Unlock()
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)

	sc := config.Server{
		ID: "r", Transport: config.TransportHTTP, URL: first.URL + "/mcp", AllowLocalEndpoint: true,
		Headers: map[string]string{"Authorization": "Bearer s3cret", "X-Team": "blue"},
	}
	loopback := &netguard.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	refused := func(sc config.Server, opts *host.Options, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := host.Start(ctx, []config.Server{sc}, opts)
		if err == nil {
			h.Close()
			t.Fatalf("Start = nil error, want the redirect refused")
		}
		// The SDK flattens the transport's error to text: errors.Is
		// cannot see netguard.ErrRefused through it.
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Start: %v\nwant a refusal saying %q", err, want)
		}
	}
	// Without the key: refused, saying where it went.
	refused(sc, &host.Options{Network: loopback},
		"redirect from "+netguard.Origin(mustURL(t, first.URL))+" to "+netguard.Origin(mustURL(t, target.URL))+" refused: it leaves the origin "+netguard.Origin(mustURL(t, first.URL))+"; set allow_cross_origin_redirects = true")
	// With the key but no range admitting the target: refused by the floor.
	sc.AllowCrossOriginRedirects = true
	refused(sc, nil, "allow_local_endpoint never admits a redirect target")

	h, _ := start(t, []config.Server{sc}, &host.Options{Network: loopback})
	if got := callText(t, h, "mcp_r_greet", `{"name":"x"}`, nil); got != "hi x" {
		t.Errorf("call = %q, want hi x", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(atTarget) == 0 {
		t.Fatal("no request reached the redirect target")
	}
	for i, h := range atTarget {
		if h != "" {
			t.Errorf("request %d to the redirect target carried credentials %q", i, h)
		}
	}
	for i, h := range atFirst {
		if h != "Bearer s3cret blue" {
			t.Errorf("request %d to the server's own origin carried %q, want the configured headers", i, h)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
