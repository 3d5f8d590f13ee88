package daemon

// Managing the named endpoints of a running daemon (issue 26), as servers
// are managed (servers.go): what the REST API does. Each operation changes
// the state store and the gateway together, under opsMu: an endpoint
// added is stored and served at once (gateway.Gateway.SetEndpoints), one
// updated is served anew (its sessions end), one deleted stops being
// served (its paths answer 404). The other processes on a PostgreSQL
// database hear the change (store.ChangeEndpoint, follow.go) and serve
// the same list.
//
// Endpoints of configuration files are read-only here, and a stored one
// can take neither their names nor their paths. An endpoint added or
// updated is decoded and checked as an [[endpoints]] table of a file is
// (config.DecodeEndpoint, config.Config.CheckEndpoint: the same fields and
// rules; the servers it names are the configured ones and those added at
// run time), its auth_token a placeholder only, never a token written
// out, resolved when it is served, never shown. A stored endpoint that no
// longer checks (a server it names was deleted, its token no longer
// resolves) is not served, and is listed failed with why, until it is
// replaced or deleted or what it names is back.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/gateway"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// ErrUnknownEndpoint: no endpoint has the name.
var ErrUnknownEndpoint = errors.New("no such endpoint")

// ManagedEndpoint is a named endpoint as the management faces show it.
type ManagedEndpoint struct {
	Name   string
	Origin string // OriginConfig or OriginRuntime
	// Version is the stored version, the HTTP ETag of a run-time
	// endpoint; 0 for a configured one, which cannot be changed here.
	Version int64
	// Config is the endpoint as config.EndpointJSON shows it: the keys of
	// an [[endpoints]] table, its auth_token a placeholder.
	Config json.RawMessage
	// Source is where a configured endpoint is declared.
	Source string
	// Created and Updated are a run-time endpoint's, from the store.
	Created, Updated time.Time
	// Where it is served (config.Endpoint.Paths).
	Path, SSE, Message, WebSocket string
	// Err is why a run-time endpoint is not served; nil when it is.
	Err error
}

// ListEndpoints returns the configured endpoints, then the stored ones,
// oldest first.
func (d *Daemon) ListEndpoints(ctx context.Context) ([]ManagedEndpoint, error) {
	if d.Host() == nil {
		return nil, ErrNotRunning
	}
	var out []ManagedEndpoint
	for _, e := range d.opts.Config.Endpoints {
		out = append(out, configuredEndpoint(e))
	}
	recs, err := d.store.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		out = append(out, d.storedEndpoint(r))
	}
	return out, nil
}

// GetEndpoint returns one endpoint; an error wrapping ErrUnknownEndpoint
// when there is none.
func (d *Daemon) GetEndpoint(ctx context.Context, name string) (ManagedEndpoint, error) {
	if d.Host() == nil {
		return ManagedEndpoint{}, ErrNotRunning
	}
	if e, ok := d.opts.Config.Endpoint(name); ok {
		return configuredEndpoint(e), nil
	}
	r, err := d.store.Endpoint(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return ManagedEndpoint{}, fmt.Errorf("endpoint %q: %w", name, ErrUnknownEndpoint)
	}
	if err != nil {
		return ManagedEndpoint{}, err
	}
	return d.storedEndpoint(r), nil
}

func configuredEndpoint(e config.Endpoint) ManagedEndpoint {
	m := ManagedEndpoint{Name: e.Name, Origin: OriginConfig, Config: config.EndpointJSON(e)}
	if e.Source.File != "" {
		m.Source = e.Source.String()
	}
	m.Path, m.SSE, m.Message, m.WebSocket = e.Paths()
	return m
}

func (d *Daemon) storedEndpoint(r store.EndpointRecord) ManagedEndpoint {
	m := ManagedEndpoint{Name: r.Name, Origin: OriginRuntime, Version: r.Version, Created: r.Created, Updated: r.Updated}
	if e, err := config.DecodeEndpoint(r.Config); err == nil {
		m.Config = config.EndpointJSON(e)
		m.Path, m.SSE, m.Message, m.WebSocket = e.Paths()
	} else if json.Valid(r.Config) {
		m.Config = r.Config // its error says why it is not served
	}
	d.mu.Lock()
	m.Err = d.epBroken[r.Name]
	d.mu.Unlock()
	return m
}

