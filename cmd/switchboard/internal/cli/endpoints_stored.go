package cli

// The named endpoints added at run time (the REST API's
// /api/v1/endpoints, the web UI), kept in the state store, as the CLI
// sees them beside those of the config files: asked of the running
// switchboard serve of this configuration when there is one (its view is
// the one served), else read from the state store and checked as a serve
// would check them (daemon.StoredEndpoints). As for servers added at run
// time (removeStored), remove deletes one through the running serve, else
// from the store; edit changes one through the running serve, which
// checks it as the API does, and otherwise says how.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/secret"
	"github.com/switchboardmcp/switchboard/store"
)

// runtimeEndpoint is an endpoint added at run time.
type runtimeEndpoint struct {
	// ep is the endpoint decoded; its Name alone when its stored form does
	// not decode (err says why).
	ep      config.Endpoint
	decoded bool
	// version is the stored version (the API's ETag).
	version int64
	// err is why it is not served (the API's state "failed"); nil when it
	// is.
	err error
}

// runtimeEndpoints returns the endpoints added at run time, oldest first:
// the running serve of cfg's configuration's (over /api/v1), else the
// state store's, checked as a serve of cfg would check them. None when
// there is no state store (stateStore has said why, with -v).
func (e *env) runtimeEndpoints(ctx context.Context, cfg *config.Config) ([]runtimeEndpoint, error) {
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		e.logger().Info("switchboard serve does not answer: reading the endpoints added at run time from the state store", "err", err)
	}
	if c != nil {
		defer c.Close()
		all, err := c.Endpoints(ctx)
		if err != nil {
			return nil, fmt.Errorf("switchboard serve: listing its endpoints: %w", err)
		}
		var out []runtimeEndpoint
		for _, m := range all {
			if m.Origin != daemon.OriginRuntime {
				continue
			}
			r := runtimeEndpoint{ep: config.Endpoint{Name: m.Name}, version: m.Version}
			if ep, err := config.DecodeEndpoint(m.Config); err == nil {
				r.ep, r.decoded = ep, true
			}
			if m.State == "failed" {
				r.err = errors.New(m.Error)
			}
			out = append(out, r)
		}
		return out, nil
	}
	st := e.stateStore(cfg)
	if st == nil {
		return nil, nil
	}
	recs, err := st.Endpoints(ctx)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	_, broken, err := daemon.StoredEndpoints(ctx, st, cfg, e.lookupEnv, &lazySecrets{e: e})
	if err != nil {
		return nil, err
	}
	out := make([]runtimeEndpoint, 0, len(recs))
	for _, rec := range recs {
		r := runtimeEndpoint{ep: config.Endpoint{Name: rec.Name}, version: rec.Version, err: broken[rec.Name]}
		if ep, err := config.DecodeEndpoint(rec.Config); err == nil {
			r.ep, r.decoded = ep, true
		}
		out = append(out, r)
	}
	return out, nil
}

// lazySecrets is the secret store, opened at the first lookup: listing
// the endpoints opens it only when a stored one's token names a secret.
type lazySecrets struct {
	e    *env
	once sync.Once
	s    secret.Store
}

func (l *lazySecrets) store() secret.Store {
	l.once.Do(func() { l.s = l.e.secretStore() })
	return l.s
}

func (l *lazySecrets) Lookup(name string) (string, bool) { return l.store().Lookup(name) }

func (l *lazySecrets) Hint(name string) string {
	if h, ok := l.store().(secret.Hinter); ok {
		return h.Hint(name)
	}
	return ""
}

// findEndpoint returns the endpoint named name: a configured one (rt
// nil), else one added at run time (rt its own); found false when neither
// is, then rts are those added at run time, for allEndpointNames. An error
// says that those could not be read.
func (e *env) findEndpoint(ctx context.Context, cfg *config.Config, name string) (ep config.Endpoint, rt *runtimeEndpoint, rts []runtimeEndpoint, found bool, err error) {
	if ep, ok := configEndpoint(cfg, name); ok {
		return ep, nil, nil, true, nil
	}
	rts, err = e.runtimeEndpoints(ctx, cfg)
	if err != nil {
		return config.Endpoint{}, nil, nil, false, fmt.Errorf("endpoint %q: the endpoints added at run time: %w", name, err)
	}
	for i := range rts {
		if rts[i].ep.Name == name {
			return rts[i].ep, &rts[i], rts, true, nil
		}
	}
	return config.Endpoint{}, nil, rts, false, nil
}

