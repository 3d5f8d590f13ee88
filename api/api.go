// Package api is Switchboard's management REST API, /api/v1 on the
// daemon's listener and its local socket (issue 16), and [Client], its Go
// client (what the CLI reads a running serve with): the host's state, the
// servers (list, get, add, update,
// delete, enable, disable, restart, refresh their tools, their recent
// stderr and incidents), the named
// endpoints (list, get, add, update, delete: endpoints.go), the tools (list,
// filter by server, search with the BM25 index of agent discovery, get
// with schema, call), and one Server-Sent Events stream of the host's
// events. It is a face over the daemon's operations (daemon/servers.go)
// and its host; the daemon mounts it with Daemon.HandleAdmin, behind the
// listener's one guard: Host, Origin, and the owner's credential
// ([gateway] auth_token, or the session cookie of the web UI's login), or
// an OAuth access token with [gateway.auth] admin_scope.
//
// What a caller sees is its grant (Daemon.Grant): everything for the
// owner; for an OAuth token, the servers, tools, resources and prompts
// [[gateway.auth.policy]] grants it, as on /mcp. The lists leave the rest
// out, and a request that names a server or tool outside the grant is
// answered as one for a server or tool that does not exist (404), so a
// token cannot tell a hidden one from a missing one; the same for the
// server events of /events and the calls of /usage. Workflows, runs and
// agents are shown whole: an administrator may start them, and they call
// whatever their definitions name.
//
// Conventions: JSON in and out; errors as RFC 9457 problem details
// (application/problem+json) with the field at fault in "errors"; lists
// paginated by an opaque cursor (?limit=, ?cursor=; "next_cursor" in the
// answer); a run-time server's or endpoint's version as its ETag, If-Match honoured on
// PUT and DELETE (412 when stale); bodies bounded by MaxBodyBytes, and
// sent as application/json (PATCH: application/merge-patch+json too),
// else 415.
//
// CSRF: every request that changes state (POST, PUT, PATCH, DELETE) must
// carry the header "Switchboard-CSRF: 1", and a browser must not mark it
// cross-site: the guard's one cross-origin check (guard/crossorigin.go),
// whose refusals the API renders (Refuse).
//
// No answer holds a secret's value: every body passes through the host's
// redactor, and run-time servers are stored with placeholders only.
package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboardmcp/switchboard/agent"
	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/internal/strictjson"
	"github.com/switchboardmcp/switchboard/registry"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1/"

// CSRFHeader must be on every state-changing request, with value "1"
// (the guard's cross-origin check).
const CSRFHeader = daemon.CSRFHeader

// DefaultMaxBodyBytes bounds a request body: a server entry or a tool's
// arguments. A larger body is refused with 413, unread.
const DefaultMaxBodyBytes = 1 << 20

// Options configures [New]. Nil means defaults.
type Options struct {
	MaxBodyBytes int64
	Logger       *slog.Logger
	// Registries are the MCP registries GET /registry/search reads and a
	// POST /servers body with "registry" adds from, in order; none: those
	// routes answer 404.
	Registries []registry.Named
	// ContainerRuntime is "docker" or "podman", the one found on PATH, for
	// a registry entry that is an OCI image; "": such an entry is refused.
	ContainerRuntime string
}

// API serves /api/v1 for a daemon.
type API struct {
	d    *daemon.Daemon
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
}

