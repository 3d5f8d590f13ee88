package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// TestCallerReachesInProcessOnly: a call's Caller, IdempotencyKey and
// Detach (with its TaskNote) reach an in-process server in _meta, set by the host from CallOptions
// alone (a caller named in CallOptions.Meta is replaced, or removed when
// the call names none), and never a server of another process.
func TestCallerReachesInProcessOnly(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "who", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		m := req.Params.GetMeta()
		caller, hasCaller := m[host.MetaKeyCaller]
		key := m[host.MetaKeyIdempotencyKey]
		text := "caller=" + jsonText(caller) + " key=" + jsonText(key)
		if !hasCaller {
			text = "caller=none key=" + jsonText(key)
		}
		if d, ok := m[host.MetaKeyDetach]; ok {
			text += " detach=" + jsonText(d)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	metaLog := filepath.Join(t.TempDir(), "meta.log")
	h, _ := start(t, []config.Server{fixture(t, "fx", "-meta-log", metaLog)}, &host.Options{InProcess: []host.InProcessServer{{ID: "who", Server: srv}}})
	for _, c := range []struct {
		name string
		opts *host.CallOptions
		want string
	}{
		{"named", &host.CallOptions{Caller: "oauth:ana", IdempotencyKey: "k1"}, `caller="oauth:ana" key="k1"`},
		{"forged in Meta", &host.CallOptions{Caller: "session:b", RequestOptions: host.RequestOptions{Meta: mcp.Meta{host.MetaKeyCaller: "owner"}}}, `caller="session:b" key=null`},
		{"forged, no caller", &host.CallOptions{RequestOptions: host.RequestOptions{Meta: mcp.Meta{host.MetaKeyCaller: "owner"}}}, `caller=none key=null`},
		{"none", nil, `caller=none key=null`},
		{"detached", &host.CallOptions{Detach: true}, `caller=none key=null detach=true`},
		{"detached with a note", &host.CallOptions{Detach: true, TaskNote: "n1"}, `caller=none key=null detach="n1"`},
		{"a note without Detach", &host.CallOptions{TaskNote: "n1"}, `caller=none key=null`},
		{"detach forged in Meta", &host.CallOptions{RequestOptions: host.RequestOptions{Meta: mcp.Meta{host.MetaKeyDetach: true}}}, `caller=none key=null`},
	} {
		if got := callText(t, h, "mcp_who_whoami", `{}`, c.opts); got != c.want {
			t.Errorf("%s: the in-process server saw %s, want %s", c.name, got, c.want)
		}
	}
	opts := &host.CallOptions{Caller: "oauth:ana", IdempotencyKey: "k1", Detach: true, TaskNote: "n1", RequestOptions: host.RequestOptions{Meta: mcp.Meta{host.MetaKeyCaller: "owner"}}}
	if got := callText(t, h, "mcp_fx_echo", `{"text":"hi"}`, opts); got != "hi" {
		t.Fatalf("echo = %q", got)
	}
	b, err := os.ReadFile(metaLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{host.MetaKeyCaller, host.MetaKeyIdempotencyKey, host.MetaKeyDetach, "oauth:ana", "k1", "n1"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the stdio server's _meta holds %q:\n%s", leak, b)
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
