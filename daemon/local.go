package daemon

// What the daemon serves on its local socket: the gateway's MCP endpoint,
// for calls (progress, cancellation and elicitation the MCP way), and, under
// /local/v1/, what MCP has no words for and a CLI command prints — the
// servers' states, the host's tools in its own order with their servers and
// the servers' own names, resources and prompts by server, and the host's
// errors as they are (host.ErrorJSON). A Client reads both.

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/guard"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// localPrefix is where the local endpoints are; its version changes when
// their meaning does.
const localPrefix = "/local/v1/"

// serveLocal serves the local socket, when Options.Socket names one; nil
// when it does not, or cannot (logged: CLI commands then start their own
// servers, as without a daemon).
func (d *Daemon) serveLocal(g *gateway.Gateway, h *host.Host) *httpFace {
	path := d.opts.Socket
	if path == "" {
		return nil
	}
	ln, err := listenSocket(path)
	if errors.Is(err, ErrSocketInUse) {
		d.log.Info("not serving CLI commands: "+err.Error(), "socket", path)
		return nil
	}
	if err != nil {
		d.log.Warn("not serving CLI commands on a local socket", "err", err)
		return nil
	}
	d.mu.Lock()
	d.socket = path
	d.mu.Unlock()
	d.log.Info("serving CLI commands of this configuration", "socket", path)
	gw := d.opts.Config.Gateway
	mux := http.NewServeMux()
	// No token: only this user can reach the socket (its folder is 0700).
	// Host and Origin are checked as on loopback, though no browser can
	// open a unix socket: a local forwarder someone set up could.
	mux.Handle("/", g.Handler(&gateway.HTTPOptions{
		Guard:             guard.Options{Local: true, Loopback: true, Logger: d.opts.Logger},
		SessionTimeout:    gw.SessionTimeout,
		MaxSessions:       gw.MaxSessions,
		MaxClientSessions: gw.MaxClientSessions,
	}))
	l := &local{h: h, red: h.Redactor()}
	mux.HandleFunc("GET "+localPrefix+"state", l.state)
	mux.HandleFunc("GET "+localPrefix+"resources", l.resources)
	mux.HandleFunc("GET "+localPrefix+"templates", l.templates)
	mux.HandleFunc("GET "+localPrefix+"prompts", l.prompts)
	mux.HandleFunc("POST "+localPrefix+"read", l.read)
	mux.HandleFunc("POST "+localPrefix+"prompt", l.prompt)
	mux.HandleFunc("GET "+localPrefix+"usage", d.serveUsage)
	mux.HandleFunc("DELETE "+localPrefix+"servers/{id}", d.serveDeleteServer)
	if d.wf != nil {
		l.serveRuns(mux, d.wf)
	}
	return d.serveHTTP(ln, localOnly(mux))
}