// New returns the API of d, to mount at [Prefix] with d.Handle before
// d.Run.
func New(d *daemon.Daemon, opts *Options) *API {
	a := &API{d: d, mux: http.NewServeMux()}
	if opts != nil {
		a.opts = *opts
	}
	if a.opts.MaxBodyBytes <= 0 {
		a.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	a.log = a.opts.Logger
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	p := strings.TrimSuffix(Prefix, "/")
	a.handle("GET "+p+"/openapi.json", a.openapi)
	a.handle("GET "+p+"/state", a.state)
	a.handle("GET "+p+"/servers", a.listServers)
	a.handle("POST "+p+"/servers", a.addServer)
	a.handle("GET "+p+"/servers/{id}", a.getServer)
	a.handle("PUT "+p+"/servers/{id}", a.updateServer)
	a.handle("PATCH "+p+"/servers/{id}", a.patchServer)
	a.handle("DELETE "+p+"/servers/{id}", a.deleteServer)
	a.handle("POST "+p+"/servers/{id}/enable", a.enable(true))
	a.handle("POST "+p+"/servers/{id}/disable", a.enable(false))
	a.handle("POST "+p+"/servers/{id}/restart", a.restart)
	a.handle("POST "+p+"/servers/{id}/refresh", a.refresh)
	a.handle("GET "+p+"/servers/{id}/history", a.serverHistory)
	a.handle("GET "+p+"/registry/search", a.searchRegistry)
	a.handle("GET "+p+"/registry/entry", a.getRegistryEntry)
	a.handle("GET "+p+"/endpoints", a.listEndpoints)
	a.handle("POST "+p+"/endpoints", a.addEndpoint)
	a.handle("GET "+p+"/endpoints/{name}", a.getEndpoint)
	a.handle("PUT "+p+"/endpoints/{name}", a.updateEndpoint)
	a.handle("DELETE "+p+"/endpoints/{name}", a.deleteEndpoint)
	a.handle("GET "+p+"/tools", a.listTools)
	a.handle("GET "+p+"/tools/{name}", a.getTool)
	a.handle("POST "+p+"/tools/{name}/call", a.callTool)
	a.handle("GET "+p+"/tool-changes", a.listToolChanges)
	a.handle("POST "+p+"/tool-changes/approve", a.approveTool)
	a.handle("GET "+p+"/tool-pins", a.exportPins)
	a.handle("POST "+p+"/tool-pins", a.importPins)
	a.handle("GET "+p+"/resources", a.listResources)
	a.handle("GET "+p+"/resources/templates", a.listTemplates)
	a.handle("POST "+p+"/resources/read", a.readResource)
	a.handle("GET "+p+"/prompts", a.listPrompts)
	a.handle("POST "+p+"/prompts/get", a.getPrompt)
	a.handle("GET "+p+"/events", a.events)
	a.handle("GET "+p+"/agents", a.listAgents)
	a.handle("POST "+p+"/agents/{id}/runs", a.startAgent)
	a.handle("GET "+p+"/agent-runs", a.listAgentRuns)
	a.handle("GET "+p+"/agent-runs/{id}", a.getAgentRun)
	a.handle("GET "+p+"/agent-runs/{id}/events", a.agentRunEvents)
	a.handle("POST "+p+"/agent-runs/{id}/cancel", a.cancelAgentRun)
	a.handle("GET "+p+"/workflows", a.listWorkflows)
	a.handle("GET "+p+"/workflows/{id}", a.getWorkflow)
	a.handle("POST "+p+"/workflows/{id}/runs", a.startRun)
	a.handle("GET "+p+"/runs", a.listRuns)
	a.handle("GET "+p+"/runs/{id}", a.getRun)
	a.handle("GET "+p+"/runs/{id}/events", a.runEvents)
	a.handle("POST "+p+"/runs/{id}/answer", a.answerGate)
	a.handle("POST "+p+"/runs/{id}/resolve", a.resolveStep)
	a.handle("POST "+p+"/runs/{id}/cancel", a.runAction(http.StatusOK, cancelRun))
	a.handle("POST "+p+"/runs/{id}/resume", a.runAction(http.StatusAccepted, resumeRun))
	a.handle("GET "+p+"/tasks", a.listTasks)
	a.handle("GET "+p+"/tasks/{id}", a.getTask)
	a.handle("POST "+p+"/tasks/{id}/cancel", a.cancelTask)
	a.handle("GET "+p+"/usage", a.usage)
	a.handle(p+"/", func(w http.ResponseWriter, r *http.Request) error {
		return &problem{Status: http.StatusNotFound, Title: "no such endpoint", Detail: r.Method + " " + r.URL.Path}
	})
	return a
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if p := mediaTypeProblem(w, r); p != nil {
			a.writeProblem(w, p)
			return
		}
	}
	a.mux.ServeHTTP(w, r)
}

