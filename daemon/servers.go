package daemon

// Managing the servers of a running daemon: what the REST API and the web
// UI do (issue 16). Each operation changes the state store and the running
// host together, under one lock, so that they agree: a server added is
// stored and starts at once; one deleted or disabled is stopped, its tools
// withdrawn; one updated is restarted with its new configuration in its
// place. The host tells its watchers, so MCP clients of the gateway get
// list_changed and the faces' event streams see the states change.
//
// Servers from configuration files are read-only here: they are the
// files' (edit the file, or `switchboard add`), and a server added at run
// time cannot take their ids. They can be restarted and their tools
// refreshed. Built-in (in-process) servers, such as the workflows' tools,
// can be neither changed nor restarted.
//
// A server added or updated is validated as a config entry is
// (config.DecodeServer: the same fields, types and rules; the URL floor
// and [network] policy through Config.CheckServerURL), and a value that
// looks like a credential written out (config.Literals) is refused: only
// {{secrets.NAME}} and {{env.NAME}} placeholders are stored, and they are
// resolved at each connect, as for a configured server. Every problem is a
// *config.Problem whose Field is relative to the entry ("url",
// "env.API_KEY", "timeout"), joined with errors.Join.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
)

// Sentinel errors of the server operations, for errors.Is.
var (
	// ErrReadOnly: the server is declared in a configuration file (or is
	// built in): it cannot be changed, deleted, enabled or disabled here.
	ErrReadOnly = errors.New("read-only")
	// ErrNotRunning: the daemon has no host yet (before Run) or any more.
	ErrNotRunning = errors.New("the daemon is not running")
	// ErrDisabled: the server is disabled; enable it first.
	ErrDisabled = errors.New("disabled")
)

// Where a managed server comes from (ManagedServer.Origin).
const (
	OriginConfig  = "config"  // a configuration file: read-only here
	OriginRuntime = "runtime" // added at run time, kept in the state store
	OriginBuiltin = "builtin" // in the program (workflow tools)
)

// ManagedServer is a server as the management faces show it.
type ManagedServer struct {
	ID     string
	Origin string // OriginConfig, OriginRuntime or OriginBuiltin
	// Enabled: started. A disabled run-time server is kept in the store,
	// not started; Status is nil.
	Enabled bool
	// Version is the stored version, the HTTP ETag of a run-time server;
	// 0 for the others, which cannot be changed here.
	Version int64
	// Config is a run-time server's entry as stored (an [[mcp_servers]]
	// table as JSON, without its id; secrets only as placeholders); nil
	// for the others, whose files may hold what no face should show.
	Config json.RawMessage
	// Source is where a configured server is declared ("switchboard.toml:12").
	Source string
	// Created and Updated are a run-time server's, from the store.
	Created, Updated time.Time
	// Status is the host's view of the server; nil when it is not in the
	// host (disabled).
	Status *host.ServerStatus
}

