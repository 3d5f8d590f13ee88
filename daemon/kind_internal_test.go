package daemon

import (
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/host"
)

// TestKinds: every kind of the table is told apart by its name and its
// problem type, which decodes back to it; an error of each sentinel or
// type is of its kind, also wrapped, and again once it crossed the wire
// (KindOfType(type).Errorf), where it still matches the sentinel; a kind
// a face answers has a 4xx or 5xx status; the exit code is 1, 2 or 130.
func TestKinds(t *testing.T) {
	seen := map[Kind]bool{}
	for _, r := range kinds {
		k := r.kind
		if seen[k] {
			t.Errorf("kind %q is in the table twice", k)
		}
		seen[k] = true
		if got := KindOfType(k.Type()); got != k {
			t.Errorf("KindOfType(%q) = %q, want %q", k.Type(), got, k)
		}
		if s := k.Status(); s < 400 || s > 599 {
			t.Errorf("%s.Status() = %d, want 4xx or 5xx", k, s)
		}
		if x := k.Exit(); x != 1 && x != 2 && x != 130 {
			t.Errorf("%s.Exit() = %d, want 1, 2 or 130", k, x)
		}
		for _, s := range r.is {
			err := fmt.Errorf("context: %w", s)
			wire := KindOfType(KindOf(err).Type()).Errorf("%s", err)
			if KindOf(err) != k || KindOf(wire) != k || !errors.Is(wire, s) {
				t.Errorf("%v: kind %q, from the wire %q (matching it: %v), want %q", err, KindOf(err), KindOf(wire), errors.Is(wire, s), k)
			}
		}
	}
	for _, typ := range []string{"", "about:blank", ProblemTypePrefix + "nonesuch", "urn:other:problem:timeout"} {
		if k := KindOfType(typ); k != "" {
			t.Errorf("KindOfType(%q) = %q, want none", typ, k)
		}
	}
	if k := KindOf(errors.New("anything")); k != KindFailed {
		t.Errorf("KindOf(a plain error) = %q, want %q", k, KindFailed)
	}
}

// TestStatusOf: a server's own refusal keeps its meaning in the status of
// every face (a resource it does not have 404, parameters it refuses
// 422), while its kind stays server_error (exit 1); what a call error
// wraps (a timeout, arguments refused before the call) is its kind.
func TestStatusOf(t *testing.T) {
	call := func(method string, err error) error { return &host.CallError{Server: "s", Method: method, Err: err} }
	for _, tc := range []struct {
		err    error
		kind   Kind
		status int
	}{
		{call("resources/read", &jsonrpc.Error{Code: -32002}), KindServerError, 404},
		{call("resources/read", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}), KindServerError, 404},
		{call("prompts/get", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}), KindServerError, 422},
		{call("tools/call", &jsonrpc.Error{Code: jsonrpc.CodeInternalError}), KindServerError, 502},
		{call("tools/call", errors.New("EOF")), KindServerError, 502},
		{call("tools/call", host.ErrTimeout), KindTimeout, 504},
		{call("tools/call", fmt.Errorf("%w: /a", host.ErrInvalidArguments)), KindInvalidArguments, 422},
	} {
		if k, s := KindOf(tc.err), StatusOf(tc.err); k != tc.kind || s != tc.status {
			t.Errorf("%v: %s %d, want %s %d", tc.err, k, s, tc.kind, tc.status)
		}
	}
}