// mediaTypeProblem refuses a body that is not said to be JSON: a body is
// read as JSON only when its Content-Type says so (application/json; for
// PATCH, also application/merge-patch+json), never sniffed, so a form a
// page posts (text/plain, application/x-www-form-urlencoded) is never
// taken for an entry. A request without a body needs none.
func mediaTypeProblem(w http.ResponseWriter, r *http.Request) *problem {
	if r.ContentLength == 0 || r.Method == http.MethodDelete {
		return nil
	}
	if r.ContentLength < 0 {
		// Length unknown (chunked): a body is there if a byte is.
		var b [1]byte
		n, _ := io.ReadFull(r.Body, b[:])
		if n == 0 {
			return nil
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b[:n]), r.Body), r.Body}
	}
	want := []string{"application/json"}
	if r.Method == http.MethodPatch {
		want = []string{"application/merge-patch+json", "application/json"}
		w.Header().Set("Accept-Patch", strings.Join(want, ", "))
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && slices.Contains(want, mt) {
		return nil
	}
	got := "none"
	if ct != "" {
		got = strconv.Quote(ct)
	}
	detail := fmt.Sprintf("a %s body must be sent with the header Content-Type: %s (got %s)", r.Method, strings.Join(want, " or "), got)
	return &problem{Status: http.StatusUnsupportedMediaType, Title: "unsupported media type", Detail: detail,
		Errors: []fieldError{{Field: "Content-Type", Detail: "want " + strings.Join(want, " or ")}}}
}

// Refuse renders a refusal of the guard in front of the API
// (guard.Refuser) as a problem document naming the header at fault.
func (a *API) Refuse(w http.ResponseWriter, r *http.Request, rf daemon.Refusal) {
	detail := rf.Msg
	switch rf.Header {
	case "Origin":
		detail = "a page of another origin may not use this API ([gateway] allowed_origins)"
	case "Host":
		detail = "the Host is not this listener's (DNS rebinding protection)"
	}
	title := strings.ToLower(http.StatusText(rf.Status))
	detail = strings.TrimPrefix(detail, title+": ")
	a.writeProblem(w, &problem{Status: rf.Status, Title: title, Detail: detail, Errors: []fieldError{{Field: rf.Header, Detail: rf.Msg}}})
}

// handle registers a handler that returns an error, rendered in one place.
func (a *API) handle(pattern string, f func(http.ResponseWriter, *http.Request) error) {
	a.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := f(w, r); err != nil {
			p := a.problemOf(err)
			if !errors.As(err, new(*problem)) {
				p.Cause = causeOf(err)
			}
			a.writeProblem(w, p)
		}
	})
}

// --- servers

