package config

import (
	"strings"
	"testing"

	"github.com/switchboardmcp/switchboard/secret"
)

// TestEndpointResolveAuthToken: an endpoint's auth_token resolves like
// [gateway] auth_token (registered with the redactor); an unset
// placeholder is an error naming the endpoint's field, never a value; an
// endpoint without one resolves to ""; RegisterSecrets registers every
// endpoint's token.
func TestEndpointResolveAuthToken(t *testing.T) {
	store := secret.EnvStore{LookupEnv: func(k string) (string, bool) { return "code-tok-4d2a", k == "SWITCHBOARD_SECRET_CODE" }}
	noEnv := func(string) (string, bool) { return "", false }
	e := Endpoint{Name: "code", AuthToken: "{{secrets.code}}"}

	red := secret.NewRedactor()
	if tok, err := e.ResolveAuthToken(noEnv, store, red); err != nil || tok != "code-tok-4d2a" {
		t.Fatalf("ResolveAuthToken = %q, %v, want code-tok-4d2a", tok, err)
	}
	if got := red.Redact("Bearer code-tok-4d2a"); strings.Contains(got, "code-tok-4d2a") {
		t.Errorf("the token is not redacted: %q", got)
	}
	if _, err := e.ResolveAuthToken(noEnv, nil, nil); err == nil || !strings.Contains(err.Error(), "endpoints[code].auth_token: {{secrets.code}} is not set") {
		t.Errorf("ResolveAuthToken without the secret: %v, want an error naming the field and the placeholder", err)
	}
	if tok, err := (Endpoint{Name: "open"}).ResolveAuthToken(nil, nil, nil); tok != "" || err != nil {
		t.Errorf("ResolveAuthToken with none = %q, %v", tok, err)
	}

	red = secret.NewRedactor()
	c := &Config{Endpoints: []Endpoint{{Name: "open"}, e}}
	if err := c.RegisterSecrets(noEnv, store, red); err != nil {
		t.Fatalf("RegisterSecrets: %v", err)
	}
	if got := red.Redact("code-tok-4d2a"); strings.Contains(got, "code-tok-4d2a") {
		t.Errorf("RegisterSecrets did not register the endpoint's token: %q", got)
	}
}
