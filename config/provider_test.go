package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboardmcp/switchboard/secret"
)

func TestProviders(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "p.toml", `[providers.work]
type = "openai"
base_url = "https://llm.example.com/v1"
api_key = "{{secrets.work}}"
headers = { X-Team = "agents" }

[providers.local]
type = "openai"
base_url = "http://127.0.0.1:8000/v1"
allow_local_endpoint = true
`)
	c, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := map[string]Provider{
		"work": {Name: "work", Type: "openai", BaseURL: "https://llm.example.com/v1", APIKey: "{{secrets.work}}",
			Headers: map[string]string{"X-Team": "agents"}, Source: Position{File: file, Line: 1, Field: "providers.work"}},
		"local": {Name: "local", Type: "openai", BaseURL: "http://127.0.0.1:8000/v1", AllowLocalEndpoint: true,
			Source: Position{File: file, Line: 7, Field: "providers.local"}},
	}
	if diff := cmp.Diff(want, c.Providers); diff != "" {
		t.Errorf("Providers (-want +got):\n%s", diff)
	}

	red := secret.NewRedactor()
	p, err := c.Providers["work"].Resolve(func(string) (string, bool) { return "", false },
		secret.EnvStore{LookupEnv: func(k string) (string, bool) { return "sk-123", k == "SWITCHBOARD_SECRET_WORK" }}, red)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if p.APIKey != "sk-123" || strings.Contains(red.Redact("key sk-123"), "sk-123") {
		t.Errorf("Resolve: APIKey %q, redacted %q", p.APIKey, red.Redact("key sk-123"))
	}
	if _, err := c.Providers["work"].Resolve(func(string) (string, bool) { return "", false }, nil, nil); err == nil ||
		!strings.Contains(err.Error(), `provider "work": api_key`) {
		t.Errorf("Resolve without the secret: %v, want an error naming provider and field", err)
	}
}

func TestProviderProblems(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "p.toml", `[providers.a]
type = "gemini"
api_key = "sk-literal"

[providers.b]
type = "anthropic"
base_url = "http://10.0.0.1/v1"
temperature = 1

[providers.c]
type = "openai"
base_url = ""
api_key = "{{secrets.c}}"

[providers.d]
base_url = " "
`)
	_, err := Load(&LoadOptions{File: file, Dir: dir, Getenv: getenv(nil)})
	var got []string
	for _, p := range Problems(err) {
		got = append(got, p.Error())
	}
	want := []string{
		file + `:2: providers.a.type: unknown provider type "gemini" (want "openai" or "anthropic")`,
		file + `:3: providers.a.api_key: a literal key is not allowed in a config file; write "{{env.NAME}}" or "{{secrets.NAME}}" and set the variable`,
		file + `:7: providers.b.base_url: ` + problemReason(t, "http://10.0.0.1/v1"),
		file + `:8: providers.b.temperature: unknown key "temperature"`,
		// Read as unset, an empty base_url would send c's key to OpenAI.
		file + `:12: providers.c.base_url: empty; write the URL of the API, such as http://127.0.0.1:11434/v1, or leave base_url out to use https://api.openai.com/v1 (the public API of type "openai")`,
		file + `:15: providers.d.type: missing; want "openai" or "anthropic"`,
		file + `:16: providers.d.base_url: empty; write the URL of the API, such as http://127.0.0.1:11434/v1`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "sk-literal") {
		t.Errorf("error quotes the literal key: %v", err)
	}
}

func problemReason(t *testing.T, url string) string {
	c := &Config{Servers: []Server{{ID: "x", URL: url}}}
	ps := Problems(c.Validate())
	if len(ps) != 1 {
		t.Fatalf("Validate(%q) = %v, want one problem", url, ps)
	}
	return ps[0].Msg
}

func TestDecodeServer(t *testing.T) {
	m := map[string]any{"id": "calc", "command": "node", "args": []any{"x.js"}, "timeout": int64(5), "url": "https://x.example.com"}
	lines := map[string]int{"mcp_servers[0]": 3, "mcp_servers[0].id": 3, "mcp_servers[0].timeout": 6, "mcp_servers[0].url": 7}
	s, err := DecodeServer("a.md", "mcp_servers[0]", m, lines)
	var got []string
	for _, p := range Problems(err) {
		got = append(got, p.Error())
	}
	want := []string{
		`a.md:6: mcp_servers[0].timeout: must be a duration string such as "90s", not an integer`,
		`a.md:7: mcp_servers[0].url: only for network transports (http, sse, websocket), not stdio`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if s.Transport != TransportStdio || s.ConnectTimeout != DefaultConnectTimeout || s.Source.Line != 3 {
		t.Errorf("DecodeServer: %+v, want defaults applied and Source line 3", s)
	}
}
