package api

// The named endpoints (issue 26): /api/v1/endpoints lists the configured
// ones (read-only, origin "config") and those added through the API
// (origin "runtime", kept in the state store), and adds, replaces (PUT,
// If-Match) and deletes the latter, which are served, or stop being
// served, at once (daemon/endpoints.go). Changing them needs the owner's
// grant: an endpoint publishes whatever servers it names.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
)

// Endpoint is a named endpoint as the API shows it (GET
// /api/v1/endpoints/NAME).
type Endpoint struct {
	Name   string `json:"name"`
	Origin string `json:"origin"` // daemon.OriginConfig or daemon.OriginRuntime
	// Version is a run-time endpoint's, its ETag; 0 for a configured one.
	Version int64  `json:"version,omitempty"`
	Source  string `json:"source,omitempty"`
	// Config is the endpoint as config.EndpointJSON writes it: its
	// auth_token a placeholder, never the token.
	Config json.RawMessage `json:"config,omitempty"`
	// State is "served", or "failed" for a stored endpoint that is not
	// served, Error saying why.
	State     string     `json:"state"`
	Error     string     `json:"error,omitempty"`
	Path      string     `json:"path,omitempty"`
	SSE       string     `json:"sse,omitempty"`
	Message   string     `json:"message,omitempty"`
	WebSocket string     `json:"websocket,omitempty"`
	Created   *time.Time `json:"created,omitempty"`
	Updated   *time.Time `json:"updated,omitempty"`
}

func toEndpoint(m daemon.ManagedEndpoint) Endpoint {
	e := Endpoint{Name: m.Name, Origin: m.Origin, Version: m.Version, Source: m.Source, Config: m.Config, State: "served",
		Path: m.Path, SSE: m.SSE, Message: m.Message, WebSocket: m.WebSocket}
	if m.Err != nil {
		e.State, e.Error = "failed", m.Err.Error()
	}
	if !m.Created.IsZero() {
		c, u := m.Created.UTC(), m.Updated.UTC()
		e.Created, e.Updated = &c, &u
	}
	return e
}

func (a *API) listEndpoints(w http.ResponseWriter, r *http.Request) error {
	all, err := a.d.ListEndpoints(r.Context())
	if err != nil {
		return err
	}
	items := make([]Endpoint, 0, len(all))
	for _, m := range all {
		items = append(items, toEndpoint(m))
	}
	return pageOf(a, w, r, items, func(e Endpoint) string { return e.Name })
}

func (a *API) getEndpoint(w http.ResponseWriter, r *http.Request) error {
	m, err := a.d.GetEndpoint(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return a.writeEndpoint(w, http.StatusOK, m)
}

func (a *API) writeEndpoint(w http.ResponseWriter, status int, m daemon.ManagedEndpoint) error {
	if m.Version > 0 {
		w.Header().Set("ETag", etag(m.Version))
	}
	return a.writeJSON(w, status, toEndpoint(m))
}

// ownerOnly refuses a change of the endpoints to a caller whose grant is
// not everything: an endpoint publishes whatever servers it names.
func (a *API) ownerOnly(r *http.Request) error {
	if a.d.Grant(r.Context()).All() {
		return nil
	}
	return &problem{Status: http.StatusForbidden, Title: "outside your grant",
		Detail: "changing the endpoints needs the owner's credential: an endpoint publishes the servers it names, whatever [[gateway.auth.policy]] grants you"}
}

// endpointProblem is problemOf's answer, saying which entry is invalid.
func (a *API) endpointProblem(err error) error {
	p := a.problemOf(err)
	switch p.Type {
	case daemon.KindConfig.Type():
		p.Detail = "the entry is not a valid [[endpoints]] table"
	case daemon.KindExists.Type():
		for i := range p.Errors {
			if p.Errors[i].Field == "id" {
				p.Errors[i].Field = "name" // an endpoint's id
			}
		}
	}
	return p
}

func (a *API) addEndpoint(w http.ResponseWriter, r *http.Request) error {
	if err := a.ownerOnly(r); err != nil {
		return err
	}
	body, err := a.body(w, r)
	if err != nil {
		return err
	}
	var head struct {
		Name *string `json:"name"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return &problem{Status: http.StatusBadRequest, Title: "the body is not a JSON object", Detail: err.Error()}
	}
	if head.Name == nil || *head.Name == "" {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid endpoint", Errors: []fieldError{{Field: "name", Detail: "required"}}}
	}
	m, err := a.d.AddEndpoint(r.Context(), *head.Name, body)
	if err != nil {
		return a.endpointProblem(err)
	}
	w.Header().Set("Location", Prefix+"endpoints/"+m.Name)
	return a.writeEndpoint(w, http.StatusCreated, m)
}

func (a *API) updateEndpoint(w http.ResponseWriter, r *http.Request) error {
	if err := a.ownerOnly(r); err != nil {
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
	m, err := a.d.UpdateEndpoint(r.Context(), r.PathValue("name"), body, v)
	if err != nil {
		return a.endpointProblem(err)
	}
	return a.writeEndpoint(w, http.StatusOK, m)
}

func (a *API) deleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	if err := a.ownerOnly(r); err != nil {
		return err
	}
	v, err := ifMatch(r)
	if err != nil {
		return err
	}
	if err := a.d.DeleteEndpoint(r.Context(), r.PathValue("name"), v); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Endpoints lists the named endpoints (daemon.Daemon.ListEndpoints).
func (c *Client) Endpoints(ctx context.Context) ([]Endpoint, error) {
	return list(ctx, c, "endpoints", func(e Endpoint) Endpoint { return e })
}

// Endpoint returns one (daemon.Daemon.GetEndpoint); an unknown one's
// error matches daemon.ErrUnknownEndpoint.
func (c *Client) Endpoint(ctx context.Context, name string) (Endpoint, error) {
	var e Endpoint
	err := c.do(ctx, http.MethodGet, "endpoints/"+url.PathEscape(name), nil, &e)
	return e, err
}

// AddEndpoint adds ep, stored and served at once
// (daemon.Daemon.AddEndpoint).
func (c *Client) AddEndpoint(ctx context.Context, ep config.Endpoint) (Endpoint, error) {
	var e Endpoint
	err := c.do(ctx, http.MethodPost, "endpoints", json.RawMessage(config.EndpointJSON(ep)), &e)
	return e, err
}

// UpdateEndpoint replaces the run-time endpoint ep.Name
// (daemon.Daemon.UpdateEndpoint); ifVersion > 0 is its If-Match (a stale
// one's error matches store.ErrConflict).
func (c *Client) UpdateEndpoint(ctx context.Context, ep config.Endpoint, ifVersion int64) (Endpoint, error) {
	var e Endpoint
	err := c.doIf(ctx, http.MethodPut, "endpoints/"+url.PathEscape(ep.Name), json.RawMessage(config.EndpointJSON(ep)), &e, ifVersion)
	return e, err
}

// DeleteEndpoint deletes a run-time endpoint (daemon.Daemon.DeleteEndpoint):
// a configured one's error matches daemon.ErrReadOnly.
func (c *Client) DeleteEndpoint(ctx context.Context, name string, ifVersion int64) error {
	return c.doIf(ctx, http.MethodDelete, "endpoints/"+url.PathEscape(name), nil, nil, ifVersion)
}