// localOnly refuses what no CLI command sends: a browser's Origin, or a
// Host other than the one the Client names (DNS rebinding through a
// forwarder).
func localOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Host != localHost {
			w.Header().Set("Connection", "close")
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// localHost is the Host a Client sends on the socket.
const localHost = "localhost"

// local answers the local endpoints from the daemon's host.
type local struct {
	h   *host.Host
	red *secret.Redactor
}

// stateJSON is what GET /local/v1/state answers: the host as a CLI command
// sees it.
type stateJSON struct {
	ToolNameFormat string       `json:"tool_name_format"`
	Servers        []statusJSON `json:"servers"`
	Tools          []ToolItem   `json:"tools"`
}

// statusJSON is a host.ServerStatus.
type statusJSON struct {
	ID              string              `json:"id"`
	Description     string              `json:"description,omitempty"`
	Transport       string              `json:"transport"`
	State           host.State          `json:"state"`
	Optional        bool                `json:"optional"`
	ServerInfo      *mcp.Implementation `json:"server_info,omitempty"`
	ProtocolVersion string              `json:"protocol_version,omitempty"`
	Instructions    string              `json:"instructions,omitempty"`
	Tools           int                 `json:"tools"`
	Skipped         []skippedJSON       `json:"skipped,omitempty"`
	Warnings        []string            `json:"warnings,omitempty"`
	Err             *host.ErrorJSON     `json:"error,omitempty"`
	LastError       *host.ErrorJSON     `json:"last_error,omitempty"`
	Restarts        int                 `json:"restarts"`
	LastHealthy     time.Time           `json:"last_healthy,omitzero"`
	ReadySince      time.Time           `json:"ready_since,omitzero"`
	InFlight        int                 `json:"in_flight"`
	PID             int                 `json:"pid,omitempty"`
	Isolation       string              `json:"isolation,omitempty"`
}

type skippedJSON struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

type resourcesJSON struct {
	Resources []ResourceItem  `json:"resources"`
	Error     *host.ErrorJSON `json:"error,omitempty"`
}

type templatesJSON struct {
	Templates []TemplateItem  `json:"templates"`
	Error     *host.ErrorJSON `json:"error,omitempty"`
}

type promptsJSON struct {
	Prompts []PromptItem    `json:"prompts"`
	Error   *host.ErrorJSON `json:"error,omitempty"`
}

// resultJSON is a request's result, or its error.
type resultJSON[R any] struct {
	Result R               `json:"result,omitzero"`
	Error  *host.ErrorJSON `json:"error,omitempty"`
}

func (l *local) state(w http.ResponseWriter, r *http.Request) {
	out := stateJSON{ToolNameFormat: l.h.ToolNameFormat(), Servers: []statusJSON{}, Tools: ToolItems(l.h)}
	for _, st := range l.h.Servers() {
		j := statusJSON{ID: st.ID, Description: st.Description, Transport: string(st.Transport), State: st.State,
			Optional: st.Optional, ServerInfo: st.ServerInfo, ProtocolVersion: st.ProtocolVersion,
			Instructions: st.Instructions, Tools: st.Tools, Warnings: st.Warnings,
			Err: host.NewErrorJSON(st.Err), LastError: host.NewErrorJSON(st.LastError), Restarts: st.Restarts,
			LastHealthy: st.LastHealthy, ReadySince: st.ReadySince, InFlight: st.InFlight, PID: st.PID, Isolation: st.Isolation}
		for _, sk := range st.Skipped {
			j.Skipped = append(j.Skipped, skippedJSON{Tool: sk.Tool, Reason: sk.Reason})
		}
		out.Servers = append(out.Servers, j)
	}
	write(l, w, out)
}

func (l *local) resources(w http.ResponseWriter, r *http.Request) {
	rs, err := ResourceItems(r.Context(), l.h)
	write(l, w, resourcesJSON{Resources: rs, Error: host.NewErrorJSON(err)})
}

func (l *local) templates(w http.ResponseWriter, r *http.Request) {
	ts, err := TemplateItems(r.Context(), l.h)
	write(l, w, templatesJSON{Templates: ts, Error: host.NewErrorJSON(err)})
}

func (l *local) prompts(w http.ResponseWriter, r *http.Request) {
	ps, err := PromptItems(r.Context(), l.h)
	write(l, w, promptsJSON{Prompts: ps, Error: host.NewErrorJSON(err)})
}

func (l *local) read(w http.ResponseWriter, r *http.Request) {
	var req ReadRequest
	if !readJSON(w, r, &req) {
		return
	}
	res, err := req.Read(r.Context(), l.h)
	write(l, w, resultJSON[*mcp.ReadResourceResult]{Result: res, Error: host.NewErrorJSON(err)})
}

func (l *local) prompt(w http.ResponseWriter, r *http.Request) {
	var req PromptRequest
	if !readJSON(w, r, &req) {
		return
	}
	res, err := req.Get(r.Context(), l.h)
	write(l, w, resultJSON[*mcp.GetPromptResult]{Result: res, Error: host.NewErrorJSON(err)})
}

// maxLocalBody bounds a request to a local endpoint: a URI, a prompt's
// name and arguments.
const maxLocalBody = 1 << 20

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLocalBody)).Decode(v); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// write answers v. What it holds comes from the host, redacted there;
// the face redacts again, as the gateway does: nothing leaves unredacted.
func write[T any](l *local, w http.ResponseWriter, v T) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(secret.RedactValue(l.red, v))
}

// deleteAnswer is what DELETE /local/v1/servers/{id} answers: nothing, or
// why not.
type deleteAnswer struct {
	Error *deleteErrorJSON `json:"error,omitempty"`
}

type deleteErrorJSON struct {
	Code    string `json:"code,omitempty"` // unknown_server, read_only
	Message string `json:"message"`
}

// serveDeleteServer deletes a server added at run time (DeleteServer), for
// `switchboard remove`: the running daemon stops it as it deletes it, where
// a deletion in the database alone would leave it running (SQLite reports
// no change).
func (d *Daemon) serveDeleteServer(w http.ResponseWriter, r *http.Request) {
	var out deleteAnswer
	if err := d.DeleteServer(r.Context(), r.PathValue("id"), 0); err != nil {
		out.Error = &deleteErrorJSON{Message: d.red.Redact(err.Error())}
		switch {
		case errors.Is(err, host.ErrUnknownServer), errors.Is(err, store.ErrNotFound):
			out.Error.Code = "unknown_server"
		case errors.Is(err, ErrReadOnly):
			out.Error.Code = "read_only"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
