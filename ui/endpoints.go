package ui

// The endpoints pages (issue 26): every named endpoint with where it is
// served, where it comes from, whether it is served and why not, what it
// publishes and how it is opened (never a token); a page per endpoint
// with the tools its clients are offered; and add, edit and delete of the
// endpoints added at run time (those of configuration files are
// read-only), through the daemon's endpoint operations as the REST API.

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/workflow"
)

func (u *UI) endpointRoutes() {
	u.mux.HandleFunc("GET /endpoints", u.endpointsPage)
	u.mux.HandleFunc("POST /endpoints", u.saveEndpoint)
	u.mux.HandleFunc("POST /endpoints/form", u.endpointFormPreview)
	u.mux.HandleFunc("GET /endpoints/{name}", u.endpointPage)
	u.mux.HandleFunc("POST /endpoints/{name}", u.saveEndpoint)
	u.mux.HandleFunc("GET /endpoints/{name}/remove", u.endpointRemoveButton)
	u.mux.HandleFunc("POST /endpoints/{name}/delete", u.deleteEndpoint)
}

// endpointRow is an endpoint as the list and its page show it.
type endpointRow struct {
	Name     string
	Runtime  bool
	Origin   string // "config file" or "added"
	Source   string
	Version  int64
	Paths    []string
	Served   bool
	Error    string
	Servers  []string // nil: all
	Tools    []string // nil: all
	Auth     string
	Mode     string // "all", "search" or "code"
	Endpoint config.Endpoint
}

func endpointRowOf(m daemon.ManagedEndpoint) endpointRow {
	r := endpointRow{Name: m.Name, Runtime: m.Origin == daemon.OriginRuntime, Source: m.Source, Version: m.Version, Served: m.Err == nil}
	r.Origin = "added"
	if !r.Runtime {
		r.Origin = "config file"
	}
	for _, p := range []string{m.Path, m.SSE, m.Message, m.WebSocket} {
		if p != "" {
			r.Paths = append(r.Paths, p)
		}
	}
	if m.Err != nil {
		r.Error = m.Err.Error()
	}
	if e, err := config.DecodeEndpoint(m.Config); err == nil {
		r.Endpoint = e
		r.Servers, r.Tools, r.Mode = e.Servers, e.Tools, cmp.Or(e.Mode, config.ModeAll)
		r.Auth = "the gateway's"
		if e.AuthToken != "" {
			r.Auth = "its own token"
		}
		if len(e.Scopes) > 0 {
			r.Auth += "; OAuth scopes " + strings.Join(e.Scopes, ", ")
		}
	}
	return r
}

// offered is what endpoint e offers of tools, by the gateway's rules
// (Daemon.EndpointTools), sorted by the name its clients see.
func (u *UI) offered(e config.Endpoint, tools []host.Tool) []daemon.EndpointTool {
	return u.d.EndpointTools(e, tools)
}

type endpointsPageData struct {
	chrome
	Endpoints []endpointRow
	Form      endpointForm
}

func (u *UI) endpointsPage(w http.ResponseWriter, r *http.Request) {
	all, err := u.d.ListEndpoints(r.Context())
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	p := endpointsPageData{chrome: chrome{"Endpoints", "endpoints"}}
	for _, m := range all {
		p.Endpoints = append(p.Endpoints, endpointRowOf(m))
	}
	f, err := u.endpointFormOf(r, nil, config.Endpoint{Servers: []string{}})
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	p.Form = f
	u.render(w, http.StatusOK, "endpoints", "layout", p)
}

type endpointPageData struct {
	chrome
	Row   endpointRow
	Tools []daemon.EndpointTool
	Form  endpointForm
}