// allEndpointNames lists the configured endpoints and those added at run
// time, for an error naming one that is neither.
func allEndpointNames(cfg *config.Config, rts []runtimeEndpoint) string {
	s := endpointNames(cfg)
	if len(rts) > 0 {
		names := make([]string, len(rts))
		for i, r := range rts {
			names[i] = r.ep.Name
		}
		s += "; added at run time: " + strings.Join(names, ", ")
	}
	return s
}

// removeStoredEndpoint removes endpoint name from the state database when
// it was added there at run time (ok false when it was not): through the
// running serve of cfg's configuration, which stops serving it at once,
// else directly (as removeStored does a server).
func (e *env) removeStoredEndpoint(ctx context.Context, cfg *config.Config, name string, dryRun bool) (endpointEditJSON, bool, error) {
	st := e.stateStore(cfg)
	if st == nil {
		return endpointEditJSON{}, false, nil
	}
	if _, err := st.Endpoint(ctx, name); errors.Is(err, store.ErrNotFound) {
		return endpointEditJSON{}, false, nil
	} else if err != nil {
		return endpointEditJSON{}, true, failed(fmt.Errorf("endpoints remove %s: %w", name, err))
	}
	out := endpointEditJSON{Action: "remove", Endpoint: name, DryRun: dryRun, Warnings: []string{}, Database: st.Where()}
	if dryRun {
		return out, true, nil
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("switchboard serve does not answer (%v): removed from the database alone; a serve still running serves endpoint %s until it restarts", err, name))
	}
	if c != nil {
		defer c.Close()
		if err := c.DeleteEndpoint(ctx, name, 0); err != nil {
			return out, true, failed(fmt.Errorf("endpoints remove %s: switchboard serve: %w", name, err))
		}
		out.Written, out.Serve = true, true
		return out, true, nil
	}
	if err := st.DeleteEndpoint(ctx, name, 0); err != nil {
		return out, true, failed(fmt.Errorf("endpoints remove %s: %w", name, err))
	}
	out.Written = true
	return out, true, nil
}

// editStoredEndpoint changes endpoint rt, added at run time, as the flags
// say: through the running serve of cfg's configuration, which checks it
// as the REST API does (PUT /api/v1/endpoints/NAME, conditional on the
// version read) and serves it anew. With no serve running it is refused,
// saying how: a stored endpoint is checked against what a serve serves
// (its servers added at run time too), so it is changed through one.
func (e *env) editStoredEndpoint(cmd *cobra.Command, cfg *config.Config, rt *runtimeEndpoint, f *endpointFlags) error {
	ctx := cmd.Context()
	name := rt.ep.Name
	if !rt.decoded {
		return usageErr("endpoints edit %s: its stored form cannot be read (%v); replace it in the web UI or the REST API (PUT /api/v1/endpoints/%s), or remove it (switchboard endpoints remove %s)", name, rt.err, name, name)
	}
	ep := rt.ep
	ep.Rename = maps.Clone(ep.Rename)
	if err := f.apply(cmd, &ep); err != nil {
		return err
	}
	st := e.stateStore(cfg)
	where := "the state database"
	if st != nil {
		where += " " + st.Where()
	}
	out := endpointEditJSON{Action: "edit", Endpoint: name, DryRun: f.dryRun, TOML: string(config.EndpointTOML(ep)), Warnings: []string{}, Database: strings.TrimPrefix(where, "the state database ")}
	if f.dryRun {
		return e.printEndpointEdit(out)
	}
	c, err := e.dialServe(ctx, cfg)
	if err != nil {
		return failed(fmt.Errorf("endpoints edit %s: added at run time (kept in %s), it is changed through switchboard serve, which does not answer: %w", name, where, err))
	}
	if c == nil {
		return usageErr("endpoints edit %s: added at run time (kept in %s), it is changed through a running switchboard serve, which checks it against what it serves: start switchboard serve and run this again, or change it in the web UI or the REST API (PUT /api/v1/endpoints/%s)", name, where, name)
	}
	defer c.Close()
	got, err := c.UpdateEndpoint(ctx, ep, rt.version)
	if err != nil {
		return failed(fmt.Errorf("endpoints edit %s: %w", name, err))
	}
	if got.State == "failed" {
		out.Warnings = append(out.Warnings, fmt.Sprintf("endpoint %s is stored but not served: %s", name, got.Error))
	}
	out.Written, out.Serve = true, true
	return e.printEndpointEdit(out)
}
