package cli

import (
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/llm"
	"github.com/switchboardmcp/switchboard/toolsearch"
)

// embedder is search mode's embeddings provider from [search], reached
// as an LLM provider is (the guarded dialer, the [network] ranges and
// proxy; its own local address admitted with allow_local_endpoint); nil
// without [search] kind.
func (e *env) embedder(cfg *config.Config, hostOpts *host.Options) (toolsearch.Embedder, error) {
	s := cfg.Search
	if s.Kind == "" {
		return nil, nil
	}
	key, err := s.ResolveAPIKey(e.lookupEnv, hostOpts.Secrets, e.red)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	hc, err := e.providerClient(cfg, s.Endpoint(), s.AllowLocalEndpoint)
	if err != nil {
		return nil, err
	}
	em, err := llm.NewEmbedder(llm.EmbedConfig{Kind: s.Kind, BaseURL: s.Endpoint(), Model: s.Model, APIKey: key, HTTPClient: hc})
	if err != nil {
		return nil, usageErr("%s: [search]: %v", s.Source, err)
	}
	return em, nil
}
