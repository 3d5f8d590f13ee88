// Command client is the MCP client that the official conformance suite
// (@modelcontextprotocol/conformance) runs: it is invoked as
//
//	client SERVER_URL
//
// with the scenario's name in MCP_CONFORMANCE_SCENARIO and, for some
// scenarios, a JSON object in MCP_CONFORMANCE_CONTEXT. It is a thin wrapper
// over Switchboard's host package: every scenario goes through host.Start and
// the host's API, so the suite measures Switchboard, not the SDK alone.
//
// Handled: the non-auth client scenarios of conformance 0.1.16 (initialize,
// tools_call, elicitation-sep1034-client-defaults, sse-retry) and those of
// 0.2.0-alpha.12 that the host API can drive (request-metadata,
// sep-2322-client-request-state, http-standard-headers, http-custom-headers,
// http-invalid-tool-headers, json-schema-ref-no-deref,
// json-schema-2020-12-preservation), and the OAuth scenarios (auth.go).
// docs/conformance.md has the results.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
)

// serverID is the id of the one server the client connects to.
const serverID = "conformance"

// scenario runs one conformance scenario against a started host.
type scenario struct {
	opts func(*host.Options)
	// server, when set, completes the server's configuration and the
	// host's options from the context (OAuth); cleanup runs after the
	// host is closed.
	server func(srv *config.Server, o *host.Options, cc conformanceContext) (cleanup func(), err error)
	// run drives the scenario; cc is MCP_CONFORMANCE_CONTEXT (nil if unset).
	run func(ctx context.Context, h *host.Host, cc conformanceContext) error
}

// conformanceContext is the part of MCP_CONFORMANCE_CONTEXT the scenarios use.
type conformanceContext struct {
	// ToolCalls are the calls http-custom-headers asks the client to make.
	ToolCalls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
	// ClientID and ClientSecret are a pre-registered OAuth client
	// (auth/pre-registration, auth/client-credentials-basic);
	// PrivateKeyPEM its key for private_key_jwt
	// (auth/client-credentials-jwt).
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	PrivateKeyPEM string `json:"private_key_pem"`
}

// connectOnly is for scenarios whose checks are all made on the way
// host.Start goes: initialize (or server/discover) and tools/list.
func connectOnly(context.Context, *host.Host, conformanceContext) error { return nil }

// acceptWith answers every elicitation request with accept and content.
func acceptWith(content map[string]any) func(*host.Options) {
	return func(o *host.Options) {
		o.Elicitation = func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		}
	}
}