// ListServers returns every server: the host's (configured, run-time and
// built-in, in the host's order) then the disabled run-time ones.
func (d *Daemon) ListServers(ctx context.Context) ([]ManagedServer, error) {
	h := d.Host()
	if h == nil {
		return nil, ErrNotRunning
	}
	recs, err := d.store.Servers(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]store.ServerRecord{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	var out []ManagedServer
	seen := map[string]bool{}
	for _, st := range h.Servers() {
		seen[st.ID] = true
		out = append(out, d.managed(st.ID, &st, byID))
	}
	for _, r := range recs {
		if !seen[r.ID] {
			out = append(out, d.managed(r.ID, nil, byID))
		}
	}
	return out, nil
}

// GetServer returns one server; an error wrapping host.ErrUnknownServer
// when there is none.
func (d *Daemon) GetServer(ctx context.Context, id string) (ManagedServer, error) {
	h := d.Host()
	if h == nil {
		return ManagedServer{}, ErrNotRunning
	}
	var st *host.ServerStatus
	for _, s := range h.Servers() {
		if s.ID == id {
			st = &s
			break
		}
	}
	rec, err := d.store.Server(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if st == nil {
			return ManagedServer{}, fmt.Errorf("server %q: %w", id, host.ErrUnknownServer)
		}
		return d.managed(id, st, nil), nil
	case err != nil:
		return ManagedServer{}, err
	}
	return d.managed(id, st, map[string]store.ServerRecord{id: rec}), nil
}

// managed describes server id from its status (nil: not in the host) and
// the stored records.
func (d *Daemon) managed(id string, st *host.ServerStatus, recs map[string]store.ServerRecord) ManagedServer {
	m := ManagedServer{ID: id, Status: st, Enabled: st != nil}
	if cs, ok := d.opts.Config.Server(id); ok {
		m.Origin = OriginConfig
		if cs.Source.File != "" {
			m.Source = cs.Source.String()
		}
		return m
	}
	if st != nil && st.Transport == host.TransportInProcess {
		m.Origin = OriginBuiltin
		return m
	}
	m.Origin = OriginRuntime
	if r, ok := recs[id]; ok {
		m.Enabled, m.Version, m.Created, m.Updated = r.Enabled, r.Version, r.Created, r.Updated
		if json.Valid(r.Config) {
			m.Config = stripID(r.Config) // a row that is not JSON shows none: its error says why
		}
		if err := d.brokenErr(id); st == nil && r.Enabled && err != nil {
			// Not in the host: what it would say of a server that
			// failed to start.
			m.Status = &host.ServerStatus{ID: id, State: host.StateFailed, Err: err, Optional: true}
		}
	}
	return m
}

// AddServer validates entry (an [[mcp_servers]] table as JSON; its id, if
// it has one, must be id), stores it enabled and starts it at once. It
// returns the server as stored; its state comes with the host's events.
// Errors: the entry's problems (*config.Problem, joined); store.ErrExists
// (wrapped) when the id is taken, by a configured server too.
func (d *Daemon) AddServer(ctx context.Context, id string, entry json.RawMessage) (ManagedServer, error) {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	h := d.Host()
	if h == nil {
		return ManagedServer{}, ErrNotRunning
	}
	if _, ok := d.opts.Config.Server(id); ok {
		return ManagedServer{}, fmt.Errorf("server %q: %w: a configuration file declares it", id, store.ErrExists)
	}
	if _, err := h.Status(id); err == nil {
		// A built-in server's id.
		return ManagedServer{}, fmt.Errorf("server %q: %w", id, store.ErrExists)
	}
	s, raw, err := d.checkEntry(id, entry)
	if err != nil {
		return ManagedServer{}, err
	}
	rec, err := d.store.AddServer(ctx, store.ServerRecord{ID: id, Config: raw, Enabled: true})
	if err != nil {
		return ManagedServer{}, err
	}
	if err := h.AddServer(s); err != nil {
		// The host refused (closed meanwhile): the store says what runs.
		if derr := d.store.DeleteServer(context.WithoutCancel(ctx), id, rec.Version); derr != nil {
			d.log.Error("a server the host refused stays stored", "server", id, "err", derr)
		}
		return ManagedServer{}, err
	}
	d.applied[id] = rec.Version
	d.log.Info("server added", "server", id)
	d.reapplyEndpoints(ctx)
	return d.GetServer(ctx, id)
}

// UpdateServer replaces a run-time server's entry (validated as AddServer
// does) and restarts it with it, if it is enabled. ifVersion > 0 makes it
// conditional (store.ErrConflict when the stored version differs: the
// HTTP If-Match).
func (d *Daemon) UpdateServer(ctx context.Context, id string, entry json.RawMessage, ifVersion int64) (ManagedServer, error) {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	h, rec, err := d.runtimeServer(ctx, id)
	if err != nil {
		return ManagedServer{}, err
	}
	s, raw, err := d.checkEntry(id, entry)
	if err != nil {
		return ManagedServer{}, err
	}
	rec.Config = raw
	if rec, err = d.store.UpdateServer(ctx, rec, ifVersion); err != nil {
		return ManagedServer{}, err
	}
	if rec.Enabled {
		err = h.ReplaceServer(s)
		if errors.Is(err, host.ErrUnknownServer) {
			err = h.AddServer(s) // it failed to load at the start
		}
		if err != nil {
			return ManagedServer{}, err
		}
		d.applied[id] = rec.Version
	}
	d.setBroken(id, nil)
	d.log.Info("server updated", "server", id, "version", rec.Version)
	return d.GetServer(ctx, id)
}

// DeleteServer deletes a run-time server: it is stopped and its tools are
// withdrawn. ifVersion as for UpdateServer. A configured server is
// ErrReadOnly.
func (d *Daemon) DeleteServer(ctx context.Context, id string, ifVersion int64) error {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	h, _, err := d.runtimeServer(ctx, id)
	if err != nil {
		return err
	}
	if err := d.store.DeleteServer(ctx, id, ifVersion); err != nil {
		return err
	}
	delete(d.applied, id)
	d.setBroken(id, nil)
	if err := h.RemoveServer(id); err != nil && !errors.Is(err, host.ErrUnknownServer) {
		return err
	}
	d.log.Info("server deleted", "server", id)
	d.reapplyEndpoints(ctx)
	return nil
}

// SetServerEnabled enables (starts) or disables (stops, keeping it stored)
// a run-time server. ifVersion as for UpdateServer. Enabling an enabled
// server, or disabling a disabled one, changes nothing but its version.
func (d *Daemon) SetServerEnabled(ctx context.Context, id string, enabled bool, ifVersion int64) (ManagedServer, error) {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	h, rec, err := d.runtimeServer(ctx, id)
	if err != nil {
		return ManagedServer{}, err
	}
	var s config.Server
	if enabled {
		// A stored entry is checked again: the [network] policy may have
		// changed since it was stored.
		if s, _, err = d.checkEntry(id, rec.Config); err != nil {
			return ManagedServer{}, err
		}
	}
	rec.Enabled = enabled
	if rec, err = d.store.UpdateServer(ctx, rec, ifVersion); err != nil {
		return ManagedServer{}, err
	}
	_, statusErr := h.Status(id)
	running := statusErr == nil
	switch {
	case enabled && !running:
		err = h.AddServer(s)
	case !enabled && running:
		err = h.RemoveServer(id)
	}
	if err != nil {
		return ManagedServer{}, err
	}
	if enabled {
		d.applied[id] = rec.Version
	} else {
		delete(d.applied, id)
	}
	d.setBroken(id, nil)
	d.log.Info("server enabled", "server", id, "enabled", enabled)
	d.reapplyEndpoints(ctx)
	return d.GetServer(ctx, id)
}

// RestartServer stops a server and starts it again, in its place (a
// configured one too): its calls in flight fail, its child process is a
// new one. A disabled server is ErrDisabled; a built-in one ErrReadOnly.
func (d *Daemon) RestartServer(ctx context.Context, id string) error {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	h := d.Host()
	if h == nil {
		return ErrNotRunning
	}
	var s config.Server
	if cs, ok := d.configured(id); ok {
		s = cs
	} else {
		rec, err := d.store.Server(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			if _, serr := h.Status(id); serr == nil {
				return fmt.Errorf("server %q: %w: it is built in", id, ErrReadOnly)
			}
			return fmt.Errorf("server %q: %w", id, host.ErrUnknownServer)
		}
		if err != nil {
			return err
		}
		if !rec.Enabled {
			return fmt.Errorf("server %q: %w: enable it to start it", id, ErrDisabled)
		}
		if s, _, err = d.checkEntry(id, rec.Config); err != nil {
			return err
		}
	}
	if err := h.ReplaceServer(s); err != nil {
		return err
	}
	d.log.Info("server restarted", "server", id)
	return nil
}

// RefreshServerTools re-reads a ready server's tools now.
func (d *Daemon) RefreshServerTools(ctx context.Context, id string) error {
	h := d.Host()
	if h == nil {
		return ErrNotRunning
	}
	return h.RefreshTools(ctx, id)
}

// ServerHistory returns a server's recent stderr lines and incidents
// (host.History): empty for a server the host does not run now (a
// disabled one); the daemon's error for an unknown one.
func (d *Daemon) ServerHistory(ctx context.Context, id string) (host.History, error) {
	m, err := d.GetServer(ctx, id)
	if err != nil {
		return host.History{}, err
	}
	empty := host.History{Server: id, Stderr: []host.StderrLine{}, Incidents: []host.Incident{}}
	h := d.Host()
	if h == nil || m.Status == nil {
		return empty, nil
	}
	hs, err := h.History(id)
	if errors.Is(err, host.ErrUnknownServer) {
		return empty, nil // removed meanwhile
	}
	return hs, err
}

// configured returns the configured server id that the daemon serves.
func (d *Daemon) configured(id string) (config.Server, bool) {
	i := slices.IndexFunc(d.servers, func(s config.Server) bool { return s.ID == id })
	if i < 0 {
		return config.Server{}, false
	}
	if _, ok := d.opts.Config.Server(id); !ok {
		return config.Server{}, false // stored at the start: not a configured one
	}
	return d.servers[i], true
}

// runtimeServer returns the host and the stored record of a run-time
// server; ErrReadOnly for a configured or built-in one.
func (d *Daemon) runtimeServer(ctx context.Context, id string) (*host.Host, store.ServerRecord, error) {
	h := d.Host()
	if h == nil {
		return nil, store.ServerRecord{}, ErrNotRunning
	}
	if cs, ok := d.opts.Config.Server(id); ok {
		where := "a configuration file"
		if cs.Source.File != "" {
			where = cs.Source.String()
		}
		return nil, store.ServerRecord{}, fmt.Errorf("server %q: %w: it is declared in %s; edit it there", id, ErrReadOnly, where)
	}
	rec, err := d.store.Server(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, serr := h.Status(id); serr == nil {
			return nil, store.ServerRecord{}, fmt.Errorf("server %q: %w: it is built in", id, ErrReadOnly)
		}
		return nil, store.ServerRecord{}, fmt.Errorf("server %q: %w", id, host.ErrUnknownServer)
	}
	return h, rec, err
}

// checkEntry decodes and validates a server entry as a config entry is,
// and returns the server and the JSON to store (the entry without its id).
func (d *Daemon) checkEntry(id string, entry json.RawMessage) (config.Server, json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(entry, &m); err != nil || m == nil {
		msg := "must be a JSON object (an [[mcp_servers]] entry)"
		if err != nil {
			msg = "not JSON: " + err.Error()
		}
		return config.Server{}, nil, &config.Problem{Msg: msg}
	}
	if v, ok := m["id"]; ok && v != id {
		return config.Server{}, nil, &config.Problem{Field: "id", Msg: fmt.Sprintf("%v is not the server's id %q", v, id)}
	}
	delete(m, "id")
	raw, err := json.Marshal(m)
	if err != nil {
		return config.Server{}, nil, err
	}
	m["id"] = id
	s, err := config.DecodeServer("", "", m, nil)
	if err == nil {
		err = d.opts.Config.CheckServerURL(s)
	}
	var problems []error
	if err != nil {
		for _, e := range unjoin(err) {
			var p *config.Problem
			if errors.As(e, &p) {
				q := *p
				// CheckServerURL names the server by its id, the
				// validator by its place in a config of one server.
				q.Field = strings.TrimPrefix(strings.TrimPrefix(q.Field, id+"."), "mcp_servers[0].")
				problems = append(problems, &q)
			} else {
				problems = append(problems, e)
			}
		}
	}
	for _, l := range config.Literals(s) {
		problems = append(problems, &config.Problem{Field: l.Field,
			Msg: "looks like a credential written out (" + l.Why + "); store it with `switchboard secrets set NAME` and write {{secrets.NAME}} here"})
	}
	if len(problems) > 0 {
		return config.Server{}, nil, errors.Join(problems...)
	}
	return runtimeServer(s), raw, nil
}

// unjoin returns the errors err joins, or err.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// stripID returns a stored entry without an id key (stored ones have none;
// the daemon's id is the record's).
func stripID(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["id"]; !ok {
		return raw
	}
	delete(m, "id")
	out, _ := json.Marshal(m)
	return out
}
