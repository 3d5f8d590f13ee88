package config

import (
	"fmt"
	"testing"
)

// TestTransportNames: one vocabulary for a server's transport in every
// file kind — TOML's transport, JSON's transport and type, an agent
// file's (DecodeServer, YAML) — each name read as its one canonical value
// (issue 24 §7: "ws" and "streamable-http" were accepted in JSON and
// refused in TOML and agent files).
func TestTransportNames(t *testing.T) {
	urls := map[Transport]string{
		TransportStdio: "", TransportHTTP: "https://x.example.com/mcp",
		TransportSSE: "https://x.example.com/sse", TransportWebSocket: "wss://x.example.com/ws",
	}
	for name, want := range map[string]Transport{
		"stdio": TransportStdio, "http": TransportHTTP, "streamable-http": TransportHTTP, "streamableHttp": TransportHTTP,
		"sse": TransportSSE, "websocket": TransportWebSocket, "ws": TransportWebSocket,
	} {
		where := fmt.Sprintf(`url = %q`, urls[want])
		jwhere := fmt.Sprintf(`"url": %q`, urls[want])
		ywhere := map[string]any{"url": urls[want]}
		if want == TransportStdio {
			where, jwhere, ywhere = `command = "x"`, `"command": "x"`, map[string]any{"command": "x"}
		}
		toml := fmt.Sprintf("[[mcp_servers]]\nid = \"a\"\ntransport = %q\n%s\n", name, where)
		for file, content := range map[string]string{
			"c.toml":      toml,
			"type.json":   fmt.Sprintf(`{"mcpServers": {"a": {"type": %q, %s}}}`, name, jwhere),
			"transp.json": fmt.Sprintf(`{"mcpServers": {"a": {"transport": %q, %s}}}`, name, jwhere),
		} {
			c, problems := loadString(t, file, content)
			if len(problems) > 0 || len(c.Servers) != 1 || c.Servers[0].Transport != want {
				t.Errorf("%s with %q: %v, %v; want transport %q", file, name, problems, c.Servers, want)
			}
		}
		ywhere["id"], ywhere["transport"] = "a", name
		s, err := DecodeServer("agents/x.yaml", "mcp_servers[0]", ywhere, nil)
		if err != nil || s.Transport != want {
			t.Errorf("DecodeServer with transport %q: %v, %v; want %q", name, s.Transport, err, want)
		}
		if got, ok := ParseTransport(name); !ok || got != want {
			t.Errorf("ParseTransport(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	_, problems := loadString(t, "c.toml", "[[mcp_servers]]\nid = \"a\"\ntransport = \"tcp\"\ncommand = \"x\"\n")
	if want := `c.toml:3: mcp_servers[0].transport: unknown transport "tcp" (want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws))`; len(problems) != 1 || problems[0] != want {
		t.Errorf("transport tcp: %q\nwant %q", problems, want)
	}
	_, problems = loadString(t, "c.json", `{"mcpServers": {"a": {"type": "grpc", "command": "x"}}}`)
	if want := `c.json:1: mcpServers.a.type: unknown transport "grpc" (want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws))`; len(problems) != 1 || problems[0] != want {
		t.Errorf("type grpc: %q\nwant %q", problems, want)
	}
}
