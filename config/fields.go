package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/internal/decode"
)

// The formats a server's keys are in: an [[mcp_servers]] table and an
// agent file's inline server have every key; an mcpServers entry (JSON)
// has those other clients write, and Switchboard's own spelled as in TOML,
// but id (the entry's name).
const (
	native = decode.TOML | decode.YAML
	every  = decode.Every
)

// Where a server's fields apply (decode.Field.Scope): the validator refuses
// a stdio field on a network server and the other way round.
const (
	forStdio   = "stdio"
	forNetwork = "network"
)

// serverFields are the keys of a server, each declared once for the TOML,
// JSON and YAML decoders, for "did you mean", for validation and for the
// transport each is for. Checks here look at one value; those that need
// several (the transport, the env guard, the URL policy) are in
// validator.server.
//
// alwaysAllow and autoApprove are other clients' approval lists; they are
// accepted and ignored (Switchboard has no approval prompt, and mapping
// them to tools_allowlist would hide every other tool). Switchboard's own
// keys are accepted in JSON too, spelled as in TOML ("connect_timeout":
// "2m"), so that a Claude Desktop or VS Code file can carry them: only id
// is not (the entry's name is the id). A server's transport is "type" in
// the clients' JSON; "transport" is accepted too (decodeJSON refuses both
// at once), and both take every name of transportNames.
var serverFields = decode.Table[Server]{
	decode.String("id", native, func(s *Server) *string { return &s.ID }, checkServerID),
	decode.String("description", every, func(s *Server) *string { return &s.Description }, noPlaceholder),
	decode.Value("transport", every, func(s *Server) *Transport { return &s.Transport }, readTransport, checkTransport),
	decode.Value("type", decode.JSON, func(s *Server) *Transport { return &s.Transport }, readTransport),
	decode.String("command", every, func(s *Server) *string { return &s.Command }, noPlaceholder).Only(forStdio),
	decode.StringList("args", every, func(s *Server) *[]string { return &s.Args }, checkArg).Only(forStdio),
	decode.StringMap("env", every, func(s *Server) *map[string]string { return &s.Env }, checkEnvEntry).Only(forStdio),
	// Checked with env, by checkEnvGuard.
	decode.StringList("allow_env", every, func(s *Server) *[]string { return &s.AllowEnv }).Only(forStdio),
	decode.String("cwd", every, func(s *Server) *string { return &s.Cwd }, noPlaceholder).Only(forStdio),
	decode.String("url", every, func(s *Server) *string { return &s.URL }, noPlaceholder).Only(forNetwork),
	decode.StringMap("headers", every, func(s *Server) *map[string]string { return &s.Headers }, checkHeaderEntry).Only(forNetwork),
	decode.Bool("allow_local_endpoint", every, func(s *Server) *bool { return &s.AllowLocalEndpoint }).Only(forNetwork),
	decode.Value("oauth", every, func(s *Server) **OAuth { return &s.OAuth }, readOAuth).Only(forNetwork),
	decode.Bool("allow_cross_origin_redirects", every, func(s *Server) *bool { return &s.AllowCrossOriginRedirects }).Only(forNetwork),
	decode.StringList("tools_allowlist", every, func(s *Server) *[]string { return &s.ToolsAllowlist }, checkToolName),
	decode.String("scan", every, func(s *Server) *string { return &s.Scan }, checkScan),
	decode.String("pin", every, func(s *Server) *string { return &s.Pin }, checkPin),
	decode.Duration("timeout", native, func(s *Server) *time.Duration { return &s.Timeout }, MaxTimeout),
	// Milliseconds, as in the clients that have this key, or a duration
	// as in TOML; bounded by the check of the declaration above, which
	// the validator runs on every server.
	decode.Value("timeout", decode.JSON, func(s *Server) *time.Duration { return &s.Timeout }, readMillis),
	decode.Duration("connect_timeout", every, func(s *Server) *time.Duration { return &s.ConnectTimeout }, MaxConnectTimeout),
	decode.Duration("install_timeout", every, func(s *Server) *time.Duration { return &s.InstallTimeout }, MaxInstallTimeout).Only(forStdio),
	decode.Bool("optional", every, func(s *Server) *bool { return &s.Optional }),
	decode.Bool("progress_resets_timeout", every, func(s *Server) *bool { return &s.ProgressResetsTimeout }),
	decode.String("upstream_task", every, func(s *Server) *string { return &s.UpstreamTask }, checkUpstreamTask),
	decode.Duration("upstream_task_timeout", every, func(s *Server) *time.Duration { return &s.UpstreamTaskTimeout }, MaxTimeout),
	decode.StringList("roots", every, func(s *Server) *[]string { return &s.Roots }, checkRootEntry),
	decode.Bool("lazy", every, func(s *Server) *bool { return &s.Lazy }),
	decode.Interval("health_interval", every, func(s *Server) *time.Duration { return &s.HealthInterval }, HealthOff, MaxHealthInterval),
	decode.Count("max_concurrency", every, func(s *Server) *int { return &s.MaxConcurrency }),
	decode.Count("max_restarts", every, func(s *Server) *int { return &s.MaxRestarts }),
	decode.String("task", every, func(s *Server) *string { return &s.Task }, checkTask),
	decode.StringMap("tool_tasks", every, func(s *Server) *map[string]string { return &s.ToolTasks }, checkToolTask),
	decode.Value("registry", every, func(s *Server) **RegistrySource { return &s.Registry }, readRegistrySource),
	// Read before the others: a disabled entry is skipped unread.
	decode.Func("disabled", decode.JSON, func(*Server, string, any) {}),
	decode.Value[Server]("alwaysAllow", decode.JSON, nil, (*decode.Decoder).StringList),
	decode.Value[Server]("autoApprove", decode.JSON, nil, (*decode.Decoder).StringList),
	// In JSON the entry's name is its id.
	decode.Value[Server]("id", decode.JSON, nil, func(d *decode.Decoder, field string, v any) (string, bool) {
		d.Errorf(field, "in an mcpServers or servers entry the entry's name is the id: remove id, or rename the entry")
		return "", false
	}),
	// VS Code's: a .env file to read the environment from.
	decode.Value[Server]("envFile", decode.JSON, nil, readEnvFile),
}