// serverJSON is a server as the API shows it.
type serverJSON struct {
	ID          string          `json:"id"`
	Origin      string          `json:"origin"`
	Enabled     bool            `json:"enabled"`
	Version     int64           `json:"version,omitempty"`
	Source      string          `json:"source,omitempty"`
	Config      json.RawMessage `json:"config,omitempty"`
	Transport   string          `json:"transport,omitempty"`
	Description string          `json:"description,omitempty"`
	State       string          `json:"state"`
	Detail      string          `json:"detail,omitempty"`
	Tools       int             `json:"tools"`
	Error       string          `json:"error,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	Restarts    int             `json:"restarts"`
	ReadySince  *time.Time      `json:"ready_since,omitempty"`
	UptimeMS    int64           `json:"uptime_ms,omitempty"`
	Warnings    []string        `json:"warnings,omitempty"`
	Findings    []findingJSON   `json:"findings,omitempty"`
}

func toServerJSON(m daemon.ManagedServer) serverJSON {
	s := serverJSON{ID: m.ID, Origin: m.Origin, Enabled: m.Enabled, Version: m.Version, Source: m.Source, Config: m.Config, State: "disabled"}
	if st := m.Status; st != nil {
		s.Transport, s.Description, s.State, s.Detail = string(st.Transport), st.Description, string(st.State), st.Detail
		s.Tools, s.Restarts, s.Warnings = st.Tools, st.Restarts, st.Warnings
		s.Findings = toFindingsJSON(st.Findings)
		if st.Err != nil {
			s.Error = st.Err.Error()
		}
		if st.LastError != nil {
			s.LastError = st.LastError.Error()
		}
		if !st.ReadySince.IsZero() {
			t := st.ReadySince.UTC()
			s.ReadySince = &t
			s.UptimeMS = time.Since(t).Milliseconds()
		}
	}
	return s
}

func (a *API) listServers(w http.ResponseWriter, r *http.Request) error {
	all, err := a.d.ListServers(r.Context())
	if err != nil {
		return err
	}
	gr := a.d.Grant(r.Context())
	items := make([]serverJSON, 0, len(all))
	for _, m := range all {
		if gr.Server(m.ID) {
			items = append(items, toServerJSON(m))
		}
	}
	return pageOf(a, w, r, items, func(s serverJSON) string { return s.ID })
}

func (a *API) getServer(w http.ResponseWriter, r *http.Request) error {
	if err := a.granted(r, r.PathValue("id")); err != nil {
		return err
	}
	m, err := a.d.GetServer(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return a.writeServer(w, http.StatusOK, m)
}

func (a *API) writeServer(w http.ResponseWriter, status int, m daemon.ManagedServer) error {
	if m.Version > 0 {
		w.Header().Set("ETag", etag(m.Version))
	}
	return a.writeJSON(w, status, toServerJSON(m))
}

func (a *API) addServer(w http.ResponseWriter, r *http.Request) error {
	body, err := a.body(w, r)
	if err != nil {
		return err
	}
	// {"id": …, "registry": {"name": …}}: the registry's entry, converted.
	if body, err = a.registryBody(r.Context(), body); err != nil {
		return err
	}
	var head struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "the body is not a JSON object", Detail: err.Error()}
	}
	if head.ID == nil || *head.ID == "" {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid server", Errors: []fieldError{{Field: "id", Detail: "required"}}}
	}
	if !a.d.Grant(r.Context()).Server(*head.ID) {
		// Refused on the id alone, whether a server has it or not: the
		// caller could neither see nor manage what it added.
		return &problem{Status: http.StatusForbidden, Title: "outside your grant",
			Detail: fmt.Sprintf("server %q is not among those your token's rules grant ([[gateway.auth.policy]] servers)", *head.ID),
			Errors: []fieldError{{Field: "id", Detail: "not granted"}}}
	}
	m, err := a.d.AddServer(r.Context(), *head.ID, body)
	if err != nil {
		return err
	}
	w.Header().Set("Location", Prefix+"servers/"+m.ID)
	return a.writeServer(w, http.StatusCreated, m)
}

func (a *API) updateServer(w http.ResponseWriter, r *http.Request) error {
	if err := a.granted(r, r.PathValue("id")); err != nil {
		return err
	}
	v, err := ifMatch(r)
	if err != nil {
		return err
	}
	body, err := a.body(w, r)
	if err != nil {
		return err
	}
	m, err := a.d.UpdateServer(r.Context(), r.PathValue("id"), body, v)
	if err != nil {
		return err
	}
	return a.writeServer(w, http.StatusOK, m)
}

// patchServer applies a JSON merge patch (RFC 7396) to a run-time
// server's stored entry: a member set replaces, null removes, an object
// merges. The result is validated as a whole entry, as PUT's body is. The
// entry is read and written at one version (If-Match's, else the one
// read), so a change made meanwhile is a 412, never lost.
func (a *API) patchServer(w http.ResponseWriter, r *http.Request) error {
	if err := a.granted(r, r.PathValue("id")); err != nil {
		return err
	}
	v, err := ifMatch(r)
	if err != nil {
		return err
	}
	body, err := a.body(w, r)
	if err != nil {
		return err
	}
	var patch any
	if err := json.Unmarshal(body, &patch); err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "the body is not JSON", Detail: err.Error()}
	}
	if _, ok := patch.(map[string]any); !ok {
		return &problem{Status: http.StatusBadRequest, Title: "the patch is not a JSON object", Detail: "a merge patch of a server entry is an object of the fields to change"}
	}
	id := r.PathValue("id")
	m, err := a.d.GetServer(r.Context(), id)
	if err != nil {
		return err
	}
	if m.Origin != daemon.OriginRuntime {
		return fmt.Errorf("server %q (%s): %w", id, m.Origin, daemon.ErrReadOnly)
	}
	if v != 0 && v != m.Version {
		return fmt.Errorf("server %q: version %d, not %d: %w", id, m.Version, v, store.ErrConflict)
	}
	var cur any
	if err := json.Unmarshal(m.Config, &cur); err != nil {
		return err
	}
	merged := mergePatch(cur, patch).(map[string]any)
	if pid, ok := merged["id"]; ok && pid != id {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid patch", Errors: []fieldError{{Field: "id", Detail: "a server's id cannot change"}}}
	}
	merged["id"] = id
	entry, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	m, err = a.d.UpdateServer(r.Context(), id, entry, m.Version)
	if err != nil {
		return err
	}
	return a.writeServer(w, http.StatusOK, m)
}

// mergePatch applies patch to target as RFC 7396 says.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}

func (a *API) deleteServer(w http.ResponseWriter, r *http.Request) error {
	if err := a.granted(r, r.PathValue("id")); err != nil {
		return err
	}
	v, err := ifMatch(r)
	if err != nil {
		return err
	}
	if err := a.d.DeleteServer(r.Context(), r.PathValue("id"), v); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) enable(on bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := a.granted(r, r.PathValue("id")); err != nil {
			return err
		}
		v, err := ifMatch(r)
		if err != nil {
			return err
		}
		m, err := a.d.SetServerEnabled(r.Context(), r.PathValue("id"), on, v)
		if err != nil {
			return err
		}
		return a.writeServer(w, http.StatusOK, m)
	}
}

func (a *API) restart(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.granted(r, id); err != nil {
		return err
	}
	if err := a.d.RestartServer(r.Context(), id); err != nil {
		return err
	}
	m, err := a.d.GetServer(r.Context(), id)
	if err != nil {
		return err
	}
	return a.writeServer(w, http.StatusAccepted, m)
}

func (a *API) refresh(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.granted(r, id); err != nil {
		return err
	}
	if err := a.d.RefreshServerTools(r.Context(), id); err != nil {
		return err
	}
	m, err := a.d.GetServer(r.Context(), id)
	if err != nil {
		return err
	}
	return a.writeServer(w, http.StatusOK, m)
}

// serverHistory answers a server's recent stderr lines and incidents.
func (a *API) serverHistory(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.granted(r, id); err != nil {
		return err
	}
	hs, err := a.d.ServerHistory(r.Context(), id)
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, hs)
}

// granted answers a server outside the caller's grant as one that does
// not exist: a token cannot tell a hidden server from a missing one.
func (a *API) granted(r *http.Request, id string) error {
	if a.d.Grant(r.Context()).Server(id) {
		return nil
	}
	return hiddenServer(id)
}

// hiddenServer is the error for a server the caller may not know of:
// the daemon's own for an unknown id, without the host's list of the
// servers there are.
func hiddenServer(id string) error { return fmt.Errorf("server %q: %w", id, host.ErrUnknownServer) }

// knownServer checks that h has a server id the caller may see. The
// host's error for an unknown one lists every server: only the owner's
// caller gets it.
func (a *API) knownServer(r *http.Request, h *host.Host, id string) error {
	gr := a.d.Grant(r.Context())
	if !gr.Server(id) {
		return hiddenServer(id)
	}
	if _, err := h.Status(id); err != nil {
		if !gr.All() && errors.Is(err, host.ErrUnknownServer) {
			return hiddenServer(id)
		}
		return err
	}
	return nil
}

func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

// ifMatch returns the version an If-Match header names; 0 without one.
func ifMatch(r *http.Request) (int64, error) {
	h := r.Header.Get("If-Match")
	if h == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
	if err != nil || v <= 0 {
		return 0, &problem{Status: http.StatusBadRequest, Title: "bad If-Match", Detail: "If-Match must be an ETag this API gave, such as \"3\"",
			Errors: []fieldError{{Field: "If-Match", Detail: "not a version"}}}
	}
	return v, nil
}

// --- tools

func (a *API) host() (*host.Host, error) {
	h := a.d.Host()
	if h == nil {
		return nil, daemon.ErrNotRunning
	}
	return h, nil
}

func (a *API) listTools(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	srv := r.URL.Query().Get("server")
	if srv != "" {
		if err := a.knownServer(r, h, srv); err != nil {
			return err
		}
	}
	gr := a.d.Grant(r.Context())
	tools := slices.DeleteFunc(h.Tools(), func(t host.Tool) bool {
		return (srv != "" && t.Server != srv) || !gr.Tool(t.Server, t.Name)
	})
	if q := r.URL.Query().Get("q"); q != "" {
		tools = agent.SearchTools(q, tools)
	}
	items := make([]daemon.ToolItem, len(tools))
	for i, t := range tools {
		items[i] = daemon.ToolItem{Name: t.Name, Server: t.Server, Tool: t.Tool}
	}
	return pageOf(a, w, r, items, func(t daemon.ToolItem) string { return t.Name })
}

func (a *API) getTool(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	t, ok := h.Tool(r.PathValue("name"))
	if !ok || !a.d.Grant(r.Context()).Tool(t.Server, t.Name) {
		return daemon.KindUnknownTool.Errorf("no tool %q", r.PathValue("name"))
	}
	return a.writeJSON(w, http.StatusOK, daemon.ToolItem{Name: t.Name, Server: t.Server, Tool: t.Tool})
}

// callJSON is a call's body.
type callJSON struct {
	Arguments json.RawMessage `json:"arguments"`
}

func (a *API) callTool(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	var c callJSON
	if err := a.decode(w, r, &c); err != nil {
		return err
	}
	if len(c.Arguments) == 0 {
		c.Arguments = json.RawMessage(`{}`)
	}
	name := r.PathValue("name")
	if t, ok := h.Tool(name); !ok || !a.d.Grant(r.Context()).Tool(t.Server, t.Name) {
		if server, _, _, held := h.HeldTool(name); held && a.d.Grant(r.Context()).Tool(server, name) {
			_, err := h.CallTool(r.Context(), name, c.Arguments, nil) // refused, naming the change
			return err
		}
		return daemon.KindUnknownTool.Errorf("no tool %q", name)
	}
	res, err := h.CallTool(r.Context(), name, c.Arguments, nil)
	if err != nil {
		return err
	}
	// The result as the server gave it (content of every kind,
	// structuredContent, _meta, isError): the go-sdk's own encoding.
	return a.writeJSON(w, http.StatusOK, res)
}

// fieldOf names the field an unknown-field error is about.
func fieldOf(err error) string {
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return strings.Trim(f, `"`)
	}
	return ""
}

