package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/toolpin"
)

// Pinned tool definitions (the toolpin package). A server's pin setting
// says how its tools' definitions are pinned in Options.Pins (the state
// store, shared by replicas):
//
//   - off (the default): not pinned;
//   - first-use: the first definition seen of each tool is trusted;
//   - approve: a tool is offered once a person has approved its
//     definition.
//
// A tool whose definition differs from the trusted one — the server
// changed it after a list_changed, a restart or an upgrade — is held: not
// in the catalog, so no endpoint lists it and a session that listed it
// before is told its tools changed and no longer finds it; a call to it
// fails with ErrToolHeld naming what changed; the held definition is
// recorded for approval (`switchboard tools changes`, the REST API, the
// web UI), and an EventToolHeld is published. Once a person approves it
// (the store's Approve, then RecheckPins) it is the trusted definition and
// is offered.
//
// The digest is of the definition as the host offers it (cleaned and
// within its limits): what reaches a model is what is pinned, so the
// cached list a lazy server offers is checked exactly as a live one.
// Changing the host's limits so that what is offered changes holds the
// tools it changes, which is right: clients would see another definition.
//
// A server's scan = "hold" uses the same approvals: a tool whose
// definition shows signs of poisoning is held until a person approves
// that definition, and is then offered, findings and all, until it
// changes.
//
// When the pin store cannot be read or written the tools that need it are
// held (the reason says so) and looked at again at the next listing or
// RecheckPins: a definition is never trusted unchecked.

// A PinStore keeps pinned tool definitions between runs and across
// replicas. *store.Store is one. Its methods are called from the server's
// own goroutines and must be safe for concurrent use.
type PinStore interface {
	// Pins returns the pins of server's tools.
	Pins(ctx context.Context, server string) ([]toolpin.Pin, error)
	// TrustFirstUse trusts d for server's tool if nothing is trusted yet
	// (the first caller wins across processes) and returns the pin.
	TrustFirstUse(ctx context.Context, server, tool string, d toolpin.Definition) (toolpin.Pin, error)
	// Hold records d as held for approval, for reason.
	Hold(ctx context.Context, server, tool string, d toolpin.Definition, reason string) (toolpin.Pin, error)
	// ClearHeld forgets what is held for server's tool.
	ClearHeld(ctx context.Context, server, tool string) error
}

// ErrToolHeld: the tool's definition is held until a person approves it;
// the error names the tool and what changed.
var ErrToolHeld = errors.New("held until approved")

// pinMode is s's pin setting.
func (s *server) pinMode() string {
	if s.cfg.Pin == "" || s.cfg.Transport == TransportInProcess {
		return config.PinOff
	}
	return s.cfg.Pin
}

// pinTools decides, for each tool of out not refused already, whether it is
// held (discovered.held), from its pin and its scan findings
// (discovered.flagged), recording held definitions and trusting first
// uses in the pin store. It is called at every listing and by RecheckPins.
func (s *server) pinTools(out []discovered) {
	mode := s.pinMode()
	flagged := false
	for i := range out {
		out[i].held = ""
		flagged = flagged || out[i].flagged != ""
	}
	if mode == config.PinOff && !flagged {
		return
	}
	allowed := func(name string) bool {
		return s.cfg.ToolsAllowlist == nil || slices.Contains(s.cfg.ToolsAllowlist, name)
	}
	ps := s.h.opts.Pins
	if ps == nil {
		// Nowhere to keep a pin or an approval: the tools that need one
		// are held (approve, and scan hold), and first-use pins nothing.
		for i, d := range out {
			if d.refused != "" || d.err != nil || !allowed(d.tool.Name) {
				continue
			}
			switch {
			case d.flagged != "":
				out[i].held = "held until approved: its definition shows signs of poisoning: " + d.flagged + " (and there is no state store to approve it in)"
			case mode == config.PinApprove:
				out[i].held = "held until approved: pin = \"approve\" (and there is no state store to approve it in)"
			}
		}
		return
	}
	ctx, cancel := context.WithTimeout(s.life, cacheTimeout)
	defer cancel()
	all, err := ps.Pins(ctx, s.cfg.ID)
	pins := make(map[string]toolpin.Pin, len(all))
	for _, p := range all {
		pins[p.Tool] = p
	}
	for i, d := range out {
		if d.refused != "" || d.err != nil || !allowed(d.tool.Name) {
			continue
		}
		if err != nil {
			out[i].held = "held: the tool pins cannot be read (" + s.h.redactErr(err).Error() + "); it is looked at again at the next listing"
			continue
		}
		def := toolpin.Of(d.tool)
		digest := def.Digest()
		p, known := pins[d.tool.Name]
		trusted := known && p.Digest != ""
		var reason string
		switch {
		case trusted && p.Digest == digest:
			if p.Held != nil {
				// The server declares the trusted definition again.
				if err := ps.ClearHeld(ctx, s.cfg.ID, d.tool.Name); err != nil {
					s.log.Warn("clearing a held tool definition", "tool", d.tool.Name, "err", err)
				}
			}
			continue
		case trusted && mode != config.PinOff:
			reason = changedReason(p, def)
		case d.flagged != "":
			reason = "its definition shows signs of poisoning: " + d.flagged
		case mode == config.PinApprove:
			reason = "new: pin = \"approve\", and nobody has approved its definition"
		case mode == config.PinFirstUse:
			won, err := ps.TrustFirstUse(ctx, s.cfg.ID, d.tool.Name, def)
			if err != nil {
				out[i].held = "held: its first definition could not be pinned (" + s.h.redactErr(err).Error() + "); it is looked at again at the next listing"
				continue
			}
			if won.Digest == digest {
				continue
			}
			// Another process trusted another definition first.
			p, reason = won, changedReason(won, def)
		default:
			continue
		}
		out[i].held = "held until approved: " + reason + " (switchboard tools changes)"
		if p.Held != nil && p.Held.Digest == digest && p.Held.Reason == reason {
			continue // recorded already, and said
		}
		if _, err := ps.Hold(ctx, s.cfg.ID, d.tool.Name, def, reason); err != nil {
			s.log.Warn("recording a held tool definition", "tool", d.tool.Name, "err", err)
		}
		s.log.Warn("tool held until a person approves its definition", "tool", shownName(d.tool.Name, s.h.lim), "reason", reason)
		s.hist.incident(Incident{Kind: IncidentToolHeld, Tool: shownName(d.tool.Name, s.h.lim), Reason: s.h.redact(reason)})
		s.h.events.publish(Event{Kind: EventToolHeld, Server: s.cfg.ID, Tool: d.tool.Name, Held: reason})
	}
}

