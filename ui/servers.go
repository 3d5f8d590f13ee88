package ui

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/host"
	"github.com/switchboardmcp/switchboard/store"
)

func (u *UI) serverRoutes() {
	u.mux.HandleFunc("GET /servers", u.serversPage)
	u.mux.HandleFunc("GET /servers/live", u.serversLive)
	u.mux.HandleFunc("POST /servers", u.addServer)
	u.mux.HandleFunc("GET /servers/{id}", u.serverPage)
	u.mux.HandleFunc("POST /servers/{id}", u.editServer)
	u.mux.HandleFunc("POST /servers/{id}/{op}", u.serverOp)
	u.mux.HandleFunc("GET /servers/{id}/resource", u.readResource)
	u.mux.HandleFunc("GET /servers/{id}/remove", u.removeButton)
	u.mux.HandleFunc("GET /servers/{id}/history", u.serverHistory)
}

// removeButton answers the Remove button's first press (?confirm=1): the
// button that removes, asking "Remove ID?", and Keep, which brings the
// first button back. Nothing is removed until the second press.
func (u *UI) removeButton(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	m, err := u.d.GetServer(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	name := "remove"
	if r.URL.Query().Get("confirm") == "1" {
		name = "remove-confirm"
	}
	u.render(w, http.StatusOK, "servers", name, rowOf(m))
}

// serverRow is a server as the table shows it.
type serverRow struct {
	ID, Key     string
	Origin      string
	Enabled     bool
	Runtime     bool
	Version     int64
	State       string
	Detail      string
	Error       string
	Tools       int
	Uptime      string
	Description string
	OOB         bool
	// Spark is its calls and errors over the last hour; nil on the
	// poll's cells, which do not redraw it.
	Spark *sparkline
}

func rowOf(m daemon.ManagedServer) serverRow {
	r := serverRow{ID: m.ID, Key: hex.EncodeToString([]byte(m.ID)), Origin: m.Origin, Enabled: m.Enabled,
		Runtime: m.Origin == daemon.OriginRuntime, Version: m.Version, State: "disabled"}
	if st := m.Status; st != nil {
		r.State, r.Detail, r.Tools, r.Description = string(st.State), st.Detail, st.Tools, st.Description
		if st.Err != nil {
			r.Error = st.Err.Error()
		}
		if !st.ReadySince.IsZero() {
			r.Uptime = time.Since(st.ReadySince).Round(time.Second).String()
		}
	}
	return r
}

type serversTable struct {
	Servers []serverRow
	Sig     string // the ids shown, hashed: the poll swaps the table when they change
	OOB     bool
}

type serversPageData struct {
	chrome
	Table serversTable
	Form  form
}

// sparkSpan and sparkPoints are the servers' sparklines' window and
// points: an hour of minutes.
const (
	sparkSpan   = time.Hour
	sparkPoints = 60
)

// sparks adds each server's sparkline to t: its calls and errors over the
// last sparkSpan. A failure to read them leaves them out (and is logged):
// the table is still drawn.
func (u *UI) sparks(ctx context.Context, t *serversTable) {
	now := time.Now()
	rep, err := u.d.UsageSeries(ctx, store.UsageSeriesQuery{Since: now.Add(-sparkSpan), Until: now, Points: sparkPoints, By: "server"})
	if err != nil {
		u.log.Warn("ui: reading the servers' usage", "err", err)
		return
	}
	n := sparkPoints
	by := map[string]store.UsageSeries{}
	for _, s := range rep.Series {
		by[s.Key], n = s, len(s.Points)
	}
	for i := range t.Servers {
		calls, errs := make([]int64, n), make([]int64, n)
		for j, p := range by[t.Servers[i].ID].Points {
			calls[j], errs[j] = p.Calls, p.Errors
		}
		sp := newSparkline("server "+t.Servers[i].ID, sparkSpan, calls, errs)
		t.Servers[i].Spark = &sp
	}
}

func (u *UI) table(ctx context.Context) (serversTable, error) {
	t, err := u.tableOnly(ctx)
	if err == nil {
		u.sparks(ctx, &t)
	}
	return t, err
}

// tableOnly is the table without its sparklines: the poll's.
func (u *UI) tableOnly(ctx context.Context) (serversTable, error) {
	all, err := u.d.ListServers(ctx)
	if err != nil {
		return serversTable{}, err
	}
	t := serversTable{}
	h := sha256.New()
	for _, m := range all {
		r := rowOf(m)
		t.Servers = append(t.Servers, r)
		// Enabled and Version change the buttons a row offers.
		fmt.Fprintf(h, "%q %v %d\n", r.ID, r.Enabled, r.Version)
	}
	t.Sig = hex.EncodeToString(h.Sum(nil))[:16]
	return t, nil
}

func (u *UI) serversPage(w http.ResponseWriter, r *http.Request) {
	t, err := u.table(r.Context())
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "servers", "layout", serversPageData{chrome{"Servers", "servers"}, t, newForm()})
}

