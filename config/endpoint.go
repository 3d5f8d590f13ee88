package config

import (
	"fmt"

	"github.com/switchboardmcp/switchboard/secret"
)

// Endpoint is an [[endpoints]] table: a named MCP endpoint of the gateway,
// beside the default one at /mcp, publishing its own view of the shared
// servers (their processes and connections are the host's, one each,
// whatever the endpoints) with its own rules:
//
//	[[endpoints]]
//	name = "code"                     # served at /e/code/mcp, /e/code/sse, /e/code/ws
//	path = "/code/mcp"                # the Streamable HTTP path, if not /e/NAME/mcp
//	servers = ["github", "filesystem"] # the servers it publishes; default all
//	tools = ["github_*", "!github_delete_*", "filesystem_read_*"]  # globs; "!" excludes
//	instructions = "Tools for reading and changing this repository."
//	workflows = ["review"]            # published workflows offered here
//	auth_token = "{{secrets.code_token}}"  # this endpoint's own token
//	scopes = ["code"]                 # OAuth: scopes a token needs here
//	mode = "search"                   # "all" (default), "search" or "code"
//
//	[endpoints.rename]                # the name a client sees = the tool it calls
//	read = "mcp_filesystem_read_text_file"
//
//	[endpoints.override.read]         # what a client sees of a tool
//	description = "Read a file of the repository"
//
// The zero value of a field means its default. Names are unique; a later
// file's endpoint of the same name replaces an earlier one whole.
type Endpoint struct {
	// Name identifies the endpoint: 1 to 64 of a-z, 0-9, "-" and "_",
	// beginning with a letter or digit. It is in the default paths, in
	// metrics and usage, and what `serve --stdio --endpoint` and
	// `connect --endpoint` take.
	Name string
	// Path is where Streamable HTTP is served; "" means /e/NAME/mcp. The
	// legacy transports are beside it: the path's last element replaced
	// by sse, message and ws.
	Path string
	// Servers lists the ids of the servers the endpoint publishes; nil
	// means all of the gateway's.
	Servers []string
	// Tools are glob patterns ("*" any run of characters, "?" one) over
	// the published tool names, applied in order: a tool is offered when
	// the last pattern it matches does not begin with "!"; nil offers
	// every tool of Servers.
	Tools []string
	// Instructions are the endpoint's instructions to its clients, in
	// place of the gateway's.
	Instructions string
	// Workflows lists the ids of published workflows ([gateway] workflows)
	// offered here; nil means none.
	Workflows []string
	// Rename maps a name a client sees to the published tool it calls.
	Rename map[string]string
	// Override changes what a client sees of a tool, by the name the
	// client sees.
	Override map[string]ToolOverride
	// AuthToken is the endpoint's own owner token (a placeholder, like
	// [gateway] auth_token): a request bearing it may use this endpoint
	// alone; "" leaves the endpoint to the gateway's auth.
	AuthToken string
	// Scopes are the OAuth scopes a token needs on this endpoint, besides
	// [gateway.auth] scopes.
	Scopes []string
	// Mode is what the endpoint lists of the tools it offers: [ModeAll]
	// (every one; "" means that), [ModeSearch] (search_tools and
	// call_tool) or [ModeCode] (search_tools and run_code).
	Mode string

	// Source is where the endpoint was declared.
	Source Position
}

// ToolOverride is what a client of an endpoint sees of a tool instead of
// what its server says; a field left zero keeps the server's.
type ToolOverride struct {
	Title       string
	Description string
	// Annotations' hints, where set.
	ReadOnlyHint, DestructiveHint, IdempotentHint, OpenWorldHint *bool
}

// ResolveAuthToken expands e.AuthToken's placeholders as
// [Gateway.ResolveAuthToken] does [gateway] auth_token's, registering the
// token with red (when non-nil); "" when the endpoint has none. An error
// names the endpoint's field, never the value.
func (e Endpoint) ResolveAuthToken(getenv func(string) (string, bool), secrets secret.Store, red *secret.Redactor) (string, error) {
	if e.AuthToken == "" {
		return "", nil
	}
	field := fmt.Sprintf("endpoints[%s].auth_token", e.Name)
	tok, err := expandCredential(field, e.AuthToken, getenv, secrets, red)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", fmt.Errorf("%s: %s resolved to the empty string", field, e.AuthToken)
	}
	return tok, nil
}
