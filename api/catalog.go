package api

// Resources and prompts: the lists of every ready server's (or one's,
// with ?server=), a resource read and a prompt got. The items and
// requests are the daemon's (daemon/catalog.go).

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
)

// listPage is a list of the host's catalog: a page of items, and the
// servers that failed to answer (the items of the others are there).
type listPage[T any] struct {
	page[T]
	Error string `json:"error,omitempty"`
	// Cause is that error's text and kind (Client).
	Cause *host.ErrorJSON `json:"cause,omitempty"`
}

// catalogList answers a page of what list returns, filtered by ?server=.
func catalogList[T any](a *API, w http.ResponseWriter, r *http.Request, list func(*host.Host) ([]T, error),
	server func(T) string, key func(T) string) error {
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
	items, lerr := list(h)
	items = slices.DeleteFunc(items, func(it T) bool { return (srv != "" && server(it) != srv) || !gr.Server(server(it)) })
	p, err := pageFor(r, items, func(it T) string { return server(it) + "\x00" + key(it) })
	if err != nil {
		return err
	}
	out := listPage[T]{page: p}
	if lerr != nil {
		out.Error, out.Cause = lerr.Error(), causeOf(lerr)
	}
	return a.writeJSON(w, http.StatusOK, out)
}

func (a *API) listResources(w http.ResponseWriter, r *http.Request) error {
	return catalogList(a, w, r, func(h *host.Host) ([]daemon.ResourceItem, error) { return daemon.ResourceItems(r.Context(), h) },
		func(it daemon.ResourceItem) string { return it.Server }, func(it daemon.ResourceItem) string { return it.Resource.URI })
}

func (a *API) listTemplates(w http.ResponseWriter, r *http.Request) error {
	return catalogList(a, w, r, func(h *host.Host) ([]daemon.TemplateItem, error) { return daemon.TemplateItems(r.Context(), h) },
		func(it daemon.TemplateItem) string { return it.Server }, func(it daemon.TemplateItem) string { return it.Template.URITemplate })
}

func (a *API) listPrompts(w http.ResponseWriter, r *http.Request) error {
	return catalogList(a, w, r, func(h *host.Host) ([]daemon.PromptItem, error) { return daemon.PromptItems(r.Context(), h) },
		func(it daemon.PromptItem) string { return it.Server }, func(it daemon.PromptItem) string { return it.Prompt.Name })
}

// readResource reads a resource: {"server", "uri"}; the result as the
// server gave it (contents, text or blob).
func (a *API) readResource(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	var req daemon.ReadRequest
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	var missing []fieldError
	if req.Server == "" {
		missing = append(missing, fieldError{Field: "server", Detail: "required"})
	}
	if req.URI == "" {
		missing = append(missing, fieldError{Field: "uri", Detail: "required"})
	}
	if missing != nil {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid read", Errors: missing}
	}
	if err := a.knownServer(r, h, req.Server); err != nil {
		return err
	}
	res, err := req.Read(r.Context(), h)
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, res)
}

// getPrompt gets a prompt: {"server", "name", "arguments"}; server may be
// left out when one server has a prompt of that name.
func (a *API) getPrompt(w http.ResponseWriter, r *http.Request) error {
	h, err := a.host()
	if err != nil {
		return err
	}
	var req daemon.PromptRequest
	if err := a.decode(w, r, &req); err != nil {
		return err
	}
	if req.Name == "" {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid prompt request", Errors: []fieldError{{Field: "name", Detail: "required"}}}
	}
	if req.Server != "" {
		if err := a.knownServer(r, h, req.Server); err != nil {
			return err
		}
	} else if gr := a.d.Grant(r.Context()); !gr.All() {
		// The one server with a prompt of that name, among those the
		// caller may see: the host would look among them all.
		srv, err := a.promptServer(r, h, gr, req.Name)
		if err != nil {
			return err
		}
		req.Server = srv
	}
	res, err := req.Get(r.Context(), h)
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, res)
}

// promptServer is the one server of gr with a prompt called name.
func (a *API) promptServer(r *http.Request, h *host.Host, gr daemon.Grant, name string) (string, error) {
	ps, err := daemon.PromptItems(r.Context(), h)
	var servers []string
	for _, p := range ps {
		if p.Prompt.Name == name && gr.Server(p.Server) {
			servers = append(servers, p.Server)
		}
	}
	switch len(servers) {
	case 0:
		if err != nil {
			return "", err
		}
		return "", daemon.KindUnknownPrompt.Errorf("no server has a prompt %q", name)
	case 1:
		return servers[0], nil
	}
	return "", &problem{Status: http.StatusUnprocessableEntity, Title: "invalid prompt request",
		Detail: fmt.Sprintf("servers %s have a prompt %q: name one", strings.Join(servers, ", "), name), Errors: []fieldError{{Field: "server", Detail: "required"}}}
}
