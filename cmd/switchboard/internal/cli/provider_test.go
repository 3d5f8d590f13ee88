package cli

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/llm/llmtest"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// TestProviderGuardedDialer: an LLM provider's connections go through the
// guarded dialer. A provider table at a loopback base_url is refused by the
// dialer itself (Load refuses it earlier; a config built in code or a name
// that resolves to loopback gets this far) unless it sets
// allow_local_endpoint, and [network] deny_cidrs applies to providers too.
func TestProviderGuardedDialer(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "env")
	fake := llmtest.NewOpenAI(t)
	var stderr bytes.Buffer
	e := &env{ctx: t.Context(), stderr: &stderr, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }, red: secret.NewRedactor()}
	complete := func(cfg *config.Config, spec string) error {
		t.Helper()
		p, _, err := e.provider(cfg, spec)
		if err != nil {
			t.Fatalf("provider(%q): %v", spec, err)
		}
		// A refusal is not retried; a connection refused is, so bound it.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err = p.Complete(ctx, &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
		return err
	}
	local := config.Provider{Name: "local", Type: config.ProviderOpenAI, BaseURL: fake.URL, APIKey: fake.APIKey}
	cfg := &config.Config{Providers: map[string]config.Provider{"local": local}}

	err := complete(cfg, "local:m")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") || !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("a loopback base_url without allow_local_endpoint: %v; want the dialer's refusal", err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the refused provider received %d requests", n)
	}

	local.AllowLocalEndpoint = true
	cfg.Providers["local"] = local
	fake.Script(llmtest.Turn{Text: "hello"})
	if err := complete(cfg, "local:m"); err != nil {
		t.Errorf("a loopback base_url with allow_local_endpoint: %v", err)
	}

	cfg.Network.DenyCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	err = complete(cfg, "local:m")
	if err == nil || !strings.Contains(err.Error(), "in the denied range 127.0.0.0/8") {
		t.Errorf("a base_url in [network] deny_cidrs: %v; want the dialer's refusal", err)
	}

	// The built-in ollama is admitted at exactly 127.0.0.1:11434: whatever
	// answers there (most likely nothing), the dialer does not refuse it.
	err = complete(&config.Config{}, "ollama:m")
	if err != nil && strings.Contains(err.Error(), "loopback address") {
		t.Errorf("the built-in ollama: %v; want it admitted", err)
	}
}

// TestProviderLoopbackConfig: Load refuses a provider table at a loopback
// base_url without allow_local_endpoint, saying how to allow it.
func TestProviderLoopbackConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	t.Chdir(dir)
	file := filepath.Join(dir, "sb.toml")
	if err := os.WriteFile(file, []byte("[providers.local]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:8000/v1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--config", file, "validate"}, strings.NewReader(""), &out, &errb)
	want := "sb.toml:3: providers.local.base_url: 127.0.0.1 is a loopback address (RFC 1122); set allow_local_endpoint = true"
	if code == 0 || !strings.Contains(errb.String()+out.String(), want) {
		t.Errorf("validate = %d, stdout %q, stderr %q; want a problem saying %q", code, out.String(), errb.String(), want)
	}
}

// TestHostOptionsNetwork: [network] reaches the host with the proxy's
// login resolved, and an unresolved one is a usage error naming it.
func TestHostOptionsNetwork(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	t.Setenv("HOME", dir)
	t.Setenv("SWITCHBOARD_SECRETS_BACKEND", "env")
	vars := map[string]string{"SWITCHBOARD_SECRET_PROXY_PW": "pr0xy-pw"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	e := &env{ctx: t.Context(), stderr: &bytes.Buffer{}, getenv: func(k string) string { return vars[k] }, lookupEnv: lookup, red: secret.NewRedactor()}
	cfg := &config.Config{Network: config.Network{
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")},
		Proxy:      "http://me:{{secrets.proxy_pw}}@proxy.corp:3128",
	}}
	opts, err := e.hostOptions(cfg)
	if err != nil {
		t.Fatalf("hostOptions: %v", err)
	}
	n := opts.Network
	if pw, _ := n.Proxy.User.Password(); len(n.AllowCIDRs) != 1 || n.Proxy.Host != "proxy.corp:3128" || pw != "pr0xy-pw" {
		t.Errorf("hostOptions Network = %+v (proxy %s)", n, n.Proxy.Redacted())
	}
	if got := e.red.Redact("x pr0xy-pw y"); strings.Contains(got, "pr0xy-pw") {
		t.Errorf("the proxy password is not redacted: %q", got)
	}
	delete(vars, "SWITCHBOARD_SECRET_PROXY_PW")
	if _, err := e.hostOptions(cfg); err == nil || !strings.Contains(err.Error(), "network.proxy: {{secrets.proxy_pw}}") {
		t.Errorf("hostOptions without the secret: %v", err)
	}
}