// readEnvFile refuses VS Code's envFile: Switchboard reads no .env file
// (one would hold secrets in plain text beside the config), and ignoring
// it would start the server without its variables.
func readEnvFile(d *decode.Decoder, field string, v any) (string, bool) {
	d.Errorf(field, "Switchboard reads no .env file: set the variables in env, a secret as {{secrets.NAME}} (switchboard secrets set NAME)")
	return "", false
}

// checkScan checks a server's scan action.
func checkScan(s string) string {
	switch s {
	case "", ScanWarn, ScanHold, ScanDrop:
		return ""
	}
	return fmt.Sprintf("invalid scan %q: want warn, hold or drop", s)
}

// checkTask checks a server's task mode.
func checkTask(s string) string {
	switch s {
	case "", TaskNever, TaskAuto, TaskAlways, TaskRequired:
		return ""
	}
	return fmt.Sprintf("invalid task mode %q: want never, auto, always or required", s)
}

// checkToolTask checks one entry of a server's tool_tasks: a tool name
// and its task mode.
func checkToolTask(tool, mode string) []string {
	var msgs []string
	if msg := checkToolName([]string{tool}, 0); msg != "" {
		msgs = append(msgs, msg)
	}
	if mode == "" {
		return append(msgs, "empty task mode: want never, auto, always or required")
	}
	if msg := checkTask(mode); msg != "" {
		msgs = append(msgs, msg)
	}
	return msgs
}

// checkPin checks a server's pin setting.
func checkPin(s string) string {
	switch s {
	case "", PinOff, PinFirstUse, PinApprove:
		return ""
	}
	return fmt.Sprintf("invalid pin %q: want off, first-use or approve", s)
}

// noPlaceholder refuses a placeholder: they are resolved only where
// Server.Resolve looks (env and headers values), so anywhere else one would
// be passed on literally.
func noPlaceholder(s string) string {
	if hasPlaceholder(s) {
		return placeholderMsg
	}
	return ""
}

// checkServerID checks an id that is set; validator.server reports a
// missing one.
func checkServerID(id string) string {
	switch {
	case id == "":
		return ""
	case hasPlaceholder(id):
		return placeholderMsg
	case !validID(id):
		return fmt.Sprintf("invalid id %q: use 1 to %d characters of A-Z a-z 0-9 _ -", id, maxIDLen)
	}
	return ""
}

