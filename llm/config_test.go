package llm_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/switchboardmcp/switchboard/llm"
)

func TestParseModel(t *testing.T) {
	for _, tc := range []struct {
		in, provider, model string
		ok                  bool
	}{
		{"openai:gpt-4.1-mini", "openai", "gpt-4.1-mini", true},
		{"anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", true},
		{"ollama:llama3.2", "ollama", "llama3.2", true},
		{"ollama:llama3.2:3b", "ollama", "llama3.2:3b", true},
		{"gpt-4.1-mini", "", "", false},
		{":gpt", "", "", false},
		{"openai:", "", "", false},
		{"", "", "", false},
	} {
		p, m, err := llm.ParseModel(tc.in)
		if (err == nil) != tc.ok || p != tc.provider || m != tc.model {
			t.Errorf("ParseModel(%q) = %q, %q, %v, want %q, %q, ok=%v", tc.in, p, m, err, tc.provider, tc.model, tc.ok)
		}
		if err != nil && !errors.Is(err, llm.ErrBadModel) {
			t.Errorf("ParseModel(%q) error %v does not wrap ErrBadModel", tc.in, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}
	d := llm.Defaults(func(k string) string { return env[k] })
	for name, want := range map[string]llm.Config{
		"openai":    {Name: "openai", Type: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "sk-o", KeySource: "OPENAI_API_KEY"},
		"anthropic": {Name: "anthropic", Type: "anthropic", BaseURL: "https://api.anthropic.com", APIKey: "sk-a", KeySource: "ANTHROPIC_API_KEY"},
		"ollama":    {Name: "ollama", Type: "openai", BaseURL: "http://127.0.0.1:11434/v1"},
	} {
		got := d[name]
		if got.Name != want.Name || got.Type != want.Type || got.BaseURL != want.BaseURL || got.APIKey != want.APIKey || got.KeySource != want.KeySource {
			t.Errorf("Defaults()[%q] = %+v, want %+v", name, got, want)
		}
		if _, err := llm.New(got); err != nil {
			t.Errorf("New(Defaults()[%q]): %v", name, err)
		}
	}
	if len(d) != 3 {
		t.Errorf("Defaults() has %d providers, want 3", len(d))
	}
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []llm.Config{
		{Name: "x"},
		{Name: "x", Type: "gemini"},
		{Name: "x", Type: "openai", BaseURL: "ftp://example.com"},
		{Name: "x", Type: "openai", BaseURL: "localhost:11434"},
	} {
		if _, err := llm.New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error", cfg)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"1"}}, time.Second},
		{http.Header{"Retry-After": {"2.5"}}, 2500 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{nil, 0},
	} {
		if got := llm.RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	inner := errors.New("boom")
	err := error(&llm.Error{Provider: "p", Kind: llm.KindRateLimit, Message: "rate limited (429)", Err: inner})
	if !errors.Is(err, llm.KindRateLimit) || errors.Is(err, llm.KindAuth) || !errors.Is(err, inner) {
		t.Errorf("errors.Is on %v: kinds or Unwrap wrong", err)
	}
	if err.Error() != "p: rate limited (429)" {
		t.Errorf("Error() = %q", err.Error())
	}
}
