// Package config defines Switchboard's typed configuration and loads it.
//
// The native format is TOML. [Load] layers files, later ones overriding
// earlier ones per server id (the overriding server replaces the earlier one
// whole, in its place in the list):
//
//  1. $XDG_CONFIG_HOME/switchboard/config.toml (default ~/.config/switchboard/config.toml)
//  2. ./switchboard.toml
//  3. the file named by --config or SWITCHBOARD_CONFIG ([LoadOptions.File])
//
// The explicitly named file, or one read with [LoadFile], may also be the
// "mcpServers" JSON used by Claude Desktop, Cursor and Claude Code, or VS
// Code's "servers" JSON: an entry has the clients' keys and every key of
// [[mcp_servers]] but id, spelled as in TOML, and the clients' ${…}
// variables are expanded (${env:NAME} becomes {{env.NAME}}) or refused
// with file, line and field (${input:ID}), never passed on as text.
//
// A server is one [[mcp_servers]] table:
//
//	[[mcp_servers]]
//	id        = "everything"
//	transport = "stdio"
//	command   = "npx"
//	args      = ["-y", "@modelcontextprotocol/server-everything"]
//	env       = { API_KEY = "{{secrets.everything_key}}" }
//	timeout   = "90s"
//
// Besides servers, a file may have [providers.NAME] tables ([Provider]),
// [[endpoints]] tables ([Endpoint]; a later file's endpoint of the same
// name replaces an earlier one whole) and the tables [gateway], [network],
// [limits] and [state] ([Gateway], [Network], [Limits], [State]), which a
// later file overrides key by key.
//
// Decoding is strict (an unknown key is an error, with a suggestion when it
// looks like a typo) and [Config.Validate] checks the rest. Both report every
// problem at once, each a [*Problem] naming file, line (where known) and field
// path: "switchboard.toml:12: mcp_servers[2].url: ...". [Problems] lists them.
// Each key is declared once, in a table of fields that the TOML, JSON and
// agent-file decoders, the suggestions and the validation all read, so a
// key means the same in every format that has it.
//
// [Edit] changes the servers and endpoints of a native file and keeps the
// rest of its text, comments included; [ServerTOML] writes one server,
// [EndpointTOML] one endpoint, and [EndpointsTOML], [EndpointsJSON] and
// [ReadEndpoints] are the endpoints file of `switchboard endpoints export`
// and `import`. [ClientFiles], [ReadClientFile] and [PlanImport] read the
// MCP servers of other clients (Claude Desktop, Claude Code, Cursor, VS
// Code, Windsurf) for `switchboard import`; [ConnectFile] and
// [EditClientEntry] write one entry into a client's file for `switchboard
// connect`. [Literals] tells the credentials written out in a server,
// which are never written to a file.
//
// Placeholders ({{env.NAME}}, {{secrets.NAME}}) are allowed only in env and
// headers values, and stay unresolved in a [Config]; [Server.Resolve]
// resolves them just before a server is started, so resolved secret values
// never live in a Config that might be printed.
package config

import (
	"strconv"
	"time"
)

// Transport names how Switchboard talks to a server.
type Transport string

// The transports a server may use.
const (
	TransportStdio     Transport = "stdio"
	TransportHTTP      Transport = "http"      // Streamable HTTP
	TransportSSE       Transport = "sse"       // legacy HTTP+SSE (2024-11-05)
	TransportWebSocket Transport = "websocket" // one JSON-RPC message per text frame, subprotocol "mcp"
)

// Defaults applied by [Load] where a field is unset.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	// DefaultInstallTimeout is how long a server started through a
	// package runner may take to install on its first start: a cold npm
	// cache took 57 s to download server-filesystem on one machine.
	DefaultInstallTimeout = 5 * time.Minute
	DefaultToolNameFormat = "mcp_{server}_{tool}"
	DefaultHealthInterval = 30 * time.Second
	DefaultMaxRestarts    = 5
	// HealthOff in Server.HealthInterval turns health pings off, for
	// servers that do not answer ping (health_interval = "0s").
	HealthOff time.Duration = -1
	// DefaultMaxDescriptionBytes and DefaultMaxNameBytes bound the text
	// servers declare (see [Limits]).
	DefaultMaxDescriptionBytes = 8 << 10
	DefaultMaxNameBytes        = 256
	// DefaultMaxWorkflowDepth and DefaultMaxForEachItems bound workflow
	// runs (see [Limits]; the workflow package's Limits).
	DefaultMaxWorkflowDepth = 8
	DefaultMaxForEachItems  = 1000
	// DefaultKeepRuns bounds the ended workflow runs kept in the
	// database (see [Limits]).
	DefaultKeepRuns = 10_000
)

