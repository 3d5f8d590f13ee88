package api

// The host's state as a CLI command prints it: its tool name format,
// every server's whole status in the host's order (errors as
// host.ErrorJSON: their text and kind), and its tools in its order, each
// with its server and the server's own name for it — in one answer, so
// that the servers and the tools are of one moment.

import (
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/toolscan"
)

// stateJSON is what GET /api/v1/state answers.
type stateJSON struct {
	ToolNameFormat string            `json:"tool_name_format"`
	Servers        []statusJSON      `json:"servers"`
	Tools          []daemon.ToolItem `json:"tools"`
}

// statusJSON is a host.ServerStatus.
type statusJSON struct {
	ID              string              `json:"id"`
	Description     string              `json:"description,omitempty"`
	Transport       string              `json:"transport"`
	State           host.State          `json:"state"`
	Detail          string              `json:"detail,omitempty"`
	Optional        bool                `json:"optional"`
	ServerInfo      *mcp.Implementation `json:"server_info,omitempty"`
	ProtocolVersion string              `json:"protocol_version,omitempty"`
	Instructions    string              `json:"instructions,omitempty"`
	Tools           int                 `json:"tools"`
	Skipped         []skippedJSON       `json:"skipped,omitempty"`
	Warnings        []string            `json:"warnings,omitempty"`
	Findings        []findingJSON       `json:"findings,omitempty"`
	Err             *host.ErrorJSON     `json:"error,omitempty"`
	LastError       *host.ErrorJSON     `json:"last_error,omitempty"`
	Restarts        int                 `json:"restarts"`
	LastHealthy     time.Time           `json:"last_healthy,omitzero"`
	ReadySince      time.Time           `json:"ready_since,omitzero"`
	InFlight        int                 `json:"in_flight"`
	PID             int                 `json:"pid,omitempty"`
	Isolation       string              `json:"isolation,omitempty"`
}

// findingJSON is a host.ToolFinding: a sign of poisoning in a tool's
// definition, or a prompt's, resource's or template's (the toolscan
// package), and what the host did.
type findingJSON struct {
	Kind   string `json:"kind"` // tool, prompt, resource, template
	Tool   string `json:"tool"` // its name; a resource's URI, a template's URI template
	Rule   string `json:"rule"`
	Field  string `json:"field"`
	Text   string `json:"text"`
	Action string `json:"action"`
}

func toFindingsJSON(fs []host.ToolFinding) []findingJSON {
	var out []findingJSON
	for _, f := range fs {
		kind := f.Kind
		if kind == "" {
			kind = host.FindingTool
		}
		out = append(out, findingJSON{Kind: kind, Tool: f.Tool, Rule: f.Rule, Field: f.Field, Text: f.Text, Action: f.Action})
	}
	return out
}

type skippedJSON struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

func toStatusJSON(st host.ServerStatus) statusJSON {
	j := statusJSON{ID: st.ID, Description: st.Description, Transport: string(st.Transport), State: st.State, Detail: st.Detail,
		Optional: st.Optional, ServerInfo: st.ServerInfo, ProtocolVersion: st.ProtocolVersion, Instructions: st.Instructions,
		Tools: st.Tools, Warnings: st.Warnings, Err: host.NewErrorJSON(st.Err), LastError: host.NewErrorJSON(st.LastError),
		Restarts: st.Restarts, LastHealthy: st.LastHealthy, ReadySince: st.ReadySince, InFlight: st.InFlight, PID: st.PID, Isolation: st.Isolation}
	for _, sk := range st.Skipped {
		j.Skipped = append(j.Skipped, skippedJSON{Tool: sk.Tool, Reason: sk.Reason})
	}
	j.Findings = toFindingsJSON(st.Findings)
	return j
}

func (j statusJSON) status() host.ServerStatus {
	st := host.ServerStatus{ID: j.ID, Description: j.Description, Transport: config.Transport(j.Transport), State: j.State, Detail: j.Detail,
		Optional: j.Optional, ServerInfo: j.ServerInfo, ProtocolVersion: j.ProtocolVersion, Instructions: j.Instructions,
		Tools: j.Tools, Warnings: j.Warnings, Err: j.Err.Err(), LastError: j.LastError.Err(), Restarts: j.Restarts,
		LastHealthy: j.LastHealthy, ReadySince: j.ReadySince, InFlight: j.InFlight, PID: j.PID, Isolation: j.Isolation}
	for _, sk := range j.Skipped {
		st.Skipped = append(st.Skipped, host.Skipped{Tool: sk.Tool, Reason: sk.Reason})
	}
	for _, f := range j.Findings {
		st.Findings = append(st.Findings, host.ToolFinding{Kind: f.Kind, Tool: f.Tool, Action: f.Action, Finding: toolscan.Finding{Rule: f.Rule, Field: f.Field, Text: f.Text}})
	}
	return st
}

// state answers the host's state, of the servers and tools the caller's
// grant covers.
func (a *API) state(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	gr := a.d.Grant(r.Context())
	out := stateJSON{ToolNameFormat: h.ToolNameFormat(), Servers: []statusJSON{}, Tools: []daemon.ToolItem{}}
	for _, st := range h.Servers() {
		if gr.Server(st.ID) {
			out.Servers = append(out.Servers, toStatusJSON(st))
		}
	}
	for _, t := range h.Tools() {
		if gr.Tool(t.Server, t.Name) {
			out.Tools = append(out.Tools, daemon.ToolItem(t))
		}
	}
	return a.writeJSON(w, http.StatusOK, out)
}
