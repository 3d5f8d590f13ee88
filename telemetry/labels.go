package telemetry

import (
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
)

// Label values that come from outside (a server's tool names, the protocol
// version a client asks for, an error code a server sends) are bounded
// here: each distinct value of an attribute is a series of its own in
// every instrument that records it, for as long as the process lives (the
// exporters keep cumulative series), so a server that renames its tools on
// every list, or a client that sends a new version string in each session,
// would grow /metrics and the collector's storage without end.

// DefaultMaxToolLabels is Options.MaxToolLabels's default: more tools
// than most servers have (a popular Linear server lists 198), few enough
// that a server that renames its tools cannot grow the series far.
const DefaultMaxToolLabels = config.DefaultMaxToolLabels

// OtherLabel stands for the tool names beyond a server's bound
// (Options.MaxToolLabels).
const OtherLabel = "_other"

// otherValue stands for a protocol version or error code that is none of
// the known ones, as the conventions' error.type does.
const otherValue = "_OTHER"

// toolLabels admits at most max distinct tool names per server as label
// values; the others become OtherLabel, and the first of them is logged.
type toolLabels struct {
	max  int
	side string // "client" (the host's calls) or "gateway" (its clients')
	log  *slog.Logger

	mu     sync.Mutex
	seen   map[string]map[string]struct{} // server → names admitted
	folded map[string]bool                // servers whose fold was logged
}

func newToolLabels(max int, side string, log *slog.Logger) *toolLabels {
	if max <= 0 {
		max = DefaultMaxToolLabels
	}
	return &toolLabels{max: max, side: side, log: log, seen: map[string]map[string]struct{}{}, folded: map[string]bool{}}
}

// value is the label value of tool, a tool of server.
func (l *toolLabels) value(server, tool string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	names := l.seen[server]
	if names == nil {
		names = map[string]struct{}{}
		l.seen[server] = names
	}
	if _, ok := names[tool]; ok {
		return tool
	}
	if len(names) < l.max {
		names[tool] = struct{}{}
		return tool
	}
	if !l.folded[server] {
		l.folded[server] = true
		l.log.Warn("telemetry: more tool names than max_tool_labels for one server; the others are counted under "+OtherLabel,
			"server", server, "max_tool_labels", l.max, "side", l.side, "first_folded", tool)
	}
	return OtherLabel
}

// knownVersions are the protocol versions a label may name: those the
// go-sdk speaks. A client may ask for any string; the session goes on in
// a version the SDK knows, but the string it asked for stays its own.
var knownVersions = mcp.SupportedProtocolVersions()

// versionLabel is the label value of protocol version v.
func versionLabel(v string) string {
	if v == "" || slices.Contains(knownVersions, v) {
		return v
	}
	return otherValue
}

// knownCodes are the JSON-RPC error codes an error.type may name: the
// protocol's own (JSON-RPC 2.0's and MCP's), and those SDKs commonly use
// for a closed connection, a timeout and a resource not found. A server
// may send any number.
var knownCodes = []int64{
	jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, jsonrpc.CodeInternalError,
	-32000, // connection closed (the TypeScript SDK's)
	-32001, // request timeout (the TypeScript SDK's)
	-32002, // resource not found (MCP's before SEP-2164)
	mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapabilities, mcp.CodeUnsupportedProtocolVersion, mcp.CodeURLElicitationRequired,
}

// codeLabel is the error.type of a JSON-RPC error of code c.
func codeLabel(c int64) string {
	if slices.Contains(knownCodes, c) {
		return strconv.FormatInt(c, 10)
	}
	return otherValue
}
