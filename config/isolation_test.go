package config

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// recordingStore answers from a table and records every name asked for.
type recordingStore struct {
	values map[string]string
	mu     sync.Mutex
	asked  []string
}

func (s *recordingStore) Lookup(name string) (string, bool) {
	s.mu.Lock()
	s.asked = append(s.asked, name)
	s.mu.Unlock()
	v, ok := s.values[name]
	return v, ok
}

// TestResolveIsolation: resolving server A looks up only the secrets A's
// own entry names, and registers only their values; B's secret is never
// read, never handed to A and never known to A's redactor.
func TestResolveIsolation(t *testing.T) {
	store := &recordingStore{values: map[string]string{"a_tok": "a-secret-value", "b_tok": "b-secret-value"}}
	a := Server{ID: "a", Command: "srv-a", Env: map[string]string{"TOKEN": "{{secrets.a_tok}}"}}
	b := Server{ID: "b", URL: "https://b.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer {{secrets.b_tok}}"}}

	redA := secret.NewRedactor()
	ra, err := a.Resolve(lookup(nil), store, redA)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(store.asked, []string{"a_tok"}) {
		t.Errorf("resolving a looked up %v, want only [a_tok]", store.asked)
	}
	for k, v := range ra.Env {
		if strings.Contains(v, "b-secret-value") {
			t.Errorf("a's env %s holds b's secret", k)
		}
	}
	if ra.Headers != nil {
		t.Errorf("a got headers %v", ra.Headers)
	}
	if got := redA.Redact("b-secret-value"); got != "b-secret-value" {
		t.Errorf("a's redactor knows b's secret: %q", got)
	}
	if got := redA.Redact("a-secret-value"); got != secret.Redacted {
		t.Errorf("a's redactor does not know a's secret: %q", got)
	}

	store.asked = nil
	rb, err := b.Resolve(lookup(nil), store, secret.NewRedactor())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(store.asked, []string{"b_tok"}) || rb.Env != nil {
		t.Errorf("resolving b looked up %v and got env %v, want only [b_tok] and no env", store.asked, rb.Env)
	}
}

// TestSecretPlacement: a secret placeholder is refused in args (argv is
// readable by every user through /proc) and everywhere but env and headers
// values; {{env.SWITCHBOARD_SECRET_…}} is refused as a way around the store.
func TestSecretPlacement(t *testing.T) {
	c := &Config{Servers: []Server{
		{ID: "argv", Command: "srv", Args: []string{"--token", "{{secrets.tok}}"}},
		{ID: "cmd", Command: "{{secrets.tok}}"},
		{ID: "url", URL: "https://{{secrets.tok}}@mcp.example.com/"},
		{ID: "envkey", Command: "srv", Env: map[string]string{"{{secrets.tok}}": "v"}},
		{ID: "viaenv", Command: "srv", Env: map[string]string{"TOKEN": "{{env.SWITCHBOARD_SECRET_TOK}}"}},
		{ID: "viaenvh", URL: "https://mcp.example.com/", Headers: map[string]string{"X-Key": "{{ env.switchboard_secret_tok }}"}},
		{ID: "fine", Command: "srv", Env: map[string]string{"TOKEN": "{{secrets.tok}}", "HOME": "{{env.HOME}}"}},
	}}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted secrets in argv")
	}
	msg := err.Error()
	for _, want := range []string{
		"mcp_servers[0].args[1]: placeholders are only allowed in env and headers values; argv is readable by every user",
		"mcp_servers[1].command: placeholders are only allowed",
		"mcp_servers[2].url: placeholders are only allowed",
		"mcp_servers[3].env.",
		"mcp_servers[4].env.TOKEN: {{env.SWITCHBOARD_SECRET_TOK}} reads a secret's environment variable; write {{secrets.NAME}} instead",
		"mcp_servers[5].headers.X-Key: {{env.switchboard_secret_tok}} reads a secret's environment variable",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("Validate: missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "mcp_servers[6]") {
		t.Errorf("Validate refused the well-placed server:\n%s", msg)
	}

	// Resolve registers such a value anyway, for a Server never validated.
	red := secret.NewRedactor()
	s := Server{ID: "viaenv", Command: "srv", Env: map[string]string{"TOKEN": "{{env.SWITCHBOARD_SECRET_TOK}}"}}
	if _, err := s.Resolve(lookup(map[string]string{"SWITCHBOARD_SECRET_TOK": "tok-value-1"}), nil, red); err != nil {
		t.Fatal(err)
	}
	if red.Redact("tok-value-1") != secret.Redacted {
		t.Error("a secret read through {{env.SWITCHBOARD_SECRET_TOK}} was not registered with the redactor")
	}
}