// transportNames is the one vocabulary of a server's transport, wherever
// one is written: transport in TOML, JSON and agent files, the clients'
// type in JSON, the REST API, `switchboard add --transport`. Each name
// means its canonical Transport, which is what a Config holds; the other
// clients' names (streamable-http, streamableHttp, ws) are accepted
// everywhere, not only in their files.
var transportNames = []struct {
	name string
	t    Transport
}{
	{"stdio", TransportStdio},
	{"http", TransportHTTP}, {"streamable-http", TransportHTTP}, {"streamableHttp", TransportHTTP},
	{"sse", TransportSSE},
	{"websocket", TransportWebSocket}, {"ws", TransportWebSocket},
}

// transportWant lists transportNames for messages.
const transportWant = "want stdio, http (or streamable-http, streamableHttp), sse, websocket (or ws)"

// ParseTransport returns the transport name means: one of the canonical
// names (stdio, http, sse, websocket) or another client's for one of them
// (streamable-http, streamableHttp, ws); false for anything else.
func ParseTransport(name string) (Transport, bool) {
	for _, n := range transportNames {
		if n.name == name {
			return n.t, true
		}
	}
	return "", false
}

// readTransport reads a transport (the key transport, or the clients'
// type) as its canonical value, and refuses a name that is none.
func readTransport(d *decode.Decoder, field string, v any) (Transport, bool) {
	s, ok := d.String(field, v)
	if !ok {
		return "", false
	}
	if t, known := ParseTransport(s); known {
		return t, true
	}
	d.Errorf(field, "%s", checkTransport(Transport(s)))
	return "", false
}

// checkTransport checks a transport as a Config holds it, canonical; ""
// is inferred from command or url.
func checkTransport(t Transport) string {
	switch {
	case t == "":
		return ""
	case hasPlaceholder(string(t)):
		return placeholderMsg
	case t != TransportStdio && !isNetwork(t):
		return fmt.Sprintf("unknown transport %q (%s)", string(t), transportWant)
	}
	return ""
}

// readMillis reads a JSON timeout: a number of milliseconds, as the
// clients that have the key write it, or a duration string as in TOML
// ("90s").
func readMillis(d *decode.Decoder, field string, v any) (time.Duration, bool) {
	if _, ok := v.(string); ok {
		return d.Duration(field, v)
	}
	n, ok := v.(json.Number)
	if !ok {
		d.Errorf(field, `must be a number of milliseconds or a duration string such as "90s", not %s`, d.TypeName(v))
		return 0, false
	}
	ms, err := n.Float64()
	if err != nil || ms <= 0 || ms > float64(1<<62/time.Millisecond) {
		d.Errorf(field, "must be a positive number of milliseconds, not %s", n)
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

func checkArg(args []string, i int) string {
	if hasPlaceholder(args[i]) {
		return placeholderArgsMsg
	}
	return ""
}

func checkEnvEntry(k, v string) []string {
	var msgs []string
	switch {
	case hasPlaceholder(k):
		msgs = append(msgs, placeholderMsg+", not in names")
	case !validEnvName(k):
		msgs = append(msgs, "invalid variable name: use A-Z a-z 0-9 _, not starting with a digit")
	}
	return append(msgs, placeholderProblems(v)...)
}

func checkHeaderEntry(k, v string) []string {
	var msgs []string
	switch {
	case hasPlaceholder(k):
		msgs = append(msgs, placeholderMsg+", not in names")
	case !validHeaderName(k):
		msgs = append(msgs, "invalid header name: must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		// Header injection: a newline would start another header.
		msgs = append(msgs, "value must not contain CR, LF or NUL")
	}
	return append(msgs, placeholderProblems(v)...)
}

func checkToolName(names []string, i int) string {
	name := names[i]
	switch {
	case hasPlaceholder(name):
		return placeholderMsg
	case name == "":
		return "empty tool name"
	}
	for j, other := range names[:i] {
		if other == name {
			return fmt.Sprintf("duplicate %q (also tools_allowlist[%d])", name, j)
		}
	}
	return ""
}

func checkRootEntry(roots []string, i int) string {
	if hasPlaceholder(roots[i]) {
		return placeholderMsg
	}
	return checkRoot(roots[i])
}