func (u *UI) endpointPage(w http.ResponseWriter, r *http.Request) {
	m, err := u.d.GetEndpoint(r.Context(), r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	row := endpointRowOf(m)
	p := endpointPageData{chrome: chrome{"Endpoint " + m.Name, "endpoints"}, Row: row}
	if h := u.d.Host(); h != nil && row.Served {
		p.Tools = u.offered(row.Endpoint, h.Tools())
	}
	if row.Runtime {
		e := row.Endpoint
		if p.Form, err = u.endpointFormOf(r, &e, e); err != nil {
			http.Error(w, err.Error(), daemon.StatusOf(err))
			return
		}
		p.Form.Version = m.Version
	}
	u.render(w, http.StatusOK, "endpoint", "layout", p)
}

// endpointForm is the add or edit form of an endpoint: its servers to
// check, the chosen servers' tools to check (those not matching Search
// hidden, still sent), and the tools the endpoint would offer.
type endpointForm struct {
	form
	Edit     string // the name of the endpoint edited; "" adds
	Version  int64
	Search   string
	Servers  []choice
	Tools    []toolChoice
	Preview  []daemon.EndpointTool
	AllTools bool // no tool checked: every tool of the servers
	// Patterns are the edited endpoint's tool patterns that are not
	// tool names (globs, exclusions). KeepPatterns (the form's
	// keep_patterns, checked at first) keeps its tool patterns as they
	// are, tools added later that match them joining; unchecked, saving
	// writes the tools checked by name in their place.
	Patterns     []string
	KeepPatterns bool
	// AllServers: the edited endpoint publishes every server (servers
	// unset); saving writes the servers checked by name, which the form
	// says.
	AllServers bool
}

type choice struct {
	ID      string
	Checked bool
}

type toolChoice struct {
	Name, Server, Description string
	Checked, Hidden           bool
}

// endpointFormOf makes the form of e (checked as it is) for the endpoint
// edited (nil: a new one).
func (u *UI) endpointFormOf(r *http.Request, edited *config.Endpoint, e config.Endpoint) (endpointForm, error) {
	f := endpointForm{form: newForm()}
	f.Values["name"] = e.Name
	f.Values["mode"] = cmp.Or(e.Mode, config.ModeAll)
	if edited != nil {
		f.Edit, f.AllServers = edited.Name, edited.Servers == nil
		for _, p := range edited.Tools {
			if strings.ContainsAny(p, "*?[!") {
				f.Patterns = append(f.Patterns, p)
			}
		}
		f.KeepPatterns = len(f.Patterns) > 0
	}
	servers, err := u.d.ListServers(r.Context())
	if err != nil {
		return f, err
	}
	// Servers nil is every server: all checked.
	chosen := func(id string) bool { return e.Servers == nil || slices.Contains(e.Servers, id) }
	for _, s := range servers {
		f.Servers = append(f.Servers, choice{ID: s.ID, Checked: chosen(s.ID)})
	}
	var catalog []host.Tool
	if h := u.d.Host(); h != nil {
		catalog = h.Tools()
	}
	q := strings.ToLower(strings.TrimSpace(f.Search))
	for _, t := range catalog {
		if t.Server == workflow.InProcessServerID || !chosen(t.Server) {
			continue
		}
		hay := strings.ToLower(t.Name + " " + t.Tool.Description)
		f.Tools = append(f.Tools, toolChoice{Name: t.Name, Server: t.Server, Description: t.Tool.Description,
			Checked: e.Tools != nil && daemon.ToolSelected(e.Tools, t),
			Hidden:  q != "" && !strings.Contains(hay, q)})
	}
	f.AllTools = e.Tools == nil
	f.Preview = u.offered(e, catalog)
	return f, nil
}

// endpointOfForm reads the posted form over base (the stored endpoint
// edited, whose other fields it keeps): the name, the servers checked, the
// tools checked (none: all of the servers'), and the search.
func (u *UI) endpointOfForm(r *http.Request, base config.Endpoint) (config.Endpoint, endpointForm, error) {
	r.ParseForm()
	e := base
	if e.Name == "" {
		e.Name = strings.TrimSpace(r.PostFormValue("name"))
	}
	if m, ok := r.PostForm["mode"]; ok && len(m) > 0 {
		e.Mode = m[0]
		if e.Mode == config.ModeAll {
			e.Mode = "" // the default: not written
		}
	}
	e.Servers = nil
	for _, s := range r.PostForm["server"] {
		e.Servers = append(e.Servers, s)
	}
	if e.Servers == nil {
		e.Servers = []string{}
	}
	var edited *config.Endpoint
	if base.Name != "" {
		edited = &base
	}
	keep := edited != nil && r.PostFormValue("keep_patterns") == "1" &&
		slices.ContainsFunc(base.Tools, func(p string) bool { return strings.ContainsAny(p, "*?[!") })
	e.Tools = nil
	if keep {
		e.Tools = base.Tools
	}
	for _, t := range r.PostForm["tool"] {
		if !keep {
			e.Tools = append(e.Tools, t)
		}
	}
	search := r.PostFormValue("search")
	f, err := u.endpointFormOf(r, edited, e)
	if err != nil {
		return e, f, err
	}
	// The search again, now that it is known: endpointFormOf read none.
	f.Search = search
	q := strings.ToLower(strings.TrimSpace(search))
	for i, t := range f.Tools {
		f.Tools[i].Hidden = q != "" && !strings.Contains(strings.ToLower(t.Name+" "+t.Description), q)
	}
	f.Values["name"] = e.Name
	f.Version, _ = strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	f.KeepPatterns = keep
	if keep {
		return e, f, nil
	}
	// A tool checked of a server no longer checked is dropped.
	var kept []string
	for _, t := range e.Tools {
		if slices.ContainsFunc(f.Tools, func(c toolChoice) bool { return c.Name == t }) {
			kept = append(kept, t)
		}
	}
	e.Tools = kept
	return e, f, nil
}

// base is the stored endpoint a request edits (the form's "edit" or the
// path's name), or the zero Endpoint when it adds one.
func (u *UI) base(r *http.Request) (config.Endpoint, daemon.ManagedEndpoint, error) {
	name := r.PathValue("name")
	if name == "" {
		name = r.PostFormValue("edit")
	}
	if name == "" {
		return config.Endpoint{}, daemon.ManagedEndpoint{}, nil
	}
	m, err := u.d.GetEndpoint(r.Context(), name)
	if err != nil {
		return config.Endpoint{}, m, err
	}
	if m.Origin != daemon.OriginRuntime {
		return config.Endpoint{}, m, fmt.Errorf("endpoint %q: %w: it is declared in %s; edit it there", name, daemon.ErrReadOnly, cmp.Or(m.Source, "the configuration"))
	}
	e, err := config.DecodeEndpoint(m.Config)
	if err != nil {
		e = config.Endpoint{Name: name} // stored broken: the form replaces it
	}
	return e, m, nil
}

// endpointFormPreview renders the form as posted, with the tools the
// endpoint would offer, saving nothing: what the servers and tools
// checked and the search swap in, and the Preview button.
func (u *UI) endpointFormPreview(w http.ResponseWriter, r *http.Request) {
	b, _, err := u.base(r)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	_, f, err := u.endpointOfForm(r, b)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "endpoints", "endpoint-form", f)
}