// The longest each duration of a configuration may be. A value beyond
// is refused, naming the field and its maximum: a timeout of years is a
// mistake, and one near time.Duration's limit overflows the deadline it
// is added to.
const (
	// MaxTimeout bounds a call (timeout): a day, for the longest tools
	// that report progress.
	MaxTimeout = 24 * time.Hour
	// MaxConnectTimeout and MaxInstallTimeout bound a server's start:
	// an hour each (the defaults are 30 s and 5 minutes).
	MaxConnectTimeout = time.Hour
	MaxInstallTimeout = time.Hour
	// MaxHealthInterval bounds the time between health pings.
	MaxHealthInterval = 24 * time.Hour
	// MaxSessionTimeout bounds how long an idle gateway session is kept:
	// a week, a client left open over a weekend.
	MaxSessionTimeout = 7 * 24 * time.Hour
	// MaxShutdownGrace and MaxShutdownDrain bound a stop of serve.
	MaxShutdownGrace = time.Hour
	MaxShutdownDrain = time.Hour
	// MaxOTLPInterval bounds the time between metric pushes.
	MaxOTLPInterval = 24 * time.Hour
)

// Config is the whole, merged configuration.
type Config struct {
	// ToolNameFormat names tools: {server} and {tool} are replaced.
	ToolNameFormat string
	// Servers in declaration order (earlier files first; an overriding
	// declaration keeps the position of the first one).
	Servers []Server
	// Providers are the [providers.NAME] tables by name; a later file's
	// table replaces an earlier one of the same name whole.
	Providers map[string]Provider
	// Gateway is the [gateway] table (see [Gateway]); a later file's keys
	// override an earlier one's, key by key.
	Gateway Gateway
	// Network is the [network] table (see [Network]); a later file's keys
	// override an earlier one's, key by key.
	Network Network
	// Limits is the [limits] table (see [Limits]), merged like Network.
	Limits Limits
	// State is the [state] table (see [State]), merged like Network.
	State State
	// Telemetry is the [telemetry] table (see [Telemetry]), merged like
	// Network.
	Telemetry Telemetry
	// Search is the [search] table (see [Search]): search mode's optional
	// embeddings, merged like Network.
	Search Search
	// Code is the [code] table (see [Code]): code mode's budgets, merged
	// like Network.
	Code Code
	// Endpoints are the [[endpoints]] tables (see [Endpoint]) in
	// declaration order; a later file's endpoint of the same name
	// replaces an earlier one's whole, in its place.
	Endpoints []Endpoint
	// Guardrails are the [[guardrails]] tables (see [Guardrail]), every
	// file's in order: the chain of filters on tool calls.
	Guardrails Guardrails
	// Registries are the [[registries]] tables (see [Registry]); a later
	// file's registry of the same name replaces the earlier one.
	Registries []Registry
	// Workflows lists the workflow files named by the files' top-level
	// workflows keys (relative paths resolved against the config file's
	// folder), every file's in order, each once. The workflow package
	// reads them; this package does not.
	Workflows []string
	// Files lists the files that were read, in order.
	Files []string
	// Warnings are what the files do that is allowed but most likely a
	// mistake (see [Warnings]), each with file, line and field, in the
	// order of the files; [Load] and [LoadFile] set them, and they never
	// make it fail. Validate does not report them.
	Warnings []*Problem
}

