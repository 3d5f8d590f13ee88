package decode

import "testing"

func TestFieldPaths(t *testing.T) {
	tests := []struct{ path, parent string }{
		{"mcp_servers[2].env.API_KEY", "mcp_servers[2].env"},
		{"mcp_servers[2].env", "mcp_servers[2]"},
		{"mcp_servers[2]", "mcp_servers"},
		{"mcp_servers", ""},
		{`mcpServers."my.server".command`, `mcpServers."my.server"`},
		{`mcpServers."my.server"`, "mcpServers"},
		{`"a.b"`, ""},
		{`env."x\".y"`, "env"},
	}
	for _, tt := range tests {
		if got := ParentPath(tt.path); got != tt.parent {
			t.Errorf("ParentPath(%q) = %q, want %q", tt.path, got, tt.parent)
		}
	}
	if got, want := KeyPath("env", "MY VAR"), `env."MY VAR"`; got != want {
		t.Errorf("KeyPath(%q, %q) = %q, want %q", "env", "MY VAR", got, want)
	}
}

func TestJoinPath(t *testing.T) {
	for _, tt := range []struct{ parent, rel, want string }{
		{"", "timeout", "timeout"},
		{"gateway", "servers[1]", "gateway.servers[1]"},
		{"mcp_servers[0]", `env."MY VAR"`, `mcp_servers[0].env."MY VAR"`},
		{"mcp_servers[0]", "", "mcp_servers[0]"},
	} {
		if got := JoinPath(tt.parent, tt.rel); got != tt.want {
			t.Errorf("JoinPath(%q, %q) = %q, want %q", tt.parent, tt.rel, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"command", "args", "tools_allowlist", "timeout", "connect_timeout"}
	for _, tt := range []struct{ key, want string }{
		{"comand", "command"},
		{"Command", "command"},
		{"arg", "args"},
		{"tool_allowlist", "tools_allowlist"},
		{"connect_timout", "connect_timeout"},
		{"colour", ""},
		{"x", ""},
	} {
		if got := Suggest(tt.key, known); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}
