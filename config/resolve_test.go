package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboardmcp/switchboard/secret"
)

// lookup returns a LookupEnv over vars only.
func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestResolve(t *testing.T) {
	env := lookup(map[string]string{
		"HOME":                      "/home/me",
		"SWITCHBOARD_SECRET_GITHUB": "ghp_s3cr3t",
		"SWITCHBOARD_SECRET_TOK":    "tok-v4lue",
		"API_TOKEN":                 "env-t0ken",
	})
	s := Server{
		ID:      "gh",
		Command: "docker",
		Args:    []string{"run"},
		Env: map[string]string{
			"GITHUB_TOKEN": "{{secrets.github}}",
			"DATA":         "{{env.HOME}}/data",
			"API":          "{{env.API_TOKEN}}",
			"PLAIN":        "v",
		},
		Headers: map[string]string{"Authorization": "Bearer {{secrets.tok}}"},
	}
	orig := s
	orig.Env = map[string]string{}
	for k, v := range s.Env {
		orig.Env[k] = v
	}
	red := secret.NewRedactor()
	got, err := s.Resolve(env, secret.EnvStore{LookupEnv: env}, red)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	want := s
	want.Env = map[string]string{"GITHUB_TOKEN": "ghp_s3cr3t", "DATA": "/home/me/data", "API": "env-t0ken", "PLAIN": "v"}
	want.Headers = map[string]string{"Authorization": "Bearer tok-v4lue"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Resolve mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig.Env, s.Env); diff != "" {
		t.Errorf("Resolve changed the receiver's env (-before +after):\n%s", diff)
	}
	got.Args[0] = "changed"
	if s.Args[0] != "run" {
		t.Errorf("Resolve's result shares Args with the receiver")
	}
	// Secrets and environment values are registered for redaction, but
	// for the public variables every server gets anyway (HOME).
	in := "ghp_s3cr3t tok-v4lue env-t0ken /home/me"
	if got, want := red.Redact(in), "[REDACTED] [REDACTED] [REDACTED] /home/me"; got != want {
		t.Errorf("Redact(%q) = %q, want %q", in, got, want)
	}
}

func TestResolveUnresolved(t *testing.T) {
	env := lookup(map[string]string{"SWITCHBOARD_SECRET_PRESENT": "pr3sent-value"})
	s := Server{
		ID:      "gh",
		Command: "x",
		Env: map[string]string{
			"GITHUB_TOKEN": "{{secrets.github}}",
			"BOTH":         "{{secrets.present}}:{{env.MISSING}}:{{secrets.other-one}}",
		},
		Headers: map[string]string{"X-Key": "{{secrets.key}}"},
	}
	got, err := s.Resolve(env, secret.EnvStore{LookupEnv: env}, nil)
	if err == nil {
		t.Fatalf("Resolve = %v, nil; want an error", got)
	}
	want := []string{
		`server "gh": env.BOTH: {{env.MISSING}} is not set`,
		`server "gh": env.BOTH: {{secrets.other-one}} is not set (set SWITCHBOARD_SECRET_OTHER_ONE)`,
		`server "gh": env.GITHUB_TOKEN: {{secrets.github}} is not set (set SWITCHBOARD_SECRET_GITHUB)`,
		`server "gh": headers.X-Key: {{secrets.key}} is not set (set SWITCHBOARD_SECRET_KEY)`,
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("Resolve error mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "pr3sent-value") {
		t.Errorf("Resolve error %q contains a secret value", err)
	}
	if diff := cmp.Diff(Server{}, got); diff != "" {
		t.Errorf("Resolve returned a server with an error (-want +got):\n%s", diff)
	}
}

func TestResolveNoPlaceholders(t *testing.T) {
	s := Server{ID: "a", Command: "x"}
	got, err := s.Resolve(lookup(nil), nil, nil)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("Resolve mismatch (-want +got):\n%s", diff)
	}
}