// --- events

// events streams the host's events as Server-Sent Events until the client
// goes away or the host closes: server:state (the server's status),
// server:removed, catalog:changed and events:dropped (refetch then); and,
// when the daemon runs workflows, every run's events as they are stored
// (run:started, step:completed, gate:waiting, …; daemon.FollowRuns:
// this process's runs from the engine's hook, other processes' by a poll),
// and events:dropped with "runs": true when this stream fell too far
// behind them.
func (a *API) events(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	wt := h.Watch(0)
	defer wt.Close()
	gr := a.d.Grant(r.Context())
	s := a.startSSE(w)
	// Followers beside the host's events, each on a goroutine of its own
	// that ends before the answer does.
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(r.Context())
	defer wg.Wait()
	defer cancel()
	dropped := func(n int, what string) error {
		return s.send(string(host.EventDropped), "", map[string]any{"type": host.EventDropped, "time": time.Now().UTC(), "dropped": n, what: true})
	}
	if wfs := a.d.Workflows(); wfs != nil {
		wg.Go(func() {
			wfs.FollowRuns(ctx, func(ev workflow.Event) error { return s.send(string(ev.Type), "", ev) },
				func(n int) error { return dropped(n, "runs") })
		})
	}
	// Agent runs' events, each an agent-run event whose type says which
	// (an agent's run:started is not a workflow's).
	wg.Go(func() {
		a.d.FollowAgentRuns(ctx, func(ev daemon.AgentRunEvent) error { return s.send("agent-run", "", ev) },
			func(n int) error { return dropped(n, "agent_runs") })
	})
	for ev := range wt.Events(r.Context()) {
		if ev.Server != "" && !gr.Server(ev.Server) {
			continue
		}
		var data any
		switch ev.Kind {
		case host.EventState:
			data = ev.Status.Event()
		case host.EventCatalog:
			data = map[string]any{"type": ev.Kind, "time": ev.Time, "server": ev.Server, "change": ev.Change}
		case host.EventRemoved:
			data = map[string]any{"type": ev.Kind, "time": ev.Time, "server": ev.Server}
		case host.EventToolHeld:
			data = map[string]any{"type": ev.Kind, "time": ev.Time, "server": ev.Server, "tool": ev.Tool, "reason": ev.Held}
		case host.EventDropped:
			data = map[string]any{"type": ev.Kind, "time": ev.Time, "dropped": ev.Dropped}
		default:
			continue
		}
		if err := s.send(string(ev.Kind), "", data); err != nil {
			return nil
		}
	}
	return nil
}

