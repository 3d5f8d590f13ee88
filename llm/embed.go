package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The embeddings APIs an [Embedder] speaks.
const (
	// EmbedOllama is Ollama's POST /api/embed.
	EmbedOllama = "ollama"
	// EmbedOpenAI is OpenAI's POST /embeddings under a base URL ending in
	// /v1, which OpenAI-compatible servers (vLLM, llama.cpp, LM Studio,
	// Ollama's /v1) speak too.
	EmbedOpenAI = "openai"
)

// EmbedConfig describes an embeddings endpoint ([search] in the
// configuration).
type EmbedConfig struct {
	// Kind is EmbedOllama or EmbedOpenAI.
	Kind string
	// BaseURL is the server's: http://127.0.0.1:11434 for Ollama,
	// https://api.openai.com/v1 for OpenAI.
	BaseURL string
	// Model is the embedding model.
	Model string
	// APIKey, resolved, is sent as a bearer token; "" sends none. It is
	// never in an error.
	APIKey string
	// HTTPClient sends the requests: the daemon's guarded client (the
	// netguard dialer, the [network] ranges and proxy), as for the
	// providers. Nil means a client that follows a redirect only within
	// its origin.
	HTTPClient *http.Client
}

// An Embedder computes embeddings through an Ollama or OpenAI-compatible
// endpoint: a toolsearch.Embedder. It is safe for concurrent use.
type Embedder struct {
	cfg EmbedConfig
	url string
}

// maxEmbedResponse bounds an embeddings answer: 2,048 vectors of 4,096
// dimensions as JSON are about 150 MiB; a batch of the gateway's (256
// texts) far less. More is not an answer to keep in memory.
const maxEmbedResponse = 256 << 20

// NewEmbedder returns the Embedder cfg describes; an error names what is
// missing or wrong.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: embeddings: url %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("llm: embeddings: no model")
	}
	base := strings.TrimSuffix(cfg.BaseURL, "/")
	var endpoint string
	switch cfg.Kind {
	case EmbedOllama:
		endpoint = base + "/api/embed"
	case EmbedOpenAI:
		endpoint = base + "/embeddings"
	default:
		return nil, fmt.Errorf("llm: embeddings: unknown kind %q (want %q or %q)", cfg.Kind, EmbedOllama, EmbedOpenAI)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{CheckRedirect: sameOrigin}
	}
	return &Embedder{cfg: cfg, url: endpoint}, nil
}

// Model is the embedding model.
func (e *Embedder) Model() string { return e.cfg.Model }

// Embed returns one vector per text, in order.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, _ := json.Marshal(map[string]any{"model": e.cfg.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("llm: embeddings (%s): %w", e.cfg.Kind, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, classifyTransport(ctx, "embeddings "+e.cfg.Kind, e.cfg.BaseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbedResponse+1))
	if err != nil {
		return nil, fmt.Errorf("llm: embeddings (%s at %s): reading the answer: %w", e.cfg.Kind, e.cfg.BaseURL, err)
	}
	if len(data) > maxEmbedResponse {
		return nil, fmt.Errorf("llm: embeddings (%s at %s): the answer is larger than %d bytes", e.cfg.Kind, e.cfg.BaseURL, maxEmbedResponse)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("llm: embeddings (%s at %s, model %s): HTTP %d: %s", e.cfg.Kind, e.cfg.BaseURL, e.cfg.Model, resp.StatusCode, excerpt(data))
	}
	var vecs [][]float32
	switch e.cfg.Kind {
	case EmbedOllama:
		var out struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		err = json.Unmarshal(data, &out)
		vecs = out.Embeddings
	default:
		var out struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err = json.Unmarshal(data, &out); err == nil {
			vecs = make([][]float32, len(out.Data))
			for _, d := range out.Data {
				if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
					return nil, fmt.Errorf("llm: embeddings (%s at %s): an answer of index %d for %d texts", e.cfg.Kind, e.cfg.BaseURL, d.Index, len(texts))
				}
				vecs[d.Index] = d.Embedding
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("llm: embeddings (%s at %s): the answer is not the API's: %w", e.cfg.Kind, e.cfg.BaseURL, err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("llm: embeddings (%s at %s): %d vectors for %d texts", e.cfg.Kind, e.cfg.BaseURL, len(vecs), len(texts))
	}
	return vecs, nil
}

// excerpt is the start of an error body, on one line.
func excerpt(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