// changedReason says how def differs from p's trusted definition.
func changedReason(p toolpin.Pin, def toolpin.Definition) string {
	old, err := toolpin.Parse(p.Definition)
	if err != nil {
		return "changed from its pin"
	}
	return "changed from its pin (" + strings.Join(toolpin.Changed(old, def), ", ") + ")"
}

// RecheckPins looks at the listed tools of server id, or of every server
// when id is "", against their pins again — after an approval, an import
// or a deletion of pins, here or in another process — and offers what is
// now trusted, telling the watchers when the catalog changed.
func (h *Host) RecheckPins(id string) error {
	var servers []*server
	if id != "" {
		s, err := h.server(id)
		if err != nil {
			return err
		}
		servers = []*server{s}
	} else {
		servers = h.list()
	}
	for _, s := range servers {
		s.pinChecks.Add(1)
		h.recheckPins(s)
	}
	return nil
}

// storeTools makes tools s's list (s.mu is held). pins is s.pinChecks as
// read before the list was pinned: when a recheck began since, the list
// may have been pinned against pins older than the change that brought it
// (an approval heard from another replica while the tools were listed
// again), and stored after the recheck looked, so it reports that the
// caller must recheck the list, once s.mu is released.
func (s *server) storeTools(tools []discovered, pins uint64) (repin bool) {
	s.tools, s.listed = tools, true
	return s.pinChecks.Load() != pins
}

// recheckPins looks at s's listed tools against their pins again. A list
// stored meanwhile is left to whoever stored it (storeTools).
func (h *Host) recheckPins(s *server) {
	s.mu.Lock()
	tools := slices.Clone(s.tools)
	listed := s.listed
	s.mu.Unlock()
	if !listed || len(tools) == 0 {
		return
	}
	before := make([]string, len(tools))
	for i, d := range tools {
		before[i] = d.held
	}
	s.pinTools(tools)
	changed := false
	for i, d := range tools {
		changed = changed || d.held != before[i]
	}
	if !changed {
		return
	}
	s.mu.Lock()
	if len(s.tools) != len(tools) || (len(tools) > 0 && s.tools[0].tool != tools[0].tool) {
		s.mu.Unlock()
		return // listed again meanwhile: storeTools
	}
	for i := range tools {
		s.tools[i].held = tools[i].held
	}
	s.mu.Unlock()
	h.catalogMu.Lock()
	h.rebuildCatalog()
	h.catalogMu.Unlock()
	h.changed(Change{Server: s.cfg.ID, Kind: ToolsChanged})
}

// HeldTool reports whether name (a host name, as a tool would be offered
// under) is a tool held until approved, with its server, the server's own
// name for it, and why.
func (h *Host) HeldTool(name string) (server, tool, reason string, ok bool) {
	h.mu.RLock()
	cat := h.catalog
	h.mu.RUnlock()
	if cat == nil {
		return "", "", "", false
	}
	e, ok := cat.held[name]
	return e.server, e.tool, e.reason, ok
}

// heldEntry is a held tool in the catalog's record of them.
type heldEntry struct{ server, tool, reason string }

// heldError is the error of a call to a held tool.
func heldError(name string, e heldEntry) error {
	// The reason begins "held…": said once, by ErrToolHeld.
	return fmt.Errorf("tool %q of server %q: %w: %s", name, e.server, ErrToolHeld, strings.TrimPrefix(strings.TrimPrefix(e.reason, "held until approved: "), "held: "))
}