// sse is a Server-Sent Events stream being answered; its send may be
// called from several goroutines.
type sse struct {
	a  *API
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE answers 200 with an event stream, its headers sent at once.
func (a *API) startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	s := &sse{a: a, w: w, rc: http.NewResponseController(w)}
	// A first comment flushes the headers: the client knows it is
	// subscribed.
	io.WriteString(w, ": subscribed\n\n")
	s.rc.Flush()
	return s
}

// send writes one event (with an id unless id is ""), its data v as JSON,
// redacted.
func (s *sse) send(event, id string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if h := s.a.d.Host(); h != nil {
		b = []byte(h.Redactor().Redact(string(b)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != "" {
		if _, err := fmt.Fprintf(s.w, "id: %s\n", id); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// --- plumbing

// body reads a request body, bounded, and refuses one that repeats a
// member name in an object or holds bytes that are not UTF-8: the first
// would be read one way by a check and another by what stores it (Go
// keeps the last of two "command" members), the second changed without a
// word (to U+FFFD). Every body of the API is read here.
func (a *API) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opts.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		w.Header().Set("Connection", "close")
		return nil, &problem{Status: http.StatusRequestEntityTooLarge, Title: "body too large",
			Detail: fmt.Sprintf("the body is over %d bytes", a.opts.MaxBodyBytes)}
	}
	if err != nil {
		return nil, &problem{Status: http.StatusBadRequest, Title: "could not read the body", Detail: err.Error()}
	}
	var se *strictjson.Error
	if errors.As(strictjson.Check(b), &se) {
		title := "the body repeats a member name (RFC 8259 §4: names must be unique to mean one thing)"
		if se.Err == strictjson.ErrInvalidUTF8 {
			title = "the body is not UTF-8 (RFC 8259 §8.1)"
		}
		return nil, &problem{Status: http.StatusBadRequest, Title: title, Detail: se.Error(),
			Errors: []fieldError{{Field: se.Field, Detail: se.Error()}}}
	}
	return b, nil
}

// decode reads a request body, bounded, into v: one JSON object with no
// field v does not have.
func (a *API) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := a.body(w, r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "bad request body", Detail: err.Error(), Errors: []fieldError{{Field: fieldOf(err), Detail: err.Error()}}}
	}
	if dec.More() {
		return &problem{Status: http.StatusBadRequest, Title: "bad request body", Detail: "more than one JSON value"}
	}
	return nil
}

// page is a list's answer.
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// DefaultLimit and MaxLimit bound a page.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// pageOf answers one page of items: those after the cursor's key (an
// opaque encoding of the last key sent), at most ?limit.
func pageOf[T any](a *API, w http.ResponseWriter, r *http.Request, items []T, key func(T) string) error {
	p, err := pageFor(r, items, key)
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, p)
}