// AddEndpoint checks entry (an [[endpoints]] table as JSON; its name, if
// it has one, must be name), stores it and serves it at once. Errors: the
// entry's problems (*config.Problem, joined); store.ErrExists (wrapped)
// when the name is taken, by a configured endpoint too.
func (d *Daemon) AddEndpoint(ctx context.Context, name string, entry json.RawMessage) (ManagedEndpoint, error) {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	if d.Host() == nil {
		return ManagedEndpoint{}, ErrNotRunning
	}
	if e, ok := d.opts.Config.Endpoint(name); ok {
		return ManagedEndpoint{}, fmt.Errorf("endpoint %q: %w: it is declared in %s", name, store.ErrExists, declaredIn(e.Source))
	}
	raw, err := d.checkEndpointEntry(ctx, name, entry)
	if err != nil {
		return ManagedEndpoint{}, err
	}
	if _, err := d.store.AddEndpoint(ctx, store.EndpointRecord{Name: name, Config: raw}); err != nil {
		return ManagedEndpoint{}, err
	}
	if err := d.applyEndpoints(ctx); err != nil {
		// The gateway refused (a path another route has): the store says
		// what is served.
		if derr := d.store.DeleteEndpoint(context.WithoutCancel(ctx), name, 0); derr != nil {
			d.log.Error("an endpoint the gateway refused stays stored", "endpoint", name, "err", derr)
		}
		if aerr := d.applyEndpoints(context.WithoutCancel(ctx)); aerr != nil {
			d.log.Error("serving the endpoints", "err", aerr)
		}
		return ManagedEndpoint{}, err
	}
	d.log.Info("endpoint added", "endpoint", name)
	return d.GetEndpoint(ctx, name)
}

// UpdateEndpoint replaces a run-time endpoint (checked as AddEndpoint
// checks it) and serves it anew: its sessions end. ifVersion > 0 makes it
// conditional (store.ErrConflict when the stored version differs: the
// HTTP If-Match). A configured endpoint is ErrReadOnly.
func (d *Daemon) UpdateEndpoint(ctx context.Context, name string, entry json.RawMessage, ifVersion int64) (ManagedEndpoint, error) {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	rec, err := d.runtimeEndpoint(ctx, name)
	if err != nil {
		return ManagedEndpoint{}, err
	}
	if rec.Config, err = d.checkEndpointEntry(ctx, name, entry); err != nil {
		return ManagedEndpoint{}, err
	}
	if _, err := d.store.UpdateEndpoint(ctx, rec, ifVersion); err != nil {
		return ManagedEndpoint{}, err
	}
	if err := d.applyEndpoints(ctx); err != nil {
		return ManagedEndpoint{}, err
	}
	d.log.Info("endpoint updated", "endpoint", name)
	return d.GetEndpoint(ctx, name)
}

// DeleteEndpoint deletes a run-time endpoint: it stops being served, its
// sessions end. ifVersion as for UpdateEndpoint.
func (d *Daemon) DeleteEndpoint(ctx context.Context, name string, ifVersion int64) error {
	d.opsMu.Lock()
	defer d.opsMu.Unlock()
	if _, err := d.runtimeEndpoint(ctx, name); err != nil {
		return err
	}
	if err := d.store.DeleteEndpoint(ctx, name, ifVersion); err != nil {
		return err
	}
	if err := d.applyEndpoints(ctx); err != nil {
		return err
	}
	d.log.Info("endpoint deleted", "endpoint", name)
	return nil
}

// runtimeEndpoint returns the stored record of a run-time endpoint;
// ErrReadOnly for a configured one.
func (d *Daemon) runtimeEndpoint(ctx context.Context, name string) (store.EndpointRecord, error) {
	if d.Host() == nil {
		return store.EndpointRecord{}, ErrNotRunning
	}
	if e, ok := d.opts.Config.Endpoint(name); ok {
		return store.EndpointRecord{}, fmt.Errorf("endpoint %q: %w: it is declared in %s; edit it there", name, ErrReadOnly, declaredIn(e.Source))
	}
	rec, err := d.store.Endpoint(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.EndpointRecord{}, fmt.Errorf("endpoint %q: %w", name, ErrUnknownEndpoint)
	}
	return rec, err
}

func declaredIn(p config.Position) string {
	if p.File == "" {
		return "the configuration"
	}
	return p.String()
}