// Server is one MCP server.
type Server struct {
	ID          string
	Description string
	Transport   Transport

	// stdio only.
	Command string
	Args    []string
	Env     map[string]string // values may hold placeholders
	Cwd     string
	// InstallTimeout bounds how long a package runner (npx, uvx, pipx run,
	// …) may take to fetch and install the server before the server itself
	// begins to read its input; ConnectTimeout counts from then. 0 means
	// DefaultInstallTimeout. See the host package.
	InstallTimeout time.Duration
	// AllowEnv names the variables of Env that make a program load other
	// code (NODE_OPTIONS, LD_PRELOAD, …) and that this server may set
	// all the same; without it they are refused.
	AllowEnv []string

	// network only.
	URL                string
	Headers            map[string]string // values may hold placeholders
	AllowLocalEndpoint bool
	// AllowCrossOriginRedirects lets the connection follow a redirect to
	// another origin (each hop still checked); the configured headers,
	// Authorization and Cookie never follow it.
	AllowCrossOriginRedirects bool
	// OAuth, when set, signs in to the server as the MCP authorization
	// spec describes (the oauth package); nil: no OAuth.
	OAuth *OAuth

	// common.
	ToolsAllowlist []string // nil: every tool; empty but set: none
	// Scan is what the host does with a tool whose definition the
	// toolscan rules find signs of poisoning in: ScanWarn (the default,
	// also ""), ScanHold or ScanDrop.
	Scan string
	// Pin is how the host pins the server's tool definitions (the
	// toolpin package): PinOff (the default, also ""), PinFirstUse or
	// PinApprove.
	Pin            string
	Timeout        time.Duration // per call
	ConnectTimeout time.Duration
	Optional       bool
	// ProgressResetsTimeout lets a progress notification restart the call
	// timeout, for long-running tools.
	ProgressResetsTimeout bool
	// UpstreamTask is when the host calls the server's tools as tasks
	// (the server's own tasks, of protocol 2025-11-25 or the 2026-07-28
	// extension): UpstreamTaskAuto
	// (the default, also ""), UpstreamTaskAlways or UpstreamTaskNever.
	// UpstreamTaskTimeout bounds such a call instead of Timeout; 0 means
	// DefaultUpstreamTaskTimeout. See upstream_task.go.
	UpstreamTask        string
	UpstreamTaskTimeout time.Duration
	// Roots are the roots offered to the server (file:// URIs); none by default.
	Roots []string

	// Resilience (see the host package): Lazy defers starting the server
	// until one of its tools is called, offering its cached tools meanwhile;
	// HealthInterval is how often it is pinged (0: the default, HealthOff:
	// never); MaxConcurrency queues calls beyond that many (0: no limit);
	// MaxRestarts is how many crashes within RestartWindow are restarted
	// before the server is marked failed (0: the default).
	Lazy           bool
	HealthInterval time.Duration
	MaxConcurrency int
	MaxRestarts    int

	// Task is whether a call to the server's tools through the gateway
	// may become a task (the MCP tasks extension) for a 2026-07-28 client
	// that declares it: TaskNever, TaskAuto (the default, also ""),
	// TaskAlways or TaskRequired. ToolTasks overrides it per tool, by the
	// server's own tool name. See [Server.TaskMode].
	Task      string
	ToolTasks map[string]string

	// Registry is where a server added from an MCP registry came from
	// (registry = { name, version, url }); nil for one written by hand.
	Registry *RegistrySource

	// Source is where the server was declared.
	Source Position
}

// A server's scan actions (Server.Scan): what the host does with a tool
// whose definition shows signs of poisoning (the toolscan package).
const (
	// ScanWarn offers the tool and logs a warning per finding; the
	// default.
	ScanWarn = "warn"
	// ScanHold holds the tool back until a person approves its
	// definition (`switchboard tools approve`), which is then pinned: an
	// approved definition is offered, findings and all, until it changes.
	ScanHold = "hold"
	// ScanDrop leaves the tool out of the catalog.
	ScanDrop = "drop"
)

// A server's pin settings (Server.Pin): how the host pins its tools'
// definitions, so that a definition that changes is held back until a
// person approves it (the toolpin package).
const (
	// PinOff pins nothing; the default.
	PinOff = "off"
	// PinFirstUse trusts the first definition seen of each tool, and holds
	// one that later differs from it.
	PinFirstUse = "first-use"
	// PinApprove offers no tool until a person approves its definition,
	// and holds a changed one likewise.
	PinApprove = "approve"
)

// A server's task modes (Server.Task, Server.ToolTasks): whether the
// gateway may answer a call with a task (the MCP tasks extension,
// SEP-2663) to a 2026-07-28 client that declares the extension on its
// request. Every other client is answered with the call's result, as
// without tasks.
const (
	// TaskNever: never a task.
	TaskNever = "never"
	// TaskAuto: a call still running after [gateway] task_wait becomes a
	// task; one that ends sooner is answered with its result. The default.
	TaskAuto = "auto"
	// TaskAlways: a task from the start.
	TaskAlways = "always"
	// TaskRequired: as TaskAuto, and a 2026-07-28 client that does not
	// declare the extension is refused (-32021) rather than kept waiting.
	TaskRequired = "required"
)

// TaskMode is the task mode of the server's tool tool (its own name):
// ToolTasks[tool], else Task, else TaskAuto.
func (s Server) TaskMode(tool string) string {
	if m := s.ToolTasks[tool]; m != "" {
		return m
	}
	if s.Task != "" {
		return s.Task
	}
	return TaskAuto
}

// Position is a place in a config file.
type Position struct {
	File string
	Line int // 0 when unknown
	// Field is the field path of what is declared there, as written in
	// File: "mcp_servers[2]" (the index counts that file's tables only) or
	// "mcpServers.github" for the JSON format. "" when unknown; [Problem]
	// carries its own, complete field path instead.
	Field string
}

func (p Position) String() string {
	if p.Line > 0 {
		return p.File + ":" + strconv.Itoa(p.Line)
	}
	return p.File
}
