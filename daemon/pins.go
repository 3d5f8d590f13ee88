package daemon

// Pinned tool definitions, as every face shows and changes them: the
// definitions held for approval with their diffs (ToolChanges), approval
// (ApproveTool), and export and import of what is trusted. The store keeps
// them (shared by replicas); the host holds and offers tools by them
// (host/pin.go), and looks at its tools again after each change made here
// (another replica hears ChangePins). The CLI without a running serve
// reads and writes the store through the functions of the same names
// below, which take the store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/switchboardmcp/switchboard/store"
	"github.com/switchboardmcp/switchboard/toolpin"
)

var (
	// ErrNotHeld: nothing is held for approval for that tool.
	ErrNotHeld = errors.New("no definition is held for approval")
	// ErrHeldChanged: the definition held for the tool is not the one
	// approved (its digest differs): it changed since it was shown.
	ErrHeldChanged = errors.New("the held definition changed since it was shown")
)

// ToolChange is a tool definition held for approval.
type ToolChange struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Reason says why it is held: changed from its pin (naming the
	// fields), new under pin = "approve", or the scanner's findings.
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Digest is the held definition's: approving names it, so that what
	// is approved is what was shown.
	Digest string `json:"digest"`
	// Pinned is the trusted definition's digest; "" when none is (a new
	// tool).
	Pinned string `json:"pinned,omitempty"`
	// Diff is the change from the trusted definition, line by line ("- ",
	// "+ ", "  "); the whole definition, added, for a new tool.
	Diff string `json:"diff"`
	// Definition is the held definition.
	Definition json.RawMessage `json:"definition"`
}

// ToolChanges returns the definitions held for approval in st, of server's
// tools or every server's ("").
func ToolChanges(ctx context.Context, st *store.Store, server string) ([]ToolChange, error) {
	pins, err := st.Pins(ctx, server)
	if err != nil {
		return nil, err
	}
	out := []ToolChange{}
	for _, p := range pins {
		if p.Held == nil {
			continue
		}
		c := ToolChange{Server: p.Server, Tool: p.Tool, Reason: p.Held.Reason, Since: p.Held.Since, Digest: p.Held.Digest, Pinned: p.Digest, Definition: p.Held.Definition}
		held, err := toolpin.Parse(p.Held.Definition)
		if err != nil {
			c.Diff = fmt.Sprintf("(the held definition does not read: %v)", err)
			out = append(out, c)
			continue
		}
		var old toolpin.Definition
		if p.Digest != "" {
			old, _ = toolpin.Parse(p.Definition)
		}
		c.Diff = toolpin.Diff(old, held)
		out = append(out, c)
	}
	return out, nil
}

// ApproveTool trusts the definition held for server's tool in st, provided
// its digest is digest (the one shown), recording by as who approved it.
// ErrNotHeld and ErrHeldChanged say why not.
func ApproveTool(ctx context.Context, st *store.Store, server, tool, digest, by string) (toolpin.Pin, error) {
	p, err := st.Approve(ctx, server, tool, digest, by)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return toolpin.Pin{}, fmt.Errorf("tool %q of server %q: %w", tool, server, ErrNotHeld)
	case errors.Is(err, store.ErrConflict):
		return toolpin.Pin{}, fmt.Errorf("tool %q of server %q: %w: list the changes again and approve what they show now", tool, server, ErrHeldChanged)
	}
	return p, err
}

// ExportPins returns st's trusted definitions, of server's tools or every
// server's (""), in the export format: never what is held.
func ExportPins(ctx context.Context, st *store.Store, server string) (toolpin.Export, error) {
	pins, err := st.Pins(ctx, server)
	if err != nil {
		return toolpin.Export{}, err
	}
	out := toolpin.Export{Version: toolpin.ExportVersion, Pins: []toolpin.Pin{}}
	for _, p := range pins {
		if p.Digest == "" {
			continue
		}
		p.Held = nil
		out.Pins = append(out.Pins, p)
	}
	return out, nil
}

// maxImportPins bounds one import: a file of more pins than servers could
// ever list is refused rather than written.
const maxImportPins = 100_000

// ImportPins trusts the pins of e in st, all or none; the error names the
// first pin refused.
func ImportPins(ctx context.Context, st *store.Store, e toolpin.Export) error {
	if e.Version != toolpin.ExportVersion {
		return fmt.Errorf("tool pins: version %d, and this Switchboard reads version %d", e.Version, toolpin.ExportVersion)
	}
	if len(e.Pins) > maxImportPins {
		return fmt.Errorf("tool pins: %d pins, more than %d", len(e.Pins), maxImportPins)
	}
	return st.ImportPins(ctx, e.Pins)
}

// ToolChanges returns the definitions held for approval, of server's tools
// or every server's ("").
func (d *Daemon) ToolChanges(ctx context.Context, server string) ([]ToolChange, error) {
	return ToolChanges(ctx, d.store, server)
}

// ApproveTool trusts the definition held for server's tool if it is still
// the one with digest, and offers the tool.
func (d *Daemon) ApproveTool(ctx context.Context, server, tool, digest, by string) (toolpin.Pin, error) {
	p, err := ApproveTool(ctx, d.store, server, tool, digest, by)
	if err != nil {
		return p, err
	}
	d.recheckPins(server)
	return p, nil
}

// ExportPins returns the trusted definitions, of server's tools or every
// server's ("").
func (d *Daemon) ExportPins(ctx context.Context, server string) (toolpin.Export, error) {
	return ExportPins(ctx, d.store, server)
}

// ImportPins trusts the pins of e, all or none, and offers what they now
// allow.
func (d *Daemon) ImportPins(ctx context.Context, e toolpin.Export) error {
	if err := ImportPins(ctx, d.store, e); err != nil {
		return err
	}
	d.recheckPins("")
	return nil
}

// recheckPins makes the host look at server's tools (every server's: "")
// against their pins again.
func (d *Daemon) recheckPins(server string) {
	h := d.Host()
	if h == nil {
		return
	}
	if err := h.RecheckPins(server); err != nil {
		d.log.Warn("looking at tools again after their pins changed", "server", server, "err", err)
	}
}

// Approver names who approves a definition through a face, for the pin's
// record: the subject of the caller's OAuth token when there is one, else
// the face ("api", "web UI").
func Approver(ctx context.Context, face string) string {
	if ti := auth.TokenInfoFromContext(ctx); ti != nil && ti.UserID != "" {
		return ti.UserID + " (" + face + ")"
	}
	return face
}
