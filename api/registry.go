package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/registry"
)

// registryEntryJSON is one registry entry as the API shows it: as a
// search lists it, and on GET /registry/entry what it asks for.
type registryEntryJSON struct {
	registry.Summary
	Variables []registryVarJSON `json:"variables,omitempty"`
	Server    json.RawMessage   `json:"server,omitempty"`
	Refused   string            `json:"refused,omitempty"`
}

type registryVarJSON struct {
	Key         string   `json:"key"`
	Where       string   `json:"where"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required"`
	Secret      bool     `json:"secret"`
	Default     string   `json:"default,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// RegistrySearch is what GET /registry/search answers.
type RegistrySearch = registry.Found

// SearchRegistries searches every registry of the options (or the one
// named) for query; a registry that fails is reported in Errors.
func (a *API) SearchRegistries(ctx context.Context, query, only string) (RegistrySearch, error) {
	regs, err := a.registries(only)
	if err != nil {
		return RegistrySearch{Servers: []registry.Summary{}, Errors: []registry.SearchError{}}, err
	}
	return registry.SearchAll(ctx, regs, query), nil
}

func (a *API) registries(only string) ([]registry.Named, error) {
	if len(a.opts.Registries) == 0 {
		return nil, &problem{Status: http.StatusNotFound, Title: "no registry", Detail: "this switchboard serve reads no MCP registry"}
	}
	if only == "" {
		return a.opts.Registries, nil
	}
	for _, r := range a.opts.Registries {
		if r.Name == only {
			return []registry.Named{r}, nil
		}
	}
	return nil, &problem{Status: http.StatusNotFound, Title: "no such registry", Detail: fmt.Sprintf("no registry %q", only), Errors: []fieldError{{Field: "registry", Detail: "unknown"}}}
}

func (a *API) searchRegistry(w http.ResponseWriter, r *http.Request) error {
	out, err := a.SearchRegistries(r.Context(), r.URL.Query().Get("q"), r.URL.Query().Get("registry"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, out)
}

// RegistryEntry reads one entry (version "" is the latest) from the first
// registry that has it, with the variables kind asks for.
func (a *API) RegistryEntry(ctx context.Context, only, name, version, kind string) (registryEntryJSON, registry.Entry, error) {
	regs, err := a.registries(only)
	if err != nil {
		return registryEntryJSON{}, registry.Entry{}, err
	}
	var errs []error
	for _, r := range regs {
		e, err := r.Client.Get(ctx, name, version)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j := registryEntryJSON{Summary: registry.Summarize(r.Name, e)}
		j.Server = e.Raw
		if err := registry.Installable(e, false); err != nil {
			j.Refused = err.Error()
		} else if vars, err := registry.Variables(e.Server, kind); err != nil {
			j.Refused = err.Error()
		} else {
			for _, v := range vars {
				j.Variables = append(j.Variables, registryVarJSON{Key: v.Key, Where: v.Where, Description: v.Description,
					Required: v.IsRequired, Secret: v.IsSecret, Default: v.Default, Choices: v.Choices})
			}
		}
		return j, e, nil
	}
	if len(errs) > 0 && errors.Is(errs[0], registry.ErrNotFound) {
		return registryEntryJSON{}, registry.Entry{}, &problem{Status: http.StatusNotFound, Title: "no such registry entry", Detail: errs[0].Error(), Errors: []fieldError{{Field: "registry.name", Detail: "not found"}}}
	}
	return registryEntryJSON{}, registry.Entry{}, &problem{Status: http.StatusBadGateway, Title: "registry failed", Detail: errors.Join(errs...).Error()}
}

func (a *API) getRegistryEntry(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Get("name") == "" {
		return &problem{Status: http.StatusBadRequest, Title: "name required", Errors: []fieldError{{Field: "name", Detail: "required"}}}
	}
	j, _, err := a.RegistryEntry(r.Context(), q.Get("registry"), q.Get("name"), q.Get("version"), q.Get("kind"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, j)
}

// RegistryAdd is the registry member of a POST /servers body: add this
// registry entry instead of an entry written out.
type RegistryAdd struct {
	Name     string            `json:"name"`
	Version  string            `json:"version,omitempty"`
	Kind     string            `json:"kind,omitempty"`
	Registry string            `json:"registry,omitempty"`
	Values   map[string]string `json:"values,omitempty"`
	Force    bool              `json:"force,omitempty"`
}

// registryBody turns a POST /servers body that names a registry entry
// ({"id": …, "registry": {"name": …}}, without command or url) into the
// server entry it converts to; any other body is returned as it is. A
// secret value must be a {{secrets.NAME}} placeholder: the API writes no
// secret anywhere.
func (a *API) registryBody(ctx context.Context, body []byte) ([]byte, error) {
	var head struct {
		ID       string          `json:"id"`
		Registry json.RawMessage `json:"registry"`
		Command  json.RawMessage `json:"command"`
		URL      json.RawMessage `json:"url"`
	}
	if json.Unmarshal(body, &head) != nil || head.Registry == nil || head.Command != nil || head.URL != nil {
		return body, nil
	}
	if head.ID == "" {
		return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "invalid server", Errors: []fieldError{{Field: "id", Detail: "required"}}}
	}
	if !a.d.Grant(ctx).Server(head.ID) {
		// Before the registry is asked: a caller who may not add this
		// id learns nothing of the registry either.
		return nil, &problem{Status: http.StatusForbidden, Title: "outside your grant",
			Detail: fmt.Sprintf("server %q is not among those your token's rules grant ([[gateway.auth.policy]] servers)", head.ID),
			Errors: []fieldError{{Field: "id", Detail: "not granted"}}}
	}
	var req RegistryAdd
	if err := json.Unmarshal(head.Registry, &req); err != nil || req.Name == "" {
		// A registry = { name, version, url } record with nothing to
		// run is left for the entry's validation to refuse.
		return body, nil
	}
	var other map[string]json.RawMessage
	json.Unmarshal(body, &other)
	for k := range other {
		if k != "id" && k != "registry" {
			return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "invalid server", Errors: []fieldError{{Field: k, Detail: "not with registry: the entry is the registry's"}}}
		}
	}
	_, e, err := a.RegistryEntry(ctx, req.Registry, req.Name, req.Version, req.Kind)
	if err != nil {
		return nil, err
	}
	if err := registry.Installable(e, req.Force); err != nil {
		return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "refused", Detail: err.Error(), Errors: []fieldError{{Field: "registry.name", Detail: err.Error()}}}
	}
	problems, err := registry.CheckValues(e.Server, req.Kind, req.Values)
	if err != nil {
		return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "refused", Detail: err.Error(), Errors: []fieldError{{Field: "registry.kind", Detail: err.Error()}}}
	}
	var fes []fieldError
	for _, k := range slices.Sorted(maps.Keys(problems)) {
		fes = append(fes, fieldError{Field: "registry.values." + k, Detail: problems[k]})
	}
	if len(fes) > 0 {
		return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "invalid registry values", Errors: fes}
	}
	s, err := registry.Convert(e, &registry.ConvertOptions{ID: head.ID, Kind: req.Kind, Values: req.Values, ContainerRuntime: a.opts.ContainerRuntime, Force: req.Force})
	if err != nil {
		return nil, &problem{Status: http.StatusUnprocessableEntity, Title: "refused", Detail: err.Error(), Errors: []fieldError{{Field: "registry", Detail: err.Error()}}}
	}
	m, err := config.ServerEntry(s)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// RegistryNames lists the registries the API reads, in order.
func (a *API) RegistryNames() []string {
	var ns []string
	for _, r := range a.opts.Registries {
		ns = append(ns, r.Name)
	}
	return ns
}