var scenarios = map[string]scenario{
	// host.Start initialized the session and listed the tools.
	"initialize": {run: connectOnly},
	"tools_call": {run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
		return call(ctx, h, "add_numbers", map[string]any{"a": 5, "b": 3})
	}},
	"elicitation-sep1034-client-defaults": {
		// Accept with no content: the schema's defaults must be applied.
		opts: acceptWith(map[string]any{}),
		run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
			return call(ctx, h, "test_client_elicitation_defaults", map[string]any{})
		},
	},
	"sse-retry": {run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
		return call(ctx, h, "test_reconnection", map[string]any{})
	}},

	// SEP-2575: version header, per-request _meta, retry with a supported
	// version; all checked on the connect.
	"request-metadata": {run: connectOnly},
	// SEP-2106: tools/list must not fetch a schema's network $ref. The host
	// lists tools at start and compiles their schemas with a loader that
	// refuses remote references.
	"json-schema-ref-no-deref": {run: connectOnly},
	// SEP-1613/2106: the focal tool's inputSchema, echoed back as the host
	// holds it, must still have its 2020-12 keywords.
	"json-schema-2020-12-preservation": {run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
		const focal = "json_schema_2020_12_tool"
		t, ok := h.Tool(focal)
		if !ok {
			return fmt.Errorf("tool %q not offered (%v)", focal, skipped(h))
		}
		return call(ctx, h, "json_schema_echo", map[string]any{"schema": t.Tool.InputSchema})
	}},
	// SEP-2322 multi round-trip requests: the SDK answers embedded
	// elicitation requests through the host's handler and echoes
	// requestState. Some of the tools are meant to be refused, so only the
	// suite's checks decide.
	"sep-2322-client-request-state": {
		opts: acceptWith(map[string]any{"confirmed": true}),
		run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
			for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
				logErr(call(ctx, h, name, map[string]any{}))
			}
			return nil
		},
	},
	// SEP-2243: Mcp-Method and Mcp-Name headers on every verb.
	"http-standard-headers": {run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
		if tools := h.Tools(); len(tools) > 0 {
			logErr(call(ctx, h, tools[0].Name, map[string]any{}))
		}
		if rs, err := h.Resources(ctx); err != nil {
			logErr(err)
		} else if len(rs) > 0 {
			_, err := h.ReadResource(ctx, rs[0].Server, rs[0].Resource.URI, nil)
			logErr(err)
		}
		if ps, err := h.Prompts(ctx); err != nil {
			logErr(err)
		} else if len(ps) > 0 {
			_, err := h.GetPrompt(ctx, ps[0].Server, ps[0].Prompt.Name, map[string]string{}, nil)
			logErr(err)
		}
		return nil
	}},
	// SEP-2243: Mcp-Param-* headers mirrored from x-mcp-header arguments.
	"http-custom-headers": {run: func(ctx context.Context, h *host.Host, cc conformanceContext) error {
		if len(cc.ToolCalls) == 0 {
			return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
		}
		for _, tc := range cc.ToolCalls {
			args := tc.Arguments
			if args == nil {
				args = map[string]any{}
			}
			logErr(call(ctx, h, tc.Name, args))
		}
		return nil
	}},
	// SEP-2243: tools with invalid x-mcp-header annotations are left out of
	// the catalog; every tool that remains is called.
	"http-invalid-tool-headers": {run: func(ctx context.Context, h *host.Host, _ conformanceContext) error {
		for _, t := range h.Tools() {
			logErr(call(ctx, h, t.Name, map[string]any{"region": "us-west1"}))
		}
		return nil
	}},
}

func call(ctx context.Context, h *host.Host, tool string, args map[string]any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	res, err := h.CallTool(ctx, tool, raw, nil)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %q returned an error result", tool)
	}
	return nil
}

// logErr reports an error the scenario expects or tolerates: the suite's
// checks, not the client's exit code, decide those scenarios.
func logErr(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
	}
}

// skipped says which tools the host left out of its catalog and why.
func skipped(h *host.Host) string {
	for _, st := range h.Servers() {
		if st.ID == serverID && len(st.Skipped) > 0 {
			return fmt.Sprintf("skipped: %v", st.Skipped)
		}
	}
	return "no tool skipped"
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: client SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok {
		sc, ok = authScenario(name)
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "client: scenario %q is not supported\n", name)
		os.Exit(1)
	}
	var cc conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cc); err != nil {
			fmt.Fprintf(os.Stderr, "client: MCP_CONFORMANCE_CONTEXT: %v\n", err)
			os.Exit(1)
		}
	}
	// Below the suite's default 30 s client timeout, so that we exit with
	// our own error rather than being killed.
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], sc, cc); err != nil {
		fmt.Fprintf(os.Stderr, "client: %s: %v\n", name, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, sc scenario, cc conformanceContext) error {
	opts := &host.Options{
		ToolNameFormat: "{tool}",
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if sc.opts != nil {
		sc.opts(opts)
	}
	srv := config.Server{
		ID:        serverID,
		Transport: config.TransportHTTP,
		URL:       url,
		// The suite's test server listens on loopback.
		AllowLocalEndpoint: true,
		Timeout:            20 * time.Second,
		ConnectTimeout:     20 * time.Second,
	}
	if sc.server != nil {
		cleanup, err := sc.server(&srv, opts, cc)
		if err != nil {
			return err
		}
		defer cleanup()
	}
	h, err := host.Start(ctx, []config.Server{srv}, opts)
	if err != nil {
		return err
	}
	defer h.Close()
	return sc.run(ctx, h, cc)
}