// serversLive answers the poll of the servers page: the whole table when
// the servers shown differ from the page's (?sig), else each server's
// state and tool count alone, as out-of-band swaps that leave the rest of
// the page (and the focus) alone.
func (u *UI) serversLive(w http.ResponseWriter, r *http.Request) {
	t, err := u.tableOnly(r.Context())
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	name := "live-cells"
	if r.URL.Query().Get("sig") != t.Sig {
		name = "servers-table"
		u.sparks(r.Context(), &t)
	}
	t.OOB = true
	for i := range t.Servers {
		t.Servers[i].OOB = true
	}
	u.render(w, http.StatusOK, "servers", name, t)
}

// form is a form's values and its errors, by field.
type form struct {
	Values  map[string]string
	Errors  map[string][]string
	General []string
	Edit    bool // a server's edit form: its id is not a field
}

func newForm() form { return form{Values: map[string]string{}, Errors: map[string][]string{}} }

func (f *form) fail(field, msg string) { f.Errors[field] = append(f.Errors[field], msg) }
func (f *form) ok() bool               { return len(f.Errors) == 0 && len(f.General) == 0 }

// serverFields are the add and edit forms' fields; anything else of an
// entry is kept as it is stored.
var serverFields = []string{"transport", "command", "args", "url", "env", "description"}

// entryOf builds a server entry from the form, over base (a stored entry,
// or nil). Lists are one item a line; env is NAME=VALUE a line.
func entryOf(r *http.Request, base json.RawMessage) (map[string]any, form) {
	f := newForm()
	m := map[string]any{}
	if base != nil {
		json.Unmarshal(base, &m)
	}
	for _, k := range append([]string{"id"}, serverFields...) {
		f.Values[k] = r.PostFormValue(k)
	}
	for _, k := range serverFields {
		delete(m, k)
	}
	set := func(k string, v any) { m[k] = v }
	if t := strings.TrimSpace(f.Values["transport"]); t != "" {
		set("transport", t)
	}
	if c := strings.TrimSpace(f.Values["command"]); c != "" {
		set("command", c)
	}
	if a := lines(f.Values["args"]); len(a) > 0 {
		set("args", a)
	}
	if s := strings.TrimSpace(f.Values["url"]); s != "" {
		set("url", s)
	}
	if s := strings.TrimSpace(f.Values["description"]); s != "" {
		set("description", s)
	}
	if e := lines(f.Values["env"]); len(e) > 0 {
		env := map[string]string{}
		for _, l := range e {
			k, v, ok := strings.Cut(l, "=")
			if !ok || strings.TrimSpace(k) == "" {
				f.fail("env", fmt.Sprintf("%q is not NAME=VALUE", k))
				continue
			}
			env[strings.TrimSpace(k)] = v
		}
		set("env", env)
	}
	return m, f
}

