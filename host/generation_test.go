package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/testkit/interop"
)

// TestInputRequiredConnection: a call with CallOptions.InputRequired goes out
// on a second, 2026-07-28 connection to the server (a second child for a
// stdio server), while the host's own connection speaks what the host
// offers; the server's input-required result comes back as it is, with its
// own keys and requestState, and the retry with the answers completes the
// call. Close stops both children (start checks it).
func TestInputRequiredConnection(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "fx")}, &host.Options{ProtocolVersion: "2025-11-25"})
	ctx := context.Background()
	if v := h.Servers()[0].ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("the host's own connection speaks %s, want 2025-11-25", v)
	}
	kids := len(children(t))

	ir := &host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}}
	res, err := h.CallTool(ctx, "mcp_fx_elicit", nil, ir)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.InputRequests["form"] == nil {
		t.Fatalf("result = %+v, want the server's input-required result with its key \"form\"", res)
	}
	if got := len(children(t)); got != kids+1 {
		t.Errorf("children: %d, want %d (a second connection to the stdio server)", got, kids+1)
	}
	answer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Irene"}}
	res, err = h.CallTool(ctx, "mcp_fx_elicit", nil, &host.CallOptions{RequestOptions: host.RequestOptions{
		InputRequired:  true,
		InputResponses: mcp.InputResponseMap{"form": answer},
		RequestState:   res.RequestState,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsInput() || !strings.Contains(text(res), "Irene") {
		t.Fatalf("retry = %q (needs input: %v), want the answer", text(res), res.NeedsInput())
	}
	// The connection is reused, and the host's own calls still go on the
	// host's connection, where the server asks during the call.
	if _, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"x"}`), ir); err != nil {
		t.Fatal(err)
	}
	if got := len(children(t)); got != kids+1 {
		t.Errorf("children after more calls: %d, want %d", got, kids+1)
	}
	got := callText(t, h, "mcp_fx_elicit", `{}`, &host.CallOptions{
		Elicitation: func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Olga"}}, nil
		},
	})
	if !strings.Contains(got, "Olga") {
		t.Errorf("call on the host's connection = %q, want the handler's answer", got)
	}

	// Prompts and resources take the same options.
	if _, err := h.ReadResource(ctx, "fx", "test://static/1", &host.RequestOptions{InputRequired: true}); err != nil {
		t.Errorf("ReadResource: %v", err)
	}
}

// TestInputRequiredOlderServer: a server that speaks only 2025-11-25 fails
// such calls with ErrOlderGeneration, once asked; its own connection serves
// on.
func TestInputRequiredOlderServer(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "old", "-protocol-version", "2025-11-25")}, nil)
	ctx := context.Background()
	for range 2 {
		_, err := h.CallTool(ctx, "mcp_old_echo", json.RawMessage(`{"text":"x"}`), &host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}})
		if !errors.Is(err, host.ErrOlderGeneration) {
			t.Fatalf("err = %v, want ErrOlderGeneration", err)
		}
		var ce *host.CallError
		if !errors.As(err, &ce) || ce.Server != "old" {
			t.Errorf("err = %#v, want a CallError naming the server", err)
		}
	}
	if got := callText(t, h, "mcp_old_echo", `{"text":"still"}`, nil); got != "still" {
		t.Errorf("echo = %q", got)
	}
}

// TestInputRequiredConnectionHTTP: the same over Streamable HTTP, against a
// go-sdk server that serves 2026-07-28 statelessly, as remote servers of
// that generation do. The host's own connection settles on 2025-11-25 (the
// go-sdk refuses 2026-07-28 without a session only on stateful handlers;
// this one speaks both), the second one on 2026-07-28.
func TestInputRequiredConnectionHTTP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r, ok := req.Params.InputResponses["who"].(*mcp.ElicitResult); ok && r != nil {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("hello ", r.Content["name"])}}}, nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
			"who": &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		}, RequestState: "opaque-from-the-server"}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	h, _ := start(t, []config.Server{{ID: "remote", Transport: config.TransportHTTP, URL: ts.URL, AllowLocalEndpoint: true}}, &host.Options{ProtocolVersion: "2025-11-25"})
	ctx := context.Background()
	res, err := h.CallTool(ctx, "mcp_remote_ask", nil, &host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.InputRequests["who"] == nil || res.RequestState != "opaque-from-the-server" {
		t.Fatalf("result = %+v, want the server's input-required result as sent", res)
	}
	res, err = h.CallTool(ctx, "mcp_remote_ask", nil, &host.CallOptions{RequestOptions: host.RequestOptions{
		InputRequired:  true,
		InputResponses: mcp.InputResponseMap{"who": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Hana"}}},
		RequestState:   res.RequestState,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); got != "hello Hana" {
		t.Errorf("retry = %q, want hello Hana", got)
	}
	h.Close() // before the server, so that the leak check does not count its goroutines
}

// TestInputRequiredConnectionLost: the 2026-07-28 connection's child dies
// during a call. The call fails at once as ErrUnavailable, naming that
// connection; the next call that needs the connection opens it again (a new
// child); the host's own connection is not touched.
func TestInputRequiredConnectionLost(t *testing.T) {
	h, _ := start(t, []config.Server{fixture(t, "fx")}, &host.Options{ProtocolVersion: "2025-11-25"})
	ctx := context.Background()
	before := interop.Children(os.Getpid())
	ir := &host.CallOptions{RequestOptions: host.RequestOptions{InputRequired: true}}
	if _, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"a"}`), ir); err != nil {
		t.Fatal(err)
	}
	second := 0
	for pid := range interop.Children(os.Getpid()) {
		if _, ok := before[pid]; !ok {
			second = pid
		}
	}
	if second == 0 {
		t.Fatal("no second child for the 2026-07-28 connection")
	}

	// A call in flight when the child dies.
	errc := make(chan error, 1)
	go func() {
		_, err := h.CallTool(ctx, "mcp_fx_slow", json.RawMessage(`{"ms":60000}`), ir)
		errc <- err
	}()
	waitFor(t, func() bool { return h.Servers()[0].InFlight == 1 }, "the slow call to be in flight")
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	err := <-errc
	if !errors.Is(err, host.ErrUnavailable) || !strings.Contains(err.Error(), host.InputRequiredVersion) {
		t.Errorf("err = %v, want ErrUnavailable naming the %s connection", err, host.InputRequiredVersion)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("the call took %v to fail after its child died", d)
	}

	// The next call opens the connection again.
	res, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"b"}`), ir)
	if err != nil {
		t.Fatalf("after the child died: %v", err)
	}
	if got := text(res); got != "b" {
		t.Errorf("echo = %q", got)
	}
	now := interop.Children(os.Getpid())
	if _, ok := now[second]; ok {
		t.Errorf("the dead child %d is still there", second)
	}
	if len(now) != len(before)+1 {
		t.Errorf("children: %d, want %d (one new second connection)", len(now), len(before)+1)
	}
	st := h.Servers()[0]
	if st.State != host.StateReady || st.Restarts != 0 {
		t.Errorf("the host's own connection: %s after %d restarts, want ready, never restarted", st.State, st.Restarts)
	}
}

// asker is an in-process server whose tool "ask" asks a question by an
// input-required result, with MetaKeyAnswerElsewhere when hint is set, and
// reports the answer's action on the retry.
func asker(hint string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "asked" {
			r, _ := req.Params.InputResponses["q"].(*mcp.ElicitResult)
			if r == nil {
				return nil, errors.New("no answer to q")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action}}}, nil
		}
		p := &mcp.ElicitParams{Message: "Proceed?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
		if hint != "" {
			p.Meta = mcp.Meta{host.MetaKeyAnswerElsewhere: hint}
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": p}, RequestState: "asked"}, nil
	})
	return srv
}

// TestAnswerElsewhere: a question that says how else it can be answered is
// not declined for want of a handler, nor lost in a handler's refusal: the
// call ends in a tool error naming the server, the question, why and that
// way. Without that _meta, the host declines as before. Over both
// generations of the host's connection (2026-07-28: the host's client
// answers the input-required result; 2025-11-25: the go-sdk's server turns
// it into an elicitation request).
func TestAnswerElsewhere(t *testing.T) {
	const hint = "answer it with `tool answer 42`"
	refuse := func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return nil, errors.New("this client cannot ask")
	}
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version "+version, func(t *testing.T) {
			h, _ := start(t, nil, &host.Options{ProtocolVersion: version, InProcess: []host.InProcessServer{
				{ID: "el", Server: asker(hint)}, {ID: "plain", Server: asker("")}}})
			for _, c := range []struct {
				name    string
				handler host.ElicitationHandler
				why     string
			}{{"no handler", nil, "no elicitation handler"}, {"refusing handler", refuse, "this client cannot ask"}} {
				res, err := h.CallTool(context.Background(), "mcp_el_ask", nil, &host.CallOptions{Elicitation: c.handler})
				if err != nil {
					t.Fatalf("%s: err = %v, want a tool error", c.name, err)
				}
				got := text(res)
				for _, want := range []string{"mcp_el_ask (el)", "Proceed?", c.why, hint} {
					if !res.IsError || !strings.Contains(got, want) {
						t.Errorf("%s: result = %v %q, want an error with %q", c.name, res.IsError, got, want)
					}
				}
			}
			if got := callText(t, h, "mcp_plain_ask", `{}`, nil); got != "decline" {
				t.Errorf("a question without the hint, no handler: %q, want decline", got)
			}
		})
	}
}
