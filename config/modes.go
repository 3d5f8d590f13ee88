package config

// Endpoint modes (mode = "all" | "search" | "code") and the tables behind
// them: [search], the optional embeddings provider of search_tools, and
// [code], code mode's budgets.

import (
	"fmt"
	"time"

	"github.com/switchboardmcp/switchboard/codemode"
	"github.com/switchboardmcp/switchboard/internal/decode"
	"github.com/switchboardmcp/switchboard/netguard"
	"github.com/switchboardmcp/switchboard/secret"
)

// The modes of an endpoint: what it lists of the tools it offers.
const (
	// ModeAll lists every tool the endpoint offers (the default).
	ModeAll = "all"
	// ModeSearch lists two tools, search_tools and call_tool, through
	// which a client finds and calls the tools the endpoint offers.
	ModeSearch = "search"
	// ModeCode lists search_tools and run_code, which runs a JavaScript
	// program calling the tools the endpoint offers.
	ModeCode = "code"
)

// Modes are the values mode accepts.
var Modes = []string{ModeAll, ModeSearch, ModeCode}

// checkMode checks an endpoint's or [gateway]'s mode ("" is unset: all).
func checkMode(m string) string {
	switch m {
	case "", ModeAll, ModeSearch, ModeCode:
		return ""
	}
	return fmt.Sprintf("unknown mode %q: use %q, %q or %q", m, ModeAll, ModeSearch, ModeCode)
}

// Search is the [search] table: how search_tools ranks tools. Without it
// the ranking is lexical (BM25 over names, titles, descriptions and
// argument names); with it, each tool's embedding from the provider is
// blended in, embeddings cached by tool definition in the state store.
//
//	[search]
//	kind    = "ollama"                      # or "openai": an OpenAI-compatible /v1/embeddings
//	url     = "http://127.0.0.1:11434"      # default: Ollama's local address, or https://api.openai.com/v1
//	model   = "nomic-embed-text"
//	api_key = "{{secrets.embeddings_key}}"  # openai only; a placeholder, a literal key is refused
//	allow_local_endpoint = true             # needed for a loopback or private url
type Search struct {
	// Kind is the provider's API: "ollama" (POST /api/embed) or "openai"
	// (POST /embeddings under the url, OpenAI-compatible); "" means no
	// embeddings.
	Kind string
	// URL is the provider's base URL; "" means [DefaultOllamaURL] or
	// [DefaultOpenAIEmbeddingsURL].
	URL string
	// Model is the embedding model; required with Kind.
	Model string
	// APIKey is a placeholder for the provider's key, sent as a bearer
	// token; "" sends none.
	APIKey string
	// AllowLocalEndpoint admits a loopback or private URL (a local
	// Ollama), which the network floor refuses otherwise.
	AllowLocalEndpoint bool

	// Source is where the last [search] table was declared.
	Source Position
}

// The embeddings providers' default addresses.
const (
	DefaultOllamaURL           = "http://127.0.0.1:11434"
	DefaultOpenAIEmbeddingsURL = "https://api.openai.com/v1"
)

// Endpoint returns the provider's base URL: URL, else the kind's default.
func (s Search) Endpoint() string {
	switch {
	case s.URL != "":
		return s.URL
	case s.Kind == "ollama":
		return DefaultOllamaURL
	}
	return DefaultOpenAIEmbeddingsURL
}

// ResolveAPIKey expands s.APIKey's placeholder as [Gateway.ResolveAuthToken]
// does auth_token's, registering the key with red (when non-nil); "" when
// there is none. An error names the field, never the value.
func (s Search) ResolveAPIKey(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	if s.APIKey == "" {
		return "", nil
	}
	return expandCredential("search.api_key", s.APIKey, getenv, secrets, red)
}

// searchTable declares [search].
var searchTable = mergedTable[Search]{
	key: "search",
	fields: decode.Table[Search]{
		decode.String("kind", decode.TOML, func(s *Search) *string { return &s.Kind }, func(k string) string {
			switch k {
			case "", "ollama", "openai":
				return ""
			}
			return fmt.Sprintf(`unknown kind %q: use "ollama" or "openai"`, k)
		}),
		decode.String("url", decode.TOML, func(s *Search) *string { return &s.URL }, checkBaseURL),
		decode.String("model", decode.TOML, func(s *Search) *string { return &s.Model }, noPlaceholderHere),
		decode.String("api_key", decode.TOML, func(s *Search) *string { return &s.APIKey }, checkAPIKey),
		decode.Bool("allow_local_endpoint", decode.TOML, func(s *Search) *bool { return &s.AllowLocalEndpoint }),
	},
	config:        func(c *Config) *Search { return &c.Search },
	source:        func(s *Search) *Position { return &s.Source },
	checkOnDecode: true,
}