// lines splits a textarea into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// problems puts an operation's error in the form: each config.Problem
// next to its field (its first segment: "env.API_KEY" is env's).
func (f *form) problems(err error) {
	var es []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		es = j.Unwrap()
	} else {
		es = []error{err}
	}
	for _, e := range es {
		var p *config.Problem
		if !errors.As(e, &p) {
			switch {
			case errors.Is(e, store.ErrExists):
				f.fail("id", "taken: "+e.Error())
			default:
				f.General = append(f.General, e.Error())
			}
			continue
		}
		field := p.Field
		if i := strings.IndexAny(field, ".["); i >= 0 {
			field = field[:i]
		}
		if !slices.Contains(serverFields, field) && field != "id" {
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

func (u *UI) addServer(w http.ResponseWriter, r *http.Request) {
	m, f := entryOf(r, nil)
	id := strings.TrimSpace(f.Values["id"])
	if id == "" {
		f.fail("id", "required")
	}
	if f.ok() {
		raw, _ := json.Marshal(m)
		if _, err := u.d.AddServer(r.Context(), id, raw); err != nil {
			f.problems(err)
		}
	}
	if !f.ok() {
		u.render(w, http.StatusUnprocessableEntity, "servers", "add-form", f)
		return
	}
	t, err := u.table(r.Context())
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	t.OOB = true
	u.render(w, http.StatusOK, "servers", "added", addedData{Form: newForm(), Table: t, Flash: flashData{Msg: "Added " + id + ".", OOB: true}})
}

type addedData struct {
	Form  form
	Table serversTable
	Flash flashData
}

// serverOp runs restart, refresh, enable, disable or delete from a
// server's buttons. Enable, disable and delete carry the version of the
// row they were shown on: a change saved meanwhile (on another page, by
// the API, on another replica) refuses them, as If-Match does.
func (u *UI) serverOp(w http.ResponseWriter, r *http.Request) {
	id, op := r.PathValue("id"), r.PathValue("op")
	ctx := r.Context()
	version, _ := strconv.ParseInt(r.PostFormValue("version"), 10, 64) // 0: no check
	var err error
	var done string
	switch op {
	case "restart":
		err, done = u.d.RestartServer(ctx, id), "Restarting "+id+"."
	case "refresh":
		err, done = u.d.RefreshServerTools(ctx, id), "Refreshed the tools of "+id+"."
	case "enable", "disable":
		_, err = u.d.SetServerEnabled(ctx, id, op == "enable", version)
		done = strings.ToUpper(op[:1]) + op[1:] + "d " + id + "."
	case "delete":
		err, done = u.d.DeleteServer(ctx, id, version), "Deleted "+id+"."
	default:
		http.NotFound(w, r)
		return
	}
	status, msg, isErr := http.StatusOK, done, false
	switch {
	case errors.Is(err, store.ErrConflict):
		// The table as it is now comes with it, so that the next press
		// is of what is.
		status, msg, isErr = daemon.StatusOf(err), id+" was changed since this page showed it, so nothing was done: the table shows it as it is now.", true
	case err != nil:
		u.flash(w, daemon.StatusOf(err), id+": "+err.Error(), true)
		return
	}
	t, terr := u.table(ctx)
	if terr != nil {
		u.flash(w, status, msg, isErr)
		return
	}
	t.OOB = true
	u.render(w, status, "servers", "changed", changedData{Table: t, Flash: flashData{Msg: msg, Err: isErr, OOB: true}})
}

type changedData struct {
	Table serversTable
	Flash flashData
}

// --- one server

type serverPageData struct {
	chrome
	Row       serverRow
	Status    *host.ServerStatus
	Source    string
	Tools     []host.Tool
	Resources []host.Resource
	Prompts   []host.Prompt
	Form      form // the edit form of a run-time server
	Saved     string
	Held      int // its tool definitions held for approval
	// Pins are its trusted tool definitions (at most shownPins, by tool
	// name); PinsMore how many more there are.
	Pins     []pinRow
	PinsMore int
	History  historyData
}

func (u *UI) serverData(r *http.Request, id string) (serverPageData, error) {
	m, err := u.d.GetServer(r.Context(), id)
	if err != nil {
		return serverPageData{}, err
	}
	p := serverPageData{chrome: chrome{"Server " + id, "servers"}, Row: rowOf(m), Status: m.Status, Source: m.Source, Form: newForm()}
	if m.Config != nil {
		p.Form = formOfEntry(id, m.Config)
	}
	p.Held = u.heldCount(r.Context(), id)
	p.Pins, p.PinsMore = u.pins(r.Context(), id)
	if hs, err := u.d.ServerHistory(r.Context(), id); err == nil {
		p.History = historyOf(m, hs)
	}
	h := u.d.Host()
	if h == nil || m.Status == nil {
		return p, nil
	}
	for _, t := range h.Tools() {
		if t.Server == id {
			p.Tools = append(p.Tools, t)
		}
	}
	// Listing resources and prompts asks the server: bounded so that a
	// hung server does not hold the page.
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if res, err := h.Resources(ctx); err == nil {
		for _, x := range res {
			if x.Server == id {
				p.Resources = append(p.Resources, x)
			}
		}
	}
	if ps, err := h.Prompts(ctx); err == nil {
		for _, x := range ps {
			if x.Server == id {
				p.Prompts = append(p.Prompts, x)
			}
		}
	}
	// Listing scanned the prompts and resources: their findings, and
	// those it left out, are in the status now.
	if st, err := h.Status(id); err == nil {
		cp := *p.Status
		cp.Findings, cp.Warnings = st.Findings, st.Warnings
		p.Status = &cp
	}
	return p, nil
}

// formOfEntry fills the edit form from a stored entry.
func formOfEntry(id string, raw json.RawMessage) form {
	f := newForm()
	f.Values["id"], f.Edit = id, true
	var m map[string]any
	json.Unmarshal(raw, &m)
	str := func(k string) string { s, _ := m[k].(string); return s }
	for _, k := range []string{"transport", "command", "url", "description"} {
		f.Values[k] = str(k)
	}
	if a, ok := m["args"].([]any); ok {
		var ss []string
		for _, x := range a {
			ss = append(ss, fmt.Sprint(x))
		}
		f.Values["args"] = strings.Join(ss, "\n")
	}
	if e, ok := m["env"].(map[string]any); ok {
		var ss []string
		for k, v := range e {
			ss = append(ss, k+"="+fmt.Sprint(v))
		}
		slices.Sort(ss)
		f.Values["env"] = strings.Join(ss, "\n")
	}
	return f
}

func (u *UI) serverPage(w http.ResponseWriter, r *http.Request) {
	p, err := u.serverData(r, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	u.render(w, http.StatusOK, "server", "layout", p)
}

func (u *UI) editServer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	cur, err := u.d.GetServer(r.Context(), id)
	if err != nil {
		http.Error(w, err.Error(), daemon.StatusOf(err))
		return
	}
	m, f := entryOf(r, cur.Config)
	f.Values["id"], f.Edit = id, true
	// The version the form was made from: a change saved meanwhile (in
	// another tab, through the API, by another replica) is not
	// overwritten unseen (the API's If-Match).
	version, _ := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if f.ok() {
		raw, _ := json.Marshal(m)
		if saved, err := u.d.UpdateServer(r.Context(), id, raw, version); errors.Is(err, store.ErrConflict) {
			f.General = append(f.General, fmt.Sprintf("%s was changed since this form was opened (it is at version %d now): reload the page to edit what it is now.", id, cur.Version))
		} else if err != nil {
			f.problems(err)
		} else {
			version = saved.Version
		}
	}
	status, saved := http.StatusUnprocessableEntity, ""
	if f.ok() {
		status, saved = http.StatusOK, "Saved; "+id+" restarts with it."
	}
	u.render(w, status, "server", "edit-form", editData{ID: id, Version: version, Form: f, Saved: saved})
}

type editData struct {
	ID      string
	Version int64 // the version the form edits (sent back with it)
	Form    form
	Saved   string
}

// readResource shows one resource of a server.
func (u *UI) readResource(w http.ResponseWriter, r *http.Request) {
	h := u.hostOr(w)
	if h == nil {
		return
	}
	id, uri := r.PathValue("id"), r.URL.Query().Get("uri")
	res, err := h.ReadResource(r.Context(), id, uri, nil)
	d := resourceData{URI: uri}
	if err != nil {
		d.Err = err.Error()
	} else {
		for _, c := range res.Contents {
			d.Blocks = append(d.Blocks, blockOfResource(c))
		}
	}
	u.render(w, http.StatusOK, "server", "resource", d)
}

type resourceData struct {
	URI    string
	Err    string
	Blocks []block
}
