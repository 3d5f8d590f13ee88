package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type mapStore map[string]string

func (m mapStore) Lookup(name string) (string, bool) { v, ok := m[name]; return v, ok }

// readEntries reads the Claude Desktop and Cursor files of a test.
func readEntries(t *testing.T, dir string, files map[string]string) []Entry {
	t.Helper()
	var out []Entry
	for _, client := range []string{ClientClaudeDesktop, ClientCursor} {
		content, ok := files[client]
		if !ok {
			continue
		}
		f := ClientFile{Client: client, Path: writeFile(t, dir, client+".json", content), Containers: [][]string{{"mcpServers"}}}
		es, err := ReadClientFile(f, dir)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, es...)
	}
	return out
}

// summary lists a plan as a test compares it, paths cut to their base.
func summary(p *ImportPlan, dir string) []string {
	var out []string
	for _, a := range p.Add {
		line := fmt.Sprintf("+ %s (%s): %s %v env=%v headers=%v local=%v", a.Server.ID, a.Entry.File.Client, a.Server.Command+a.Server.URL, a.Server.Args, a.Server.Env, a.Server.Headers, a.Server.AllowLocalEndpoint)
		out = append(out, line)
	}
	for _, s := range p.Skipped {
		out = append(out, strings.ReplaceAll(fmt.Sprintf("- %s (%s) %s: %s", s.ID, s.Entry.File.Client, s.Kind, s.Reason), dir+"/", ""))
	}
	for _, m := range p.Secrets {
		out = append(out, fmt.Sprintf("secret %s stored=%v len=%d", m, m.Stored, len(m.Value)))
	}
	if len(p.Unmatched) > 0 {
		out = append(out, fmt.Sprintf("unmatched %v", p.Unmatched))
	}
	return out
}

const (
	desktopJSON = `{"mcpServers": {
  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "local": {"url": "http://127.0.0.1:3000/mcp"},
  "argkey": {"command": "srv", "args": ["--api-key", "k-1234567890"]},
  "search": {"type": "http", "url": "https://search.example.com/mcp", "headers": {"Authorization": "Bearer abcdef0123456789"}},
  "off": {"command": "x", "disabled": true},
  "broken": {"command": "x", "timeout": "soon"}
}}`
	cursorJSON = `{"mcpServers": {
  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github@1.0"], "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}`
)

