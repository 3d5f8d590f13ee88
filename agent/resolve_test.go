package agent

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/config"
)

// TestResolve pins the resolution order: configuration → agent file → run
// flags.
func TestResolve(t *testing.T) {
	cfgSrv := func(id string, allow ...string) config.Server {
		s := config.Server{ID: id, Transport: config.TransportStdio, Command: id,
			Timeout: config.DefaultTimeout, ConnectTimeout: config.DefaultConnectTimeout,
			Source: config.Position{File: "switchboard.toml", Line: 1, Field: "mcp_servers[0]"}}
		if allow != nil {
			s.ToolsAllowlist = allow
		}
		return s
	}
	cfg := &config.Config{Servers: []config.Server{cfgSrv("everything"), cfgSrv("memory"), cfgSrv("gh", "list_issues", "create_issue")}}
	inline := cfgSrv("local")
	inline.Source = config.Position{File: "a.md", Line: 4, Field: "mcp_servers[1]"}
	pos := func(i int) config.Position {
		return config.Position{File: "a.md", Line: 3 + i, Field: "mcp_servers[" + string(rune('0'+i)) + "]"}
	}
	ref := func(i int, id string, allow ...string) ServerEntry {
		return ServerEntry{Ref: id, ToolsAllowlist: allow, Pos: pos(i)}
	}
	ids := func(p *Plan) []string {
		var out []string
		for _, s := range p.Servers {
			out = append(out, s.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		agent     Agent
		o         *Overrides
		servers   []string
		tools     []string
		allowlist map[string][]string
		err       string
	}{
		{name: "no mcp_servers: every configured server", agent: Agent{}, servers: []string{"everything", "memory", "gh"}},
		{name: "empty mcp_servers: none", agent: Agent{Servers: []ServerEntry{}}},
		{name: "the agent's servers and tools", agent: Agent{
			Servers: []ServerEntry{ref(0, "everything"), {Server: inline, Pos: pos(1)}},
			Tools:   []string{"mcp_everything_get-sum"}},
			servers: []string{"everything", "local"}, tools: []string{"mcp_everything_get-sum"}},
		{name: "ref narrows the allowlist", agent: Agent{Servers: []ServerEntry{ref(0, "gh", "list_issues")}},
			servers: []string{"gh"}, allowlist: map[string][]string{"gh": {"list_issues"}}},
		{name: "ref cannot widen the allowlist", agent: Agent{Servers: []ServerEntry{ref(0, "gh", "delete_repo")}},
			err: `a.md:3: mcp_servers[0].tools_allowlist: "delete_repo" is not in server "gh"'s own tools_allowlist`},
		{name: "unknown ref", agent: Agent{Servers: []ServerEntry{ref(0, "nope")}},
			err: `a.md:3: mcp_servers[0].ref: no server "nope" in the configuration (known: everything, memory, gh)`},
		{name: "--mcp picks among the agent's and configured servers", agent: Agent{Servers: []ServerEntry{{Server: inline, Pos: pos(0)}}},
			o: &Overrides{MCP: []string{"memory", "local"}}, servers: []string{"memory", "local"}},
		{name: "--mcp none", agent: Agent{Servers: []ServerEntry{ref(0, "everything")}}, o: &Overrides{MCP: []string{}}},
		{name: "--mcp unknown", agent: Agent{}, o: &Overrides{MCP: []string{"nope"}}, err: `--mcp: no server "nope"`},
		{name: "--tools narrows", agent: Agent{Tools: []string{"a", "b"}}, o: &Overrides{Tools: []string{"b"}},
			servers: []string{"everything", "memory", "gh"}, tools: []string{"b"}},
		{name: "--tools without agent tools", agent: Agent{Servers: []ServerEntry{}}, o: &Overrides{Tools: []string{"x"}}, tools: []string{"x"}},
		{name: "--tools cannot widen", agent: Agent{Tools: []string{"a"}}, o: &Overrides{Tools: []string{"z"}},
			err: `--tools: "z" is not among the agent's tools (a); --tools can only narrow them`},
		{name: "same id, other settings", agent: Agent{Servers: []ServerEntry{{Server: func() config.Server {
			s := cfgSrv("memory")
			s.Command = "other"
			return s
		}(), Pos: pos(0)}}}, err: `a.md:3: mcp_servers[0]: server "memory" is declared with different settings at switchboard.toml:1 (mcp_servers[0])`},
		{name: "same id, same settings", agent: Agent{Servers: []ServerEntry{{Server: cfgSrv("memory"), Pos: pos(0)}}}, servers: []string{"memory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Resolve(cfg, &tc.agent, tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Resolve = %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if diff := cmp.Diff(tc.servers, ids(p)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tools, p.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for id, want := range tc.allowlist {
				for _, s := range p.Servers {
					if s.ID == id {
						if diff := cmp.Diff(want, s.ToolsAllowlist); diff != "" {
							t.Errorf("%s tools_allowlist (-want +got):\n%s", id, diff)
						}
					}
				}
			}
		})
	}
}

func TestCheckConflicts(t *testing.T) {
	a, err := Parse("agents/a.yaml", []byte("mcp_servers:\n  - id: x\n    command: one\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("agents/b.yaml", []byte("mcp_servers:\n  - id: x\n    command: two\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckConflicts(nil, []*Agent{a, b})
	want := `agents/b.yaml:2: mcp_servers[0]: server "x" is declared with different settings at agents/a.yaml:2 (mcp_servers[0]); use ref: x, or another id`
	if err == nil || err.Error() != want {
		t.Errorf("CheckConflicts = %v, want %s", err, want)
	}
	if err := CheckConflicts(nil, []*Agent{a, a}); err != nil {
		t.Errorf("CheckConflicts(same twice) = %v", err)
	}
}

// TestResolveInlineServerNetwork: an inline server's URL meets the
// configuration's [network] policy, as a configured server's does: a
// private address is refused, naming the agent file and field, unless
// allow_cidrs admits it (or the entry says allow_local_endpoint).
func TestResolveInlineServerNetwork(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.yaml")
	body := "model: openai:gpt-4.1-mini\nmcp_servers:\n  - id: lan\n    url: http://10.20.0.5:8080/mcp\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v (the address policy is applied when resolving, with the configuration)", err)
	}
	_, err = Resolve(&config.Config{}, a, nil)
	if err == nil || !strings.Contains(err.Error(), path+":3: mcp_servers[0].url:") || !strings.Contains(err.Error(), "10.20.0.5") {
		t.Errorf("without allow_cidrs: err = %v, want the private address refused, naming %s:3 mcp_servers[0].url", err, path)
	}
	cfg := &config.Config{Network: config.Network{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}}
	p, err := Resolve(cfg, a, nil)
	if err != nil || len(p.Servers) != 1 {
		t.Errorf("with allow_cidrs 10.20.0.0/16: plan %v, err %v; want the server", p, err)
	}
}
