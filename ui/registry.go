package ui

// The registry page (issue 30): search the MCP registries serve reads and
// add an entry, pinned, as `switchboard add --from-registry` does. The
// values an entry asks for are fields; a secret one takes a
// {{secrets.NAME}} placeholder only (registry.CheckValues): the UI stores
// no secret, so the page says which `switchboard secrets set` to run.
// A version the registry marks deprecated (or deleted) says so, with the
// registry's reason, and is added only with its "force" box checked, as
// the CLI's --force and the API's force.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/registry"
)

func (u *UI) registryRoutes() {
	u.mux.HandleFunc("GET /registry", u.registryPage)
	u.mux.HandleFunc("GET /registry/add", u.registryAddPage)
	u.mux.HandleFunc("POST /registry/add", u.registryAdd)
}

type registryRow struct {
	Registry, Name, Version, Kinds, Status, Description, Invalid string
}

type registryPageData struct {
	chrome
	Query, Registry string
	// Name is the add page's; empty here (the template tells them apart).
	Name       string
	Registries []string
	Searched   bool
	Rows       []registryRow
	Errors     []string
}

func (u *UI) registryPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := registryPageData{chrome: chrome{"Registry", "registry"}, Query: q.Get("q"), Registry: q.Get("registry")}
	for _, n := range u.registries {
		p.Registries = append(p.Registries, n.Name)
	}
	if q.Has("q") {
		p.Searched = true
		var regs []registry.Named
		for _, n := range u.registries {
			if p.Registry == "" || n.Name == p.Registry {
				regs = append(regs, n)
			}
		}
		found := registry.SearchAll(r.Context(), regs, p.Query)
		for _, x := range found.Errors {
			p.Errors = append(p.Errors, x.Registry+": "+x.Error)
		}
		for _, s := range found.Servers {
			p.Rows = append(p.Rows, registryRow{Registry: s.Registry, Name: s.Name, Version: s.Version,
				Kinds: strings.Join(s.Kinds, ", "), Status: s.Status, Description: s.Description, Invalid: s.Invalid})
		}
	}
	u.render(w, http.StatusOK, "registry", "layout", p)
}

// registryField is one value an entry asks for, as a field of the form.
type registryField struct {
	registry.Variable
	Value  string
	Secret string // the secret's suggested name, for a secret one
	Errors []string
}

type registryAddData struct {
	chrome
	Registry, Name, Version, Kind, ID string
	Description, Status, Refused      string
	// Unlisted is why the registry marks this version deprecated or
	// deleted ("" for an active one): it is added only with Force.
	Unlisted string
	Force    bool
	Kinds    []string
	Fields   []registryField
	General  []string
}

// registryEntry reads name@version from the registry named (or the first
// that has it).
func (u *UI) registryEntry(r *http.Request, reg, name, version string) (registry.Entry, string, error) {
	var last error = registry.ErrNotFound
	for _, n := range u.registries {
		if reg != "" && n.Name != reg {
			continue
		}
		e, err := n.Client.Get(r.Context(), name, version)
		if err == nil {
			return e, n.Name, nil
		}
		last = err
	}
	return registry.Entry{}, "", last
}

// addData builds the add form of e, with the values of vals.
func addData(e registry.Entry, reg, kind, id string, vals map[string]string, force bool) registryAddData {
	d := registryAddData{chrome: chrome{"Add " + e.Server.Name, "registry"}, Registry: reg, Name: e.Server.Name, Version: e.Server.Version,
		Kind: kind, ID: id, Description: e.Server.Description, Status: e.Status(), Kinds: e.Server.Kinds(), Force: force}
	if d.ID == "" {
		d.ID = registry.DefaultID(e.Server.Name)
	}
	if err := registry.Installable(e, true); err != nil {
		d.Refused = err.Error()
		return d
	}
	if d.Status != registry.StatusActive {
		d.Unlisted = "The registry marks this version " + d.Status
		if msg := e.Official.StatusMessage; msg != "" {
			d.Unlisted += ": " + msg
		} else {
			d.Unlisted += "."
		}
	}
	vars, err := registry.Variables(e.Server, kind)
	if err != nil {
		d.Refused = err.Error()
		return d
	}
	for _, v := range vars {
		f := registryField{Variable: v, Value: vals[v.Key]}
		if v.IsSecret {
			f.Secret = registry.SecretName(d.ID, v.Key)
			if f.Value == "" {
				f.Value = "{{secrets." + f.Secret + "}}"
			}
		}
		d.Fields = append(d.Fields, f)
	}
	return d
}

func (u *UI) registryAddPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	e, reg, err := u.registryEntry(r, q.Get("registry"), q.Get("name"), q.Get("version"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	u.render(w, http.StatusOK, "registry", "layout", addData(e, reg, q.Get("kind"), "", nil, false))
}

func (u *UI) registryAdd(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f := r.PostForm
	e, reg, err := u.registryEntry(r, f.Get("registry"), f.Get("name"), f.Get("version"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	kind, id := f.Get("kind"), strings.TrimSpace(f.Get("id"))
	vals := map[string]string{}
	for k, v := range f {
		if key, ok := strings.CutPrefix(k, "v:"); ok && len(v) > 0 && v[0] != "" {
			vals[key] = v[0]
		}
	}
	d := addData(e, reg, kind, id, vals, f.Get("force") != "")
	fail := func(msg string) {
		d.General = append(d.General, msg)
		u.render(w, http.StatusUnprocessableEntity, "registry", "registry-add-form", d)
	}
	if d.Refused != "" {
		fail(d.Refused)
		return
	}
	if d.Unlisted != "" && !d.Force {
		fail(d.Unlisted + ` Check "Add it all the same (force)" to add it.`)
		return
	}
	problems, err := registry.CheckValues(e.Server, kind, vals)
	if err != nil {
		fail(err.Error())
		return
	}
	if len(problems) > 0 {
		for i := range d.Fields {
			if p, ok := problems[d.Fields[i].Key]; ok {
				d.Fields[i].Errors = append(d.Fields[i].Errors, p)
				if d.Fields[i].IsSecret {
					// A secret typed in is not sent back to the page.
					d.Fields[i].Value = "{{secrets." + d.Fields[i].Secret + "}}"
				}
			}
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range problems {
				yield(k)
			}
		}) {
			if !slices.ContainsFunc(d.Fields, func(x registryField) bool { return x.Key == k }) {
				d.General = append(d.General, k+": "+problems[k])
			}
		}
		u.render(w, http.StatusUnprocessableEntity, "registry", "registry-add-form", d)
		return
	}
	s, err := registry.Convert(e, &registry.ConvertOptions{ID: d.ID, Kind: kind, Values: vals, ContainerRuntime: u.containerRuntime, Force: d.Force})
	if err != nil {
		fail(err.Error())
		return
	}
	m, err := config.ServerEntry(s)
	if err != nil {
		fail(err.Error())
		return
	}
	raw, _ := json.Marshal(m)
	if _, err := u.d.AddServer(r.Context(), s.ID, raw); err != nil {
		d.General = append(d.General, err.Error())
		u.render(w, daemon.StatusOf(err), "registry", "registry-add-form", d)
		return
	}
	redirect(w, r, "/servers/"+s.ID)
}
