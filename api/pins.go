package api

// Pinned tool definitions: the definitions held for approval, with their
// diffs; approving one by the digest shown; export and import of what is
// trusted. Each is the daemon's operation (daemon/pins.go); a caller sees
// and approves only the tools of the servers its grant covers.

import (
	"context"
	"net/http"
	"net/url"

	"github.com/switchboardmcp/switchboard/daemon"
	"github.com/switchboardmcp/switchboard/toolpin"
)

func (a *API) listToolChanges(w http.ResponseWriter, r *http.Request) error {
	server := r.URL.Query().Get("server")
	if server != "" {
		if err := a.granted(r, server); err != nil {
			return err
		}
	}
	all, err := a.d.ToolChanges(r.Context(), server)
	if err != nil {
		return err
	}
	gr := a.d.Grant(r.Context())
	items := make([]daemon.ToolChange, 0, len(all))
	for _, c := range all {
		if gr.Server(c.Server) {
			items = append(items, c)
		}
	}
	return pageOf(a, w, r, items, func(c daemon.ToolChange) string { return c.Server + "\x00" + c.Tool })
}

// approveJSON is an approval's body.
type approveJSON struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Digest string `json:"digest"`
}

func (a *API) approveTool(w http.ResponseWriter, r *http.Request) error {
	var body approveJSON
	if err := a.decode(w, r, &body); err != nil {
		return err
	}
	var missing []fieldError
	for _, f := range []struct{ name, v string }{{"server", body.Server}, {"tool", body.Tool}, {"digest", body.Digest}} {
		if f.v == "" {
			missing = append(missing, fieldError{Field: f.name, Detail: "required"})
		}
	}
	if len(missing) > 0 {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid approval", Errors: missing}
	}
	if err := a.granted(r, body.Server); err != nil {
		return err
	}
	p, err := a.d.ApproveTool(r.Context(), body.Server, body.Tool, body.Digest, daemon.Approver(r.Context(), "api"))
	if err != nil {
		return err
	}
	return a.writeJSON(w, http.StatusOK, p)
}

func (a *API) exportPins(w http.ResponseWriter, r *http.Request) error {
	server := r.URL.Query().Get("server")
	if server != "" {
		if err := a.granted(r, server); err != nil {
			return err
		}
	}
	e, err := a.d.ExportPins(r.Context(), server)
	if err != nil {
		return err
	}
	gr := a.d.Grant(r.Context())
	kept := e.Pins[:0]
	for _, p := range e.Pins {
		if gr.Server(p.Server) {
			kept = append(kept, p)
		}
	}
	e.Pins = kept
	return a.writeJSON(w, http.StatusOK, e)
}

func (a *API) importPins(w http.ResponseWriter, r *http.Request) error {
	var e toolpin.Export
	if err := a.decode(w, r, &e); err != nil {
		return err
	}
	// A grant that does not cover a server cannot trust its tools.
	for _, p := range e.Pins {
		if err := a.granted(r, p.Server); err != nil {
			return err
		}
	}
	if err := a.d.ImportPins(r.Context(), e); err != nil {
		return &problem{Status: http.StatusUnprocessableEntity, Title: "invalid tool pins", Detail: err.Error()}
	}
	return a.writeJSON(w, http.StatusOK, map[string]int{"imported": len(e.Pins)})
}

// ToolChanges lists the tool definitions held for approval, of server's
// tools or every server's ("") (daemon.Daemon.ToolChanges).
func (c *Client) ToolChanges(ctx context.Context, server string) ([]daemon.ToolChange, error) {
	path := "tool-changes"
	all, err := list(ctx, c, path, func(tc daemon.ToolChange) daemon.ToolChange { return tc })
	if err != nil || server == "" {
		return all, err
	}
	out := []daemon.ToolChange{}
	for _, tc := range all {
		if tc.Server == server {
			out = append(out, tc)
		}
	}
	return out, nil
}

// ApproveTool trusts the definition held for server's tool if its digest
// is digest (daemon.Daemon.ApproveTool); its errors are of the daemon's
// kinds (not_held, held_changed).
func (c *Client) ApproveTool(ctx context.Context, server, tool, digest string) (toolpin.Pin, error) {
	var p toolpin.Pin
	err := c.do(ctx, http.MethodPost, "tool-changes/approve", approveJSON{Server: server, Tool: tool, Digest: digest}, &p)
	return p, err
}

// ExportPins returns the trusted definitions, of server's tools or every
// server's ("").
func (c *Client) ExportPins(ctx context.Context, server string) (toolpin.Export, error) {
	path := "tool-pins"
	if server != "" {
		path += "?server=" + url.QueryEscape(server)
	}
	var e toolpin.Export
	err := c.do(ctx, http.MethodGet, path, nil, &e)
	return e, err
}

// ImportPins trusts the pins of e, all or none.
func (c *Client) ImportPins(ctx context.Context, e toolpin.Export) error {
	return c.do(ctx, http.MethodPost, "tool-pins", e, nil)
}
