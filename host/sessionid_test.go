package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// An upstream's Streamable HTTP session id is a credential: whoever has it
// can use the session. The go-sdk's errors carry it ("session ID: …", e.g.
// on the 404 of an expired session); it must reach no log line above debug
// and no error a caller sees (issue 11 §5).
func TestSessionIDNotLogged(t *testing.T) {
	const canary = "sess-CANARY-"
	var n atomic.Int32
	srv := mcp.NewServer(&mcp.Implementation{Name: "expiring", Version: "1"}, &mcp.ServerOptions{
		GetSessionID: func() string { return fmt.Sprintf("%s%d-0123456789abcdef", canary, n.Add(1)) },
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + in.Name}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	sc := config.Server{ID: "exp", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true}
	h, logs := start(t, []config.Server{sc}, nil)
	if got := callText(t, h, "mcp_exp_greet", `{"name":"x"}`, nil); got != "hi x" {
		t.Fatalf("greet = %q", got)
	}
	// The server ends the session; from now on it answers its id with 404.
	before := n.Load()
	for ss := range srv.Sessions() {
		ss.Close()
	}
	var errs []string
	waitFor(t, func() bool {
		_, err := h.CallTool(context.Background(), "mcp_exp_greet", json.RawMessage(`{"name":"y"}`), nil)
		if err != nil {
			errs = append(errs, err.Error())
			return false
		}
		return n.Load() > before // answered on a new session
	}, "a call answered on a new session")
	for _, st := range h.Servers() {
		for _, e := range []error{st.Err, st.LastError} {
			if e != nil {
				errs = append(errs, e.Error())
			}
		}
	}
	for _, e := range errs {
		if strings.Contains(e, canary) {
			t.Errorf("an error a caller sees holds the session id: %s", e)
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, canary) && !strings.Contains(line, "level=DEBUG") {
			t.Errorf("a log line above debug holds the session id: %s", line)
		}
	}
	// What happened is still said, and debug lines tell sessions apart.
	if want := `msg="server connection lost" server=exp err="connection lost: sending \"tools/call\": failed to connect (session ID: [REDACTED]): session not found"`; !strings.Contains(logs.String(), want) {
		t.Errorf("the expiry is not logged as\n%s\nlogs:\n%s", want, logs)
	}
	if !strings.Contains(logs.String(), `level=DEBUG msg="session opened" server=exp session=sess…`) {
		t.Errorf("no debug line names the session by a prefix:\n%s", logs)
	}
}