// pageFor is the page of items r asks for.
func pageFor[T any](r *http.Request, items []T, key func(T) string) (page[T], error) {
	q := r.URL.Query()
	limit := DefaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return page[T]{}, &problem{Status: http.StatusBadRequest, Title: "bad limit",
				Errors: []fieldError{{Field: "limit", Detail: fmt.Sprintf("must be a number from 1 to %d", MaxLimit)}}}
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		last, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil {
			return page[T]{}, &problem{Status: http.StatusBadRequest, Title: "bad cursor", Errors: []fieldError{{Field: "cursor", Detail: "not a cursor this API gave"}}}
		}
		start = len(items) // the item is gone: nothing after it can be told
		for i, it := range items {
			if key(it) == string(last) {
				start = i + 1
				break
			}
		}
	}
	end := min(start+limit, len(items))
	p := page[T]{Items: items[start:end]}
	if p.Items == nil {
		p.Items = []T{}
	}
	if end < len(items) {
		p.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1])))
	}
	return p, nil
}

// writeJSON answers v as JSON, redacted: no secret the host resolved
// reaches a client, whatever put it in v.
func (a *API) writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if h := a.d.Host(); h != nil {
		b = []byte(h.Redactor().Redact(string(b)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

// problem is an RFC 9457 problem details document.
type problem struct {
	Type   string       `json:"type,omitempty"`
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Errors []fieldError `json:"errors,omitempty"`
	// RPC is the JSON-RPC error a server answered with, when it did.
	RPC *jsonrpc.Error `json:"rpc,omitempty"`
	// Cause is the error of the operation, when one failed: its text and
	// kind, for a client to say and branch on as in process (Client).
	Cause *host.ErrorJSON `json:"cause,omitempty"`
}

// fieldError is one problem with one field of the request.
type fieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

func (p *problem) Error() string { return p.Title + ": " + p.Detail }

// problemOf maps an operation's error to a problem document: its kind's
// type, title and status (daemon.KindOf, daemon.StatusOf, as the web UI
// and the CLI), the field its kind names, the fields of an entry's
// problems, a server's JSON-RPC error.
func (a *API) problemOf(err error) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	k := daemon.KindOf(err)
	p = &problem{Type: k.Type(), Title: k.Title(), Status: daemon.StatusOf(err), Detail: err.Error()}
	if f := k.Field(); f != "" {
		p.Errors = []fieldError{{Field: f, Detail: err.Error()}}
	}
	var cp *config.Problem
	switch {
	case k == daemon.KindConfig:
		p.Detail = "the entry is not a valid [[mcp_servers]] entry"
		for _, e := range unjoin(err) {
			if errors.As(e, &cp) {
				p.Errors = append(p.Errors, fieldError{Field: cp.Field, Detail: cp.Msg})
			} else {
				p.Errors = append(p.Errors, fieldError{Detail: e.Error()})
			}
		}
	case k == daemon.KindServerError:
		errors.As(err, &p.RPC)
	case k == daemon.KindFailed:
		a.log.Error("api: unexpected error", "err", err)
	}
	return p
}

func (a *API) writeProblem(w http.ResponseWriter, p *problem) {
	b, _ := json.Marshal(p)
	if h := a.d.Host(); h != nil {
		b = []byte(h.Redactor().Redact(string(b)))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	w.Write(append(b, '\n'))
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
