package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

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

var tomlProviderKeys = []string{"type", "base_url", "api_key", "headers", "allow_local_endpoint"}

// tomlProviders decodes the [providers] table: one table per provider name.
// Every problem is reported with its line, as for servers.
func (r *fileResult) tomlProviders(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		r.errorf(path, "must be a table of [providers.NAME] tables, not %s", r.typeName(v))
		return
	}
	for _, name := range r.sortedKeys(path, m) {
		pp := keyPath(path, name)
		t, ok := m[name].(map[string]any)
		if !ok {
			r.errorf(pp, "must be a table, not %s", r.typeName(m[name]))
			continue
		}
		if !validID(name) {
			r.errorf(pp, "invalid provider name %q: use 1 to %d characters of A-Z a-z 0-9 _ -", name, maxIDLen)
			continue
		}
		p := Provider{Name: name, Source: Position{File: r.file, Line: r.lineOf(pp), Field: pp}}
		emptyBaseURL := false
		for _, k := range r.sortedKeys(pp, t) {
			v, f := t[k], keyPath(pp, k)
			switch k {
			case "type":
				p.Type, _ = r.str(f, v)
			case "base_url":
				var ok bool
				if p.BaseURL, ok = r.str(f, v); ok && strings.TrimSpace(p.BaseURL) == "" {
					emptyBaseURL = true
				}
			case "api_key":
				p.APIKey, _ = r.str(f, v)
			case "headers":
				p.Headers, _ = r.strMap(f, v)
			case "allow_local_endpoint":
				p.AllowLocalEndpoint, _ = r.boolean(f, v)
			default:
				r.errorf(f, "%s", unknownKey(k, tomlProviderKeys))
			}
		}
		if emptyBaseURL {
			// Read as unset, it would send the key to the type's public
			// endpoint, though the author meant another server.
			msg := "empty; write the URL of the API, such as http://127.0.0.1:11434/v1"
			if pub := publicEndpoint(p.Type); pub != "" {
				msg += fmt.Sprintf(", or leave base_url out to use %s (the public API of type %q)", pub, p.Type)
			}
			r.errorf(keyPath(pp, "base_url"), "%s", msg)
		}
		r.checkProvider(pp, &p)
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

// checkProvider validates one provider at field path pp.
func (r *fileResult) checkProvider(pp string, p *Provider) {
	bad := func(k string) bool { return r.bad[keyPath(pp, k)] }
	switch {
	case bad("type"):
	case p.Type == "":
		r.errorf(keyPath(pp, "type"), "missing; want %q or %q", ProviderOpenAI, ProviderAnthropic)
	case p.Type != ProviderOpenAI && p.Type != ProviderAnthropic:
		r.errorf(keyPath(pp, "type"), "unknown provider type %q (want %q or %q)", p.Type, ProviderOpenAI, ProviderAnthropic)
	}
	if p.APIKey != "" && !bad("api_key") {
		ps, err := secret.Parse(p.APIKey)
		switch {
		case err != nil:
			r.errorf(keyPath(pp, "api_key"), "%v", err)
		case len(ps) == 0:
			// Never quote the value: it is a key.
			r.errorf(keyPath(pp, "api_key"), `a literal key is not allowed in a config file; write "{{env.NAME}}" or "{{secrets.NAME}}" and set the variable`)
		}
	}
	if p.BaseURL != "" && !bad("base_url") {
		switch {
		case hasPlaceholder(p.BaseURL):
			r.errorf(keyPath(pp, "base_url"), "placeholders are only allowed in api_key and headers values")
		default:
			// The URL floor, which needs the merged [network], is
			// checked by the validator.
			if s := urlScheme(p.BaseURL); s != "http" && s != "https" {
				r.errorf(keyPath(pp, "base_url"), "must be an http:// or https:// URL")
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
		f := keyPath(keyPath(pp, "headers"), k)
		val := p.Headers[k]
		switch {
		case !validHeaderName(k):
			r.errorf(f, "invalid header name: must be an HTTP token")
		case strings.ContainsAny(val, "\r\n\x00"):
			r.errorf(f, "value must not contain CR, LF or NUL")
		}
		if _, err := secret.Parse(val); err != nil {
			r.errorf(f, "%v", err)
		}
	}
}

// Resolve returns a copy of p with the placeholders of api_key and headers
// expanded, each resolved value registered with red (when non-nil), so that
// a key never reaches output. An unresolved placeholder is an error naming
// the provider and field, never a value.
func (p Provider) Resolve(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (Provider, error) {
	out := p
	var errs []error
	expand := func(field, in string) string {
		v, err := secret.Expand(in, getenv, secrets, red)
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %q: %s: %w", p.Name, field, err))
			return ""
		}
		if v != in && red != nil {
			// {{env.X}} values are not secrets in general, but in api_key
			// and headers they are.
			red.Add(v)
		}
		return v
	}
	out.APIKey = expand("api_key", p.APIKey)
	if p.Headers != nil {
		out.Headers = make(map[string]string, len(p.Headers))
		for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
			out.Headers[k] = expand(keyPath("headers", k), p.Headers[k])
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
		pp = keyPath("providers", p.Name)
	}
	f := keyPath(pp, "base_url")
	line := p.Source.Line
	if r := v.files[p.Source.File]; r != nil {
		if r.bad[f] {
			return
		}
		line = max(r.lineOf(f), line)
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
