package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// TestErrorJSON: a host error that crosses the wire as ErrorJSON comes back
// with the same text, matching the same sentinels, and a call's as a
// *CallError with the same fields: what a CLI command says and how it
// exits does not depend on whether the host ran in its process or in a
// daemon's.
func TestErrorJSON(t *testing.T) {
	fx := fixture(t, "fx")
	fx.Timeout = 300 * time.Millisecond
	h, _ := start(t, []config.Server{fx, fixture(t, "pe", "-without", "tools/call")}, nil)
	ctx := context.Background()
	call := func(name, args string) error {
		_, err := h.CallTool(ctx, name, json.RawMessage(args), nil)
		if err == nil {
			t.Fatalf("CallTool(%s, %s) succeeded", name, args)
		}
		return err
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, errCancelled := h.CallTool(cancelled, "mcp_fx_slow", json.RawMessage(`{"ms":10}`), nil)
	for _, tc := range []struct {
		name string
		err  error
		is   []error
	}{
		{"unknown tool", call("mcp_fx_nope", `{}`), []error{host.ErrUnknownTool}},
		{"invalid arguments", call("mcp_fx_add", `{"a":"x"}`), []error{host.ErrInvalidArguments}},
		{"timeout", call("mcp_fx_slow", `{"ms":5000}`), []error{host.ErrTimeout}},
		{"cancelled", errCancelled, []error{context.Canceled}},
		{"protocol error", call("mcp_pe_echo", `{"text":"x"}`), nil},
		{"plain", errors.New("no server answers"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("no error to carry")
			}
			raw, err := json.Marshal(host.NewErrorJSON(tc.err))
			if err != nil {
				t.Fatal(err)
			}
			var back host.ErrorJSON
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			got := back.Err()
			if got.Error() != tc.err.Error() {
				t.Errorf("text after the wire:\n%s\nwant\n%s", got, tc.err)
			}
			for _, s := range tc.is {
				if !errors.Is(got, s) {
					t.Errorf("after the wire, %q does not match %v (%s)", got, s, raw)
				}
			}
			if !errors.Is(tc.err, host.ErrUnknownTool) && errors.Is(got, host.ErrUnknownTool) {
				t.Errorf("after the wire, %q matches a sentinel it did not", got)
			}
			var wantRPC, haveRPC *jsonrpc.Error
			if errors.As(tc.err, &wantRPC) {
				if !errors.As(got, &haveRPC) || haveRPC.Code != wantRPC.Code || haveRPC.Message != wantRPC.Message {
					t.Errorf("the protocol error after the wire: %v, want %v", haveRPC, wantRPC)
				}
			}
			var want, have *host.CallError
			if errors.As(tc.err, &want) {
				if !errors.As(got, &have) {
					t.Fatalf("a *CallError came back as %T", got)
				}
				if have.Server != want.Server || have.Tool != want.Tool || have.Method != want.Method || have.Timeout != want.Timeout {
					t.Errorf("CallError after the wire: %+v, want %+v", have, want)
				}
			}
		})
	}
	if host.NewErrorJSON(nil) != nil || (*host.ErrorJSON)(nil).Err() != nil {
		t.Error("nil does not stay nil")
	}
}
