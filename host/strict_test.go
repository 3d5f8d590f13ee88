package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/transport"
)

// TestRefusedAnswers: a stdio server (the fixture, below its SDK) that
// answers a call with what the protocol does not allow gets the call
// failed with an error naming the server, the tool and what was wrong,
// never the smuggled result: before, the last of two "result" members
// came back as the tool's result, a byte that is not UTF-8 became U+FFFD,
// a batch was taken for the answer, and an answer with a second "id"
// left the call waiting for its timeout. A log message with two "data"
// members is dropped, not passed on. The server stays up for the next
// call; the refusals are logged, naming the server, and counted in its
// status.
func TestRefusedAnswers(t *testing.T) {
	for _, tc := range []struct {
		mode, reason string
	}{
		{"duplicate-result", `duplicate member name "result"`},
		{"invalid-utf8", "invalid UTF-8 in result.content[0].text at byte"},
		{"batch", "a JSON-RPC batch"},
		{"two-ids", `duplicate member name "id"`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := fixture(t, "srv", "-bad-answer", tc.mode)
			s.Timeout = 10 * time.Second // the old code's two-ids case waited this long
			h, logs := start(t, []config.Server{s}, nil)
			ctx := context.Background()
			res, err := h.CallTool(ctx, "mcp_srv_bad", nil, nil)
			if err == nil {
				t.Fatalf("CallTool(bad) = %q; want it refused (%s)", text(res), tc.reason)
			}
			var ce *host.CallError
			var je *jsonrpc.Error
			switch {
			case !errors.As(err, &ce) || ce.Server != "srv" || !errors.Is(err, transport.ErrRefusedMessage):
				t.Errorf("CallTool(bad) = %v; want a *CallError of server srv matching transport.ErrRefusedMessage", err)
			case errors.As(err, &je):
				t.Errorf("CallTool(bad) = %v; holds a protocol error (code %d), as if the server had sent it", err, je.Code)
			case !strings.HasPrefix(err.Error(), `server "srv": tool "bad": refused the server's message: `) || !strings.Contains(err.Error(), tc.reason):
				t.Errorf("CallTool(bad) = %q; want it to name the server, the tool and why (%s)", err, tc.reason)
			}
			if got := callText(t, h, "mcp_srv_echo", `{"text":"still up"}`, nil); got != "still up" {
				t.Errorf("echo after the refusal = %q", got)
			}
			if !strings.Contains(logs.String(), "refused a message from the server") || !strings.Contains(logs.String(), "server=srv") {
				t.Errorf("no log line naming the server:\n%s", logs)
			}
			st, err := h.Status("srv")
			if err != nil {
				t.Fatal(err)
			}
			if !containsPrefix(st.Warnings, "refused 1 messages") {
				t.Errorf("status warnings %q; want the refusal counted", st.Warnings)
			}
		})
	}
	t.Run("notification", func(t *testing.T) {
		h, logs := start(t, []config.Server{fixture(t, "srv", "-bad-answer", "notification")}, nil)
		var got []string
		res, err := h.CallTool(context.Background(), "mcp_srv_bad", nil, &host.CallOptions{
			Log: func(server string, p *mcp.LoggingMessageParams) {
				b, _ := json.Marshal(p.Data)
				got = append(got, server+": "+string(b))
			},
		})
		if err != nil || text(res) != "bad answered properly" {
			t.Fatalf("CallTool(bad) = %v, %v; want its answer", res, err)
		}
		// The host routes a call's log messages as it reads them, before
		// the answer that follows them.
		if len(got) != 0 {
			t.Errorf("log messages passed on: %q; want the one with two data members dropped", got)
		}
		if !strings.Contains(logs.String(), `duplicate member name \"data\" in params`) {
			t.Errorf("no log line saying why:\n%s", logs)
		}
	})
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