// check reports what needs the merged [search]: a model with a kind, a
// kind with the other keys, and the URL under the network floor.
func (s Search) check() (field, msg string) {
	switch {
	case s.Kind == "" && (s.URL != "" || s.Model != "" || s.APIKey != ""):
		return "search.kind", `missing: say which provider computes the embeddings, "ollama" or "openai"`
	case s.Kind == "":
		return "", ""
	case s.Model == "":
		return "search.model", fmt.Sprintf("missing: name the %s embedding model", s.Kind)
	}
	if err := netguard.CheckURL(s.Endpoint(), s.AllowLocalEndpoint); err != nil {
		return "search.url", err.Error() + " (allow_local_endpoint = true admits a local provider)"
	}
	return "", ""
}

// Code is the [code] table: the budgets of a run_code program (code
// mode). Each bounds one program; the zero value of a key means its
// default.
//
//	[code]
//	cpu_time  = "2s"      # CPU time the program may use
//	wall_time = "60s"     # from start to answer, tool calls included
//	memory    = 67108864  # bytes the program may allocate (64 MiB)
//	output    = 65536     # bytes of console output and result kept (64 KiB)
type Code struct {
	CPUTime  time.Duration
	WallTime time.Duration
	Memory   int
	Output   int

	// Source is where the last [code] table was declared.
	Source Position
}

// Code mode's default budgets and their ceilings are the sandbox's
// (package codemode): one set, whether a program runs for a gateway's
// client ([code]) or for an agent (code_budget).
const (
	DefaultCodeCPUTime  = codemode.DefaultCPUTime
	DefaultCodeWallTime = codemode.DefaultWallTime
	DefaultCodeMemory   = codemode.DefaultMemoryBytes
	DefaultCodeOutput   = codemode.DefaultOutputBytes
	MaxCodeCPUTime      = codemode.MaxCPUTime
	MaxCodeWallTime     = codemode.MaxWallTime
	MinCodeMemory       = 1 << 20
	MaxCodeMemory       = codemode.MaxMemoryBytes
	MinCodeOutput       = 1 << 10
	MaxCodeOutput       = codemode.MaxOutputBytes
)

// WithDefaults is c with each unset budget at its default.
func (c Code) WithDefaults() Code {
	if c.CPUTime == 0 {
		c.CPUTime = DefaultCodeCPUTime
	}
	if c.WallTime == 0 {
		c.WallTime = DefaultCodeWallTime
	}
	if c.Memory == 0 {
		c.Memory = DefaultCodeMemory
	}
	if c.Output == 0 {
		c.Output = DefaultCodeOutput
	}
	return c
}

// codeTable declares [code].
var codeTable = mergedTable[Code]{
	key: "code",
	fields: decode.Table[Code]{
		decode.Duration("cpu_time", decode.TOML, func(c *Code) *time.Duration { return &c.CPUTime }, MaxCodeCPUTime),
		decode.Duration("wall_time", decode.TOML, func(c *Code) *time.Duration { return &c.WallTime }, MaxCodeWallTime),
		decode.Bytes("memory", decode.TOML, func(c *Code) *int { return &c.Memory }, MinCodeMemory, MaxCodeMemory),
		decode.Bytes("output", decode.TOML, func(c *Code) *int { return &c.Output }, MinCodeOutput, MaxCodeOutput),
	},
	config:        func(c *Config) *Code { return &c.Code },
	source:        func(c *Code) *Position { return &c.Source },
	checkOnDecode: true,
}

// modes checks what needs the merged configuration: [search]'s keys
// together, and a cpu_time within wall_time.
func (v *validator) modes(c *Config) {
	if field, msg := c.Search.check(); msg != "" {
		pos, ok := v.merged[field]
		if !ok {
			pos = c.Search.Source
		}
		v.problems = append(v.problems, &Problem{Pos: pos, Field: field, Msg: msg})
	}
	if cd := c.Code.WithDefaults(); cd.CPUTime > cd.WallTime {
		pos, ok := v.merged["code.cpu_time"]
		if !ok {
			pos = c.Code.Source
		}
		v.problems = append(v.problems, &Problem{Pos: pos, Field: "code.cpu_time",
			Msg: fmt.Sprintf("%s is more than wall_time (%s): the wall time would end the program first", decode.FormatDuration(cd.CPUTime), decode.FormatDuration(cd.WallTime))})
	}
}
