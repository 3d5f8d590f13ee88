package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadGuardrails(t *testing.T, toml string) (*Config, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "switchboard.toml")
	if err := os.WriteFile(f, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return LoadFile(f)
}

func TestGuardrails(t *testing.T) {
	c, err := loadGuardrails(t, `
[[guardrails]]
filter = "credentials"
action = "mask"

[[guardrails]]
name = "no-cards-to-crm"
filter = "pii"
kinds = ["card", "iban"]
action = "reject"
direction = "arguments"
servers = ["crm*"]
endpoints = ["support"]

[[guardrails]]
filter = "size"
max_bytes = 65536
action = "mask"
direction = "results"

[[guardrails]]
filter = "hook"
url = "https://guard.example.com/check"
timeout = "500ms"
fail = "closed"
token = "{{secrets.guard_token}}"
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range c.Guardrails {
		got = append(got, g.Filter+"/"+g.Action+"/"+g.Direction)
	}
	if want := []string{"credentials/mask/", "pii/reject/arguments", "size/mask/results", "hook//"}; !cmp.Equal(got, want) {
		t.Errorf("guardrails = %q, want %q", got, want)
	}
	if g := c.Guardrails[2]; g.MaxBytes != 64<<10 {
		t.Errorf("max_bytes = %d", g.MaxBytes)
	}
	chain, err := c.Guardrails.Chain(func(string) (string, bool) { return "", false }, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "guardrails[3].token") {
		t.Errorf("Chain with an unresolvable token: %v, %v", chain, err)
	}
	c.Guardrails = c.Guardrails[:3]
	if chain, err = c.Guardrails.Chain(nil, nil, nil, nil); err != nil || chain.Len() != 3 {
		t.Errorf("Chain = %v, %v", chain, err)
	}
}

func TestGuardrailProblems(t *testing.T) {
	_, err := loadGuardrails(t, `
[[guardrails]]
filter = "pii"
action = "drop"

[[guardrails]]
filter = "size"
action = "mask"

[[guardrails]]
filter = "deny"
action = "flag"
patterns = ["(unclosed"]

[[guardrails]]
filter = "hook"
url = "https://guard.example.com/check"
action = "reject"
token = "literal-token-123456"

[[guardrails]]
action = "mask"

[[guardrails]]
filter = "credentials"
action = "mask"
max_bytes = 100
kinds = ["ssn"]
direction = "sideways"
`)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`guardrails[0].action: unknown action "drop"`,
		`guardrails[1].max_bytes: missing`,
		`guardrails[2].patterns[0]: invalid regular expression`,
		`guardrails[3].action: a hook decides its own action`,
		`guardrails[3].token: a literal token is not allowed`,
		`guardrails[4].filter: missing filter`,
		`guardrails[5].kinds[0]: unknown kind "ssn"`,
		`guardrails[5].direction: unknown direction "sideways"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "literal-token-123456") {
		t.Errorf("the error quotes the token")
	}
}
