package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// Provider is one [providers.NAME] table: an LLM provider an agent's model
// ("NAME:model") names.
//
//	[providers.work]
//	type     = "openai"                      # openai (Chat Completions, and every OpenAI-compatible server) | anthropic
//	base_url = "https://llm.internal.example/v1"
//	api_key  = "{{secrets.work_llm_key}}"    # a placeholder; a literal key is refused
//	headers  = { X-Team = "agents" }
//
// Without base_url the type's public API is used (https://api.openai.com/v1,
// https://api.anthropic.com); an empty base_url is an error, not that.
//
// api_key must be a placeholder ({{env.NAME}} or {{secrets.NAME}}), never the
// key itself: config files are shared and committed, and a key written there
// leaks. Servers that need no key (Ollama, a local vLLM) leave it out.
type Provider struct {
	Name    string
	Type    string // "openai" or "anthropic"
	BaseURL string
	APIKey  string            // a placeholder until Resolve
	Headers map[string]string // values may hold placeholders
	// AllowLocalEndpoint admits a loopback or private base_url (a local
	// Ollama or vLLM).
	AllowLocalEndpoint bool

	Source Position
}

// The provider types.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// providerFields declares a [providers.NAME] table.
var providerFields = decode.Table[Provider]{
	decode.String("type", decode.TOML, func(p *Provider) *string { return &p.Type }, func(t string) string {
		if t != "" && t != ProviderOpenAI && t != ProviderAnthropic {
			return fmt.Sprintf("unknown provider type %q (want %q or %q)", t, ProviderOpenAI, ProviderAnthropic)
		}
		return ""
	}),
	decode.String("base_url", decode.TOML, func(p *Provider) *string { return &p.BaseURL }, checkBaseURL),
	decode.String("api_key", decode.TOML, func(p *Provider) *string { return &p.APIKey }, checkAPIKey),
	decode.StringMap("headers", decode.TOML, func(p *Provider) *map[string]string { return &p.Headers }, func(k, v string) []string {
		var msgs []string
		switch {
		case !validHeaderName(k):
			msgs = append(msgs, "invalid header name: must be an HTTP token")
		case strings.ContainsAny(v, "\r\n\x00"):
			msgs = append(msgs, "value must not contain CR, LF or NUL")
		}
		if _, err := secret.Parse(v); err != nil {
			msgs = append(msgs, err.Error())
		}
		return msgs
	}),
	decode.Bool("allow_local_endpoint", decode.TOML, func(p *Provider) *bool { return &p.AllowLocalEndpoint }),
}

// checkBaseURL checks what it can of a base_url alone; an empty one is
// reported with the provider's type, and the URL floor, which needs the
// merged [network], by the validator.
func checkBaseURL(u string) string {
	switch {
	case strings.TrimSpace(u) == "":
		return ""
	case hasPlaceholder(u):
		return "placeholders are only allowed in api_key and headers values"
	case urlScheme(u) != "http" && urlScheme(u) != "https":
		return "must be an http:// or https:// URL"
	}
	return ""
}

func checkAPIKey(key string) string {
	return checkCredential(key, false, `a literal key is not allowed in a config file; write "{{env.NAME}}" or "{{secrets.NAME}}" and set the variable`)
}

// tomlProviders decodes the [providers] table: one table per provider name.
// Every problem is reported with its line, as for servers.
func (r *fileResult) tomlProviders(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		r.Errorf(path, "must be a table of [providers.NAME] tables, not %s", r.TypeName(v))
		return
	}
	for _, name := range r.SortedKeys(path, m) {
		pp := decode.KeyPath(path, name)
		t, ok := m[name].(map[string]any)
		if !ok {
			r.Errorf(pp, "must be a table, not %s", r.TypeName(m[name]))
			continue
		}
		if !validID(name) {
			r.Errorf(pp, "invalid provider name %q: use 1 to %d characters of A-Z a-z 0-9 _ -", name, maxIDLen)
			continue
		}
		p := Provider{Name: name, Source: Position{File: r.File, Line: r.LineOf(pp), Field: pp}}
		providerFields.Decode(r.Decoder, pp, t, &p)
		providerFields.Check(&p, func(field, msg string) { r.Errorf(decode.JoinPath(pp, field), "%s", msg) })
		typ := decode.KeyPath(pp, "type")
		if p.Type == "" && !r.Bad(typ) {
			r.Errorf(typ, "missing; want %q or %q", ProviderOpenAI, ProviderAnthropic)
		}
		if _, set := t["base_url"]; set && strings.TrimSpace(p.BaseURL) == "" && !r.Bad(decode.KeyPath(pp, "base_url")) {
			// Read as unset, it would send the key to the type's public
			// endpoint, though the author meant another server.
			msg := "empty; write the URL of the API, such as http://127.0.0.1:11434/v1"
			if pub := publicEndpoint(p.Type); pub != "" {
				msg += fmt.Sprintf(", or leave base_url out to use %s (the public API of type %q)", pub, p.Type)
			}
			r.Errorf(decode.KeyPath(pp, "base_url"), "%s", msg)
		}
		if r.providers == nil {
			r.providers = map[string]Provider{}
		}
		r.providers[name] = p
	}
}

// publicEndpoint is where a provider of type typ without base_url goes.
func publicEndpoint(typ string) string {
	switch typ {
	case ProviderOpenAI:
		return "https://api.openai.com/v1"
	case ProviderAnthropic:
		return "https://api.anthropic.com"
	}
	return ""
}

// Resolve returns a copy of p with the placeholders of api_key and headers
// expanded, each resolved value registered with red (when non-nil), so that
// a key never reaches output. An unresolved placeholder is an error naming
// the provider and field, never a value.
func (p Provider) Resolve(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (Provider, error) {
	out := p
	var errs []error
	expand := func(field, in string) string {
		v, err := expandCredential(fmt.Sprintf("provider %q: %s", p.Name, field), in, getenv, secrets, red)
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	out.APIKey = expand("api_key", p.APIKey)
	if p.Headers != nil {
		out.Headers = make(map[string]string, len(p.Headers))
		for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
			out.Headers[k] = expand(decode.KeyPath("headers", k), p.Headers[k])
		}
	}
	if len(errs) > 0 {
		return Provider{}, errors.Join(errs...)
	}
	return out, nil
}

// provider checks p.BaseURL against the URL floor with the merged
// [network] ranges (see [netguard.Network.CheckURL]).
func (v *validator) provider(c *Config, p *Provider) {
	pp := p.Source.Field
	if pp == "" {
		pp = decode.KeyPath("providers", p.Name)
	}
	f := decode.KeyPath(pp, "base_url")
	line := p.Source.Line
	if r := v.files[p.Source.File]; r != nil {
		if r.Bad(f) {
			return
		}
		line = max(r.LineOf(f), line)
	}
	if p.BaseURL == "" || hasPlaceholder(p.BaseURL) {
		return
	}
	if s := urlScheme(p.BaseURL); s != "http" && s != "https" {
		return // reported when decoding
	}
	if err := c.Network.guard().CheckURL(p.BaseURL, p.AllowLocalEndpoint); err != nil {
		msg := err.Error()
		var ne *netguard.Error
		if errors.As(err, &ne) {
			msg = ne.Reason
		}
		v.problems = append(v.problems, &Problem{Pos: Position{File: p.Source.File, Line: line}, Field: f, Msg: msg})
	}
}
