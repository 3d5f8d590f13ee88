package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/guardrail"
	"github.com/switchboardmcp/switchboard/host"
)

const benchToken = "ghp_1234567890abcdefghijABCDEFGHIJ123456"

// guardChain is the chain the integration tests run: credentials masked in
// results, personal data masked in arguments (so the server never sees
// it), "forbidden" rejected in results, "internal" flagged on the support
// endpoint only.
func guardChain(t testing.TB) *guardrail.Chain {
	c, err := guardrail.New([]guardrail.Rule{
		{Filter: guardrail.Credentials{}, Action: guardrail.Mask, Direction: guardrail.Results},
		{Filter: guardrail.PII{}, Action: guardrail.Mask, Direction: guardrail.Arguments},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`forbidden`)}}, Action: guardrail.Reject, Direction: guardrail.Results},
		{Filter: guardrail.Deny{Patterns: []*regexp.Regexp{regexp.MustCompile(`internal`)}}, Action: guardrail.Flag, Endpoints: []string{"support"}, Name: "internal-flag"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func records(t *testing.T, res *mcp.CallToolResult) []guardrail.Record {
	t.Helper()
	v, ok := res.Meta[guardrail.MetaKey]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(v)
	var recs []guardrail.Record
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestCallToolGuardrails(t *testing.T) {
	ctx := context.Background()
	h, err := host.Start(ctx, []config.Server{fixture(t, "fx")}, &host.Options{Guardrails: guardChain(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w := h.Watch(0)
	defer w.Close()
	echo := func(ctx context.Context, text string) (*mcp.CallToolResult, error) {
		args, _ := json.Marshal(map[string]string{"text": text})
		return h.CallTool(ctx, "mcp_fx_echo", args, nil)
	}

	// A result's credential is masked; the call's record says so, and
	// an event is raised, neither holding the token.
	res, err := echo(ctx, "token "+benchToken)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "token [masked:github-token]" {
		t.Errorf("result = %q", got)
	}
	recs := records(t, res)
	if len(recs) != 1 || recs[0].Filter != "credentials" || recs[0].Action != guardrail.Mask || recs[0].Direction != guardrail.Results || recs[0].Part != "content[0].text" {
		t.Errorf("records = %+v", recs)
	}
	evCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		ev, err := w.Next(evCtx)
		if err != nil {
			t.Fatalf("no guardrail event: %v", err)
		}
		if ev.Kind != host.EventGuardrail {
			continue
		}
		if ev.Server != "fx" || ev.Tool != "echo" || ev.Guardrail.Kind != "github-token" {
			t.Errorf("event = %+v %+v", ev, ev.Guardrail)
		}
		break
	}

	// Arguments are masked before the server sees them: the echo echoes the mask.
	res, err = echo(ctx, "mail bob@example.org")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "mail [masked:email]" {
		t.Errorf("echo of masked arguments = %q", got)
	}
	if recs := records(t, res); len(recs) != 1 || recs[0].Direction != guardrail.Arguments || recs[0].Part != "arguments.text" {
		t.Errorf("records = %+v", recs)
	}

	// A rejected result is an error naming the rule, the server and the tool.
	_, err = echo(ctx, "a forbidden word")
	var ce *host.CallError
	if !errors.As(err, &ce) || !errors.Is(err, guardrail.ErrRejected) || ce.Server != "fx" {
		t.Fatalf("reject: err = %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `guardrail "deny" rejected the result: content[0].text`) || strings.Contains(msg, "forbidden word") {
		t.Errorf("reject message = %q", msg)
	}

	// Endpoint scope: only the support endpoint's calls are flagged.
	res, err = echo(ctx, "internal note")
	if err != nil || len(records(t, res)) != 0 {
		t.Errorf("default endpoint: records %+v, err %v", records(t, res), err)
	}
	res, err = echo(host.WithEndpoint(ctx, "support"), "internal note")
	if err != nil {
		t.Fatal(err)
	}
	if recs := records(t, res); len(recs) != 2 || recs[0].Rule != "internal-flag" || recs[0].Action != guardrail.Flag {
		t.Errorf("support endpoint: records %+v", recs)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "internal note" {
		t.Errorf("a flag changed the result: %q", got)
	}
}

// TestCallOnArguments: CallOptions.OnArguments gets, once, the arguments
// the server is sent — personal data masked by the argument rule — and is
// not called for a call refused before (invalid arguments).
func TestCallOnArguments(t *testing.T) {
	ctx := context.Background()
	h, err := host.Start(ctx, []config.Server{fixture(t, "fx")}, &host.Options{Guardrails: guardChain(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var got []string
	opts := &host.CallOptions{OnArguments: func(args json.RawMessage) { got = append(got, string(args)) }}
	if _, err := h.CallTool(ctx, "mcp_fx_echo", json.RawMessage(`{"text":"mail bob@example.org"}`), opts); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != `{"text":"mail [masked:email]"}` {
		t.Errorf("OnArguments got %q, want the masked arguments once", got)
	}
	got = nil
	if _, err := h.CallTool(ctx, "mcp_fx_add", json.RawMessage(`{"a":"bob@example.org","b":1}`), opts); !errors.Is(err, host.ErrInvalidArguments) {
		t.Fatalf("add with a string: %v, want invalid arguments", err)
	}
	if got != nil {
		t.Errorf("OnArguments got %q for a call refused before, want no call", got)
	}
}
