package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/netguard"
)

// The provider types.
const (
	TypeOpenAI    = "openai"    // Chat Completions; any OpenAI-compatible base_url
	TypeAnthropic = "anthropic" // the Messages API
)

// Config configures one provider.
type Config struct {
	// Name is the provider's configured name ("openai", "ollama", "work"),
	// used in errors.
	Name string
	// Type is TypeOpenAI or TypeAnthropic.
	Type string
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://127.0.0.1:11434/v1". Empty means the provider's public API.
	BaseURL string
	// APIKey is the resolved key (secrets already expanded). It is sent only
	// to BaseURL and never appears in an error or log.
	APIKey string
	// KeySource names where the key comes from, for authentication errors:
	// "OPENAI_API_KEY", "providers.work.api_key". Optional.
	KeySource string
	// Headers are added to every request.
	Headers map[string]string
	// HTTPClient is the client requests go through; nil means one that
	// follows a redirect only within its origin (a 307 to another would
	// resend the prompt and the key there) and sends no Referer.
	HTTPClient *http.Client
	// MaxRetries is how many times a rate-limited or unavailable call is
	// retried: 0 means DefaultMaxRetries, a negative value none.
	MaxRetries int

	// sleep waits between retries; tests replace it (see export_test.go).
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns the provider cfg describes. The providers' SDKs' own retries
// are off: the policy of Config.MaxRetries is the only one.
func New(cfg Config) (Provider, error) {
	if cfg.Name == "" {
		cfg.Name = cfg.Type
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("llm: provider %s: base_url %q is not an http(s) URL", cfg.Name, cfg.BaseURL)
		}
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.sleep == nil {
		cfg.sleep = sleepCtx
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{CheckRedirect: sameOrigin}
	}
	cfg.Headers = cloneHeaders(cfg.Headers)
	switch cfg.Type {
	case TypeOpenAI:
		return newOpenAI(cfg), nil
	case TypeAnthropic:
		return newAnthropic(cfg), nil
	case "":
		return nil, fmt.Errorf("llm: provider %s: no type (want %q or %q)", cfg.Name, TypeOpenAI, TypeAnthropic)
	default:
		return nil, fmt.Errorf("llm: provider %s: unknown type %q (want %q or %q)", cfg.Name, cfg.Type, TypeOpenAI, TypeAnthropic)
	}
}

// maxRedirects bounds the redirects the default client follows.
const maxRedirects = 5

// sameOrigin is the default client's redirect policy: only within the
// first request's origin, never with a Referer (the previous URL).
func sameOrigin(req *http.Request, via []*http.Request) error {
	req.Header.Del("Referer")
	from, to := netguard.Origin(via[0].URL), netguard.Origin(req.URL)
	switch {
	case from != to:
		return fmt.Errorf("redirect from %s to %s refused: a provider's requests (the prompt, the key) never follow a redirect to another origin", from, to)
	case len(via) > maxRedirects:
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	return nil
}

func cloneHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	c := make(map[string]string, len(h))
	for k, v := range h {
		c[k] = v
	}
	return c
}

// Defaults returns the built-in providers, their keys read with getenv
// (os.Getenv in production): "openai" (OPENAI_API_KEY), "anthropic"
// (ANTHROPIC_API_KEY) and "ollama" (OpenAI-compatible at
// http://127.0.0.1:11434/v1, no key). A [providers.NAME] table of the same
// name replaces the default.
func Defaults(getenv func(string) string) map[string]Config {
	return map[string]Config{
		"openai": {
			Name: "openai", Type: TypeOpenAI, BaseURL: "https://api.openai.com/v1",
			APIKey: getenv("OPENAI_API_KEY"), KeySource: "OPENAI_API_KEY",
		},
		"anthropic": {
			Name: "anthropic", Type: TypeAnthropic, BaseURL: "https://api.anthropic.com",
			APIKey: getenv("ANTHROPIC_API_KEY"), KeySource: "ANTHROPIC_API_KEY",
		},
		"ollama": {
			Name: "ollama", Type: TypeOpenAI, BaseURL: "http://127.0.0.1:11434/v1",
		},
	}
}

// ErrBadModel is returned by ParseModel for a string not of the form
// "provider:model".
var ErrBadModel = errors.New(`model must be "provider:model"`)

// ParseModel splits "provider:model" at the first colon: "ollama:llama3.2:3b"
// is provider "ollama", model "llama3.2:3b".
func ParseModel(s string) (provider, model string, err error) {
	provider, model, ok := strings.Cut(s, ":")
	provider, model = strings.TrimSpace(provider), strings.TrimSpace(model)
	if !ok || provider == "" || model == "" {
		return "", "", fmt.Errorf("%w, e.g. openai:gpt-4.1-mini or ollama:llama3.2; got %q", ErrBadModel, s)
	}
	return provider, model, nil
}