// checkEndpointEntry decodes and checks an endpoint entry beside the
// configured endpoints and the other stored ones that are served, and
// returns the JSON to store.
func (d *Daemon) checkEndpointEntry(ctx context.Context, name string, entry json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(entry, &m); err != nil || m == nil {
		msg := "must be a JSON object (an [[endpoints]] table)"
		if err != nil {
			msg = "not JSON: " + err.Error()
		}
		return nil, &config.Problem{Msg: msg}
	}
	if v, ok := m["name"]; ok && v != name {
		return nil, &config.Problem{Field: "name", Msg: fmt.Sprintf("%v is not the endpoint's name %q", v, name)}
	}
	m["name"] = name
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	e, err := config.DecodeEndpoint(b)
	if err != nil {
		return nil, err
	}
	cfg, err := d.servedConfig(ctx)
	if err != nil {
		return nil, err
	}
	served, _, err := d.storedEndpoints(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckEndpoint(e, served); err != nil {
		return nil, err
	}
	if err := d.checkToken(cfg, served, e); err != nil {
		if _, ok := errors.AsType[*config.Problem](err); ok {
			return nil, err
		}
		return nil, &config.Problem{Field: "auth_token", Msg: err.Error()}
	}
	return config.EndpointJSON(e), nil
}

// servedConfig is the configuration as the stored endpoints are checked
// against: the configured servers and the run-time ones, enabled, all
// served.
func (d *Daemon) servedConfig(ctx context.Context) (*config.Config, error) {
	return servedConfig(ctx, d.store, d.opts.Config)
}

func servedConfig(ctx context.Context, st *store.Store, c *config.Config) (*config.Config, error) {
	cfg := *c
	recs, err := st.Servers(ctx)
	if err != nil {
		return nil, err
	}
	cfg.Servers = slices.Clone(cfg.Servers)
	gs := slices.Clone(cfg.Gateway.Servers)
	for _, r := range recs {
		if _, clash := cfg.Server(r.ID); r.Enabled && !clash {
			cfg.Servers = append(cfg.Servers, config.Server{ID: r.ID})
			if gs != nil {
				gs = append(gs, r.ID) // a run-time server is served whatever [gateway] servers says
			}
		}
	}
	cfg.Gateway.Servers = gs
	return &cfg, nil
}

// StoredEndpoints reads the endpoints stored in st and checks them as a
// daemon of cfg serves them (beside cfg's servers and the enabled ones
// added at run time, their tokens resolved with lookupEnv and secrets):
// those it would serve, in the store's order, and why each of the others
// would not (the API's state "failed"). What the CLI sees of them when no
// serve of cfg runs.
func StoredEndpoints(ctx context.Context, st *store.Store, cfg *config.Config, lookupEnv func(string) (string, bool), secrets secret.Store) ([]config.Endpoint, map[string]error, error) {
	served, err := servedConfig(ctx, st, cfg)
	if err != nil {
		return nil, nil, err
	}
	if lookupEnv == nil {
		lookupEnv = osLookupEnv
	}
	return storedEndpoints(ctx, st, served, "", func(cfg *config.Config, others []config.Endpoint, e config.Endpoint) error {
		return checkToken(lookupEnv, secrets, cfg, others, e)
	})
}

// storedEndpoints reads the stored endpoints (but skip's) and returns
// those that can be served beside cfg's, in the store's order, and why
// each of the others cannot.
func (d *Daemon) storedEndpoints(ctx context.Context, cfg *config.Config, skip string) ([]config.Endpoint, map[string]error, error) {
	return storedEndpoints(ctx, d.store, cfg, skip, d.checkToken)
}

func storedEndpoints(ctx context.Context, st *store.Store, cfg *config.Config, skip string,
	checkToken func(*config.Config, []config.Endpoint, config.Endpoint) error) ([]config.Endpoint, map[string]error, error) {
	recs, err := st.Endpoints(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ok []config.Endpoint
	broken := map[string]error{}
	for _, r := range recs {
		if r.Name == skip {
			continue
		}
		if _, clash := cfg.Endpoint(r.Name); clash {
			broken[r.Name] = fmt.Errorf("endpoint %q stored in %s: a configuration file declares an endpoint of its name, which wins", r.Name, st.Where())
			continue
		}
		e, err := config.DecodeEndpoint(r.Config)
		if err == nil && e.Name != r.Name {
			err = &config.Problem{Field: "name", Msg: fmt.Sprintf("%q is not the stored endpoint's name", e.Name)}
		}
		if err == nil {
			err = cfg.CheckEndpoint(e, ok)
		}
		if err == nil {
			err = checkToken(cfg, ok, e)
		}
		if err != nil {
			broken[r.Name] = fmt.Errorf("endpoint %q stored in %s: %w", r.Name, st.Where(), err)
			continue
		}
		ok = append(ok, e)
	}
	return ok, broken, nil
}

// checkToken checks that e's token resolves and is its own: neither the
// owner's nor that of an endpoint of cfg or others (tokenClash). The
// error names the field, never the token.
func (d *Daemon) checkToken(cfg *config.Config, others []config.Endpoint, e config.Endpoint) error {
	return checkToken(d.lookupEnv(), d.opts.Host.Secrets, cfg, others, e)
}

func checkToken(lookupEnv func(string) (string, bool), secrets secret.Store, cfg *config.Config, others []config.Endpoint, e config.Endpoint) error {
	tok, err := e.ResolveAuthToken(lookupEnv, secrets, nil)
	if err != nil || tok == "" {
		return err
	}
	owner, _ := cfg.Gateway.ResolveAuthToken(lookupEnv, secrets, nil)
	taken := map[string]string{}
	for _, o := range slices.Concat(cfg.Endpoints, others) {
		if t, err := o.ResolveAuthToken(lookupEnv, secrets, nil); err == nil && t != "" && o.Name != e.Name {
			taken[t] = o.Name
		}
	}
	if msg := tokenClash(tok, owner, taken); msg != "" {
		return &config.Problem{Field: "auth_token", Msg: msg}
	}
	return nil
}

// setEndpointsBroken records why each stored endpoint is not served; a
// new reason is logged, with what to do.
func (d *Daemon) setEndpointsBroken(broken map[string]error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, err := range broken {
		if prev, ok := d.epBroken[name]; !ok || prev.Error() != err.Error() {
			d.log.Error("an endpoint added at run time cannot be served as stored; replace it or delete it through the REST API",
				"endpoint", name, "err", err)
		}
	}
	d.epBroken = broken
}

// allEndpoints are the endpoints to serve: the default one, the
// configured ones, and the stored ones that check (the others recorded as
// broken).
func (d *Daemon) allEndpoints(ctx context.Context) ([]gateway.Endpoint, error) {
	cfg, err := d.servedConfig(ctx)
	if err != nil {
		return nil, err
	}
	stored, broken, err := d.storedEndpoints(ctx, cfg, "")
	if err != nil {
		return nil, err
	}
	eps, err := d.endpoints(stored)
	if err != nil {
		return nil, err
	}
	d.setEndpointsBroken(broken)
	return eps, nil
}

// applyEndpoints serves the endpoints as the store has them now. The
// caller holds opsMu.
func (d *Daemon) applyEndpoints(ctx context.Context) error {
	d.mu.Lock()
	g := d.g
	d.mu.Unlock()
	if g == nil {
		return ErrNotRunning
	}
	eps, err := d.allEndpoints(ctx)
	if err != nil {
		return err
	}
	return g.SetEndpoints(ctx, eps)
}

// reapplyEndpoints serves the endpoints again after a change another
// process made to them, or after a run-time server changed: an endpoint
// naming a server deleted fails, one whose server is back is served
// again. The caller holds opsMu.
func (d *Daemon) reapplyEndpoints(ctx context.Context) {
	if err := d.applyEndpoints(ctx); err != nil && !errors.Is(err, ErrNotRunning) && ctx.Err() == nil {
		d.log.Error("serving the endpoints as stored", "err", err)
	}
}

// An EndpointTool is a tool an endpoint offers, by the name its clients
// see (HostName is the host's).
type EndpointTool struct {
	Name, HostName, Server, Description string
}

// EndpointTools is what endpoint e offers of tools (the host's catalog),
// as the gateway serves it (gateway.Endpoint.Offer over EndpointRules):
// its servers, its tool patterns (ToolSelected), the tools workflows hide,
// its renames and overrides; sorted by the name its clients see.
func (d *Daemon) EndpointTools(e config.Endpoint, tools []host.Tool) []EndpointTool {
	offered, _ := d.EndpointRules(e).Offer(tools)
	return endpointTools(offered)
}

// ToolSelected reports whether an endpoint's tool patterns choose tool t
// (gateway.ToolSelected).
func ToolSelected(patterns []string, t host.Tool) bool {
	return gateway.ToolSelected(patterns, t.Name, t.Server, t.Tool.Name)
}

// OfferedTools is what the endpoint named name ("" the default one)
// offers now, as EndpointTools; false when it is not served (a stored one
// that fails, or none of that name) or the daemon is not running.
func (d *Daemon) OfferedTools(name string) ([]EndpointTool, bool) {
	d.mu.Lock()
	g := d.g
	d.mu.Unlock()
	if g == nil {
		return nil, false
	}
	offered, ok := g.Offered(name)
	if !ok {
		return nil, false
	}
	return endpointTools(offered), true
}

// endpointTools are offered tools as the daemon shows them.
func endpointTools(offered []gateway.OfferedTool) []EndpointTool {
	out := make([]EndpointTool, len(offered))
	for i, o := range offered {
		out[i] = EndpointTool{Name: o.Tool.Name, HostName: o.HostName, Server: o.Server, Description: o.Tool.Description}
	}
	return out
}

// EndpointRules returns what the gateway is given to serve endpoint e
// (namedEndpoint: its servers, tool patterns with its workflows' tools,
// the tools hidden by workflows, renames, overrides), without its token:
// what the web UI computes the tools it offers from, and previews an
// endpoint being edited with.
func (d *Daemon) EndpointRules(e config.Endpoint) gateway.Endpoint {
	def := gateway.DefaultEndpoint
	if d.wf != nil {
		def.HideTools = d.wf.Hidden()
	}
	return namedEndpoint(d.opts.Config, e, def)
}