func TestPlanImport(t *testing.T) {
	dir := t.TempDir()
	entries := readEntries(t, dir, map[string]string{ClientClaudeDesktop: desktopJSON, ClientCursor: cursorJSON})
	existing := &Config{Servers: []Server{
		{ID: "memory", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory@2"}, Source: Position{File: "config.toml", Line: 7}},
	}}

	// Without --move-secrets, servers holding credentials are left.
	p := PlanImport(entries, &ImportOptions{Existing: existing})
	want := []string{
		"+ everything (claude-desktop): npx [-y @modelcontextprotocol/server-everything] env=map[] headers=map[] local=false",
		"+ local (claude-desktop): http://127.0.0.1:3000/mcp [] env=map[] headers=map[] local=false",
		"- github (claude-desktop) secret: env.GITHUB_TOKEN holds a credential written out (it looks like a GitHub token), and Switchboard writes none into a config file: re-run with --move-secrets to keep it in the secret store as {{secrets.github_token}}",
		"- argkey (claude-desktop) secret: args[1] looks like a credential written out (it follows --api-key), and Switchboard writes none into a config file; a command line and a URL are no place for one (argv is readable by every user on this machine): if the server can read it from an environment variable, add it with `switchboard add argkey --env NAME={{secrets.NAME}} …` after `switchboard secrets set NAME`",
		"- search (claude-desktop) secret: headers.Authorization holds a credential written out (its name says so), and Switchboard writes none into a config file: re-run with --move-secrets to keep it in the secret store as {{secrets.search_authorization}}",
		"- off (claude-desktop) disabled: disabled in Claude Desktop",
		`- broken (claude-desktop) invalid: claude-desktop.json:8: mcpServers.broken.timeout: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
		"- everything (cursor) duplicate: the same as everything from Claude Desktop (claude-desktop.json)",
		"- github (cursor) secret: env.GITHUB_TOKEN holds a credential written out (it looks like a GitHub token), and Switchboard writes none into a config file: re-run with --move-secrets to keep it in the secret store as {{secrets.github_token}}",
		"- memory (cursor) clash: memory is already configured differently (config.toml:7: args differ); to take this one too: switchboard import --from cursor --only memory --rename memory=memory-2",
	}
	if diff := cmp.Diff(want, summary(p, dir)); diff != "" {
		t.Errorf("plan without --move-secrets (-want +got):\n%s", diff)
	}

	// With --move-secrets and --allow-local-endpoint; the store already
	// holds the search key under the name it would take.
	store := mapStore{"search_authorization": "abcdef0123456789"}
	p = PlanImport(entries, &ImportOptions{Existing: existing, MoveSecrets: true, AllowLocalEndpoint: true, Secrets: store})
	want = []string{
		"+ everything (claude-desktop): npx [-y @modelcontextprotocol/server-everything] env=map[] headers=map[] local=false",
		"+ github (claude-desktop): npx [-y @modelcontextprotocol/server-github] env=map[GITHUB_TOKEN:{{secrets.github_token}}] headers=map[] local=false",
		"+ local (claude-desktop): http://127.0.0.1:3000/mcp [] env=map[] headers=map[] local=true",
		"+ search (claude-desktop): https://search.example.com/mcp [] env=map[] headers=map[Authorization:Bearer {{secrets.search_authorization}}] local=false",
		"- argkey (claude-desktop) secret: args[1] looks like a credential written out (it follows --api-key), and Switchboard writes none into a config file; a command line and a URL are no place for one (argv is readable by every user on this machine): if the server can read it from an environment variable, add it with `switchboard add argkey --env NAME={{secrets.NAME}} …` after `switchboard secrets set NAME`",
		"- off (claude-desktop) disabled: disabled in Claude Desktop",
		`- broken (claude-desktop) invalid: claude-desktop.json:8: mcpServers.broken.timeout: invalid duration "soon" (want a Go duration such as "90s" or "2m30s")`,
		"- everything (cursor) duplicate: the same as everything from Claude Desktop (claude-desktop.json)",
		"- github (cursor) clash: github from Claude Desktop (claude-desktop.json) is another server with this id (args differ); to take this one too: switchboard import --from cursor --only github --rename github=github-2",
		"- memory (cursor) clash: memory is already configured differently (config.toml:7: args differ); to take this one too: switchboard import --from cursor --only memory --rename memory=memory-2",
		"secret github env.GITHUB_TOKEN → {{secrets.github_token}} stored=false len=40",
		"secret search headers.Authorization → {{secrets.search_authorization}} stored=true len=16",
	}
	if diff := cmp.Diff(want, summary(p, dir)); diff != "" {
		t.Errorf("plan with --move-secrets (-want +got):\n%s", diff)
	}

	// Imported before: github is configured with its placeholder, whose
	// secret holds the entry's token: already configured, not a clash.
	// The store holds another value under search's name: refused.
	existing.Servers = append(existing.Servers, Server{ID: "github", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
		Env: map[string]string{"GITHUB_TOKEN": "{{secrets.github_token}}"}, Source: Position{File: "config.toml", Line: 12}})
	store = mapStore{"github_token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "search_authorization": "other"}
	p = PlanImport(entries, &ImportOptions{Existing: existing, MoveSecrets: true, Secrets: store, Only: []string{"github", "search", "nope"}})
	want = []string{
		"- github (claude-desktop) configured: already configured (config.toml:12)",
		"- search (claude-desktop) secret: headers.Authorization would be stored as secret search_authorization, which the secret store already holds with another value: store it under a name of your choosing (`switchboard secrets set NAME`) and add the server by hand",
		"- github (cursor) clash: github is already configured differently (config.toml:12: args differ); to take this one too: switchboard import --from cursor --only github --rename github=github-2",
		"unmatched [nope]",
	}
	if diff := cmp.Diff(want, summary(p, dir)); diff != "" {
		t.Errorf("plan against an earlier import (-want +got):\n%s", diff)
	}

	// The hint works: Cursor's github under another id.
	var cursor []Entry
	for _, e := range entries {
		if e.File.Client == ClientCursor {
			cursor = append(cursor, e)
		}
	}
	p = PlanImport(cursor, &ImportOptions{Existing: existing, MoveSecrets: true, Secrets: store, Only: []string{"github"}, Rename: map[string]string{"github": "github-2"}})
	want = []string{
		"+ github-2 (cursor): npx [-y @modelcontextprotocol/server-github@1.0] env=map[GITHUB_TOKEN:{{secrets.github-2_github_token}}] headers=map[] local=false",
		"secret github-2 env.GITHUB_TOKEN → {{secrets.github-2_github_token}} stored=false len=40",
	}
	if diff := cmp.Diff(want, summary(p, dir)); diff != "" {
		t.Errorf("plan with --rename (-want +got):\n%s", diff)
	}
	p.Refuse("github-2", "refused")
	if len(p.Add) != 0 || len(p.Secrets) != 0 || len(p.Skipped) != 1 || p.Skipped[0].Kind != SkipInvalid {
		t.Errorf("after Refuse: %v", summary(p, dir))
	}
}

func TestSecretName(t *testing.T) {
	for _, tc := range []struct{ id, table, key, want string }{
		{"github", "env", "GITHUB_TOKEN", "github_token"},
		{"github", "env", "GH_TOKEN", "github_gh_token"},
		{"my-gh", "env", "MY_GH_TOKEN", "my_gh_token"},
		{"search", "headers", "Authorization", "search_authorization"},
		{"search", "headers", "X-API-Key", "search_x-api-key"},
		{"1pass", "env", "TOKEN", "_1pass_token"},
	} {
		if got := secretName(tc.id, Literal{table: tc.table, key: tc.key}); got != tc.want {
			t.Errorf("secretName(%s, %s.%s) = %q, want %q", tc.id, tc.table, tc.key, got, tc.want)
		}
	}
}