// saveEndpoint adds (POST /endpoints) or replaces (POST /endpoints/NAME,
// with the version the form was made from: a change saved meanwhile is
// not overwritten unseen, as If-Match) an endpoint, then goes to its page.
func (u *UI) saveEndpoint(w http.ResponseWriter, r *http.Request) {
	b, cur, err := u.base(r)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	e, f, err := u.endpointOfForm(r, b)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	if e.Name == "" {
		f.fail("name", "required")
	}
	if len(e.Servers) == 0 {
		f.fail("servers", "check at least one server")
	}
	if f.ok() {
		raw := config.EndpointJSON(e)
		var err error
		if f.Edit == "" {
			_, err = u.d.AddEndpoint(r.Context(), e.Name, raw)
		} else {
			_, err = u.d.UpdateEndpoint(r.Context(), e.Name, raw, f.Version)
		}
		switch {
		case errors.Is(err, store.ErrConflict):
			f.General = append(f.General, fmt.Sprintf("%s was changed since this form was opened (it is at version %d now): reload the page to edit what it is now.", e.Name, cur.Version))
		case err != nil:
			f.endpointProblems(err)
		}
	}
	if !f.ok() {
		u.render(w, http.StatusUnprocessableEntity, "endpoints", "endpoint-form", f)
		return
	}
	redirect(w, r, "/endpoints/"+e.Name)
}

// endpointFields are the fields of the form a problem is shown beside;
// any other field's problem is shown above the form, naming it.
var endpointFields = []string{"name", "servers", "tools"}

func (f *endpointForm) endpointProblems(err error) {
	var es []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		es = j.Unwrap()
	} else {
		es = []error{err}
	}
	for _, e := range es {
		var p *config.Problem
		if !errors.As(e, &p) {
			if errors.Is(e, store.ErrExists) {
				f.fail("name", "taken: "+e.Error())
			} else {
				f.General = append(f.General, e.Error())
			}
			continue
		}
		field := p.Field
		if i := strings.IndexAny(field, ".["); i >= 0 {
			field = field[:i]
		}
		if !slices.Contains(endpointFields, field) {
			f.General = append(f.General, strings.TrimPrefix(p.Field+": "+p.Msg, ": "))
			continue
		}
		msg := p.Msg
		if p.Field != field {
			msg = p.Field + ": " + msg
		}
		f.fail(field, msg)
	}
}

// endpointRemoveButton answers the Delete button's first press
// (?confirm=1) with the button that deletes and Keep, as a server's
// Remove does.
func (u *UI) endpointRemoveButton(w http.ResponseWriter, r *http.Request) {
	m, err := u.d.GetEndpoint(r.Context(), r.PathValue("name"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	name := "endpoint-remove"
	if r.URL.Query().Get("confirm") == "1" {
		name = "endpoint-remove-confirm"
	}
	u.render(w, http.StatusOK, "endpoint", name, endpointRowOf(m))
}

func (u *UI) deleteEndpoint(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	version, _ := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	err := u.d.DeleteEndpoint(r.Context(), name, version)
	switch {
	case errors.Is(err, store.ErrConflict):
		u.flash(w, daemon.StatusOf(err), name+" was changed since this page showed it, so it was not deleted: reload the page.", true)
	case err != nil:
		u.flash(w, daemon.StatusOf(err), name+": "+err.Error(), true)
	default:
		redirect(w, r, "/endpoints")
	}
}
