package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/schema"
)

const reasonNotAllowed = "not in tools_allowlist"

// MaxToolNameLength is the longest tool name the host offers: LLM providers
// (OpenAI, Anthropic) refuse longer ones.
const MaxToolNameLength = 64

// Tool is a tool the host offers.
type Tool struct {
	// Name is the host's name for the tool, unique within the host.
	Name string
	// Server is the id of the server that has it.
	Server string
	// Tool is the tool as the server declared it; Tool.Name is the
	// server's own name.
	Tool *mcp.Tool
}

type entry struct {
	Tool
	srv    *server
	schema *schema.Schema
}

// catalog is an immutable snapshot of the offered tools.
type catalog struct {
	tools    []*entry
	byName   map[string]*entry
	counts   map[string]int
	skipped  map[string][]Skipped
	warnings map[string][]string
	// held are the tools held until approved, by the host name they
	// would be offered under (pin.go): a call to one is told why.
	held map[string]heldEntry
}

// Tools returns the tools the host offers, in declaration order (servers in
// config order, each server's tools in its own order).
func (h *Host) Tools() []Tool {
	h.mu.RLock()
	cat := h.catalog
	h.mu.RUnlock()
	if cat == nil {
		return nil
	}
	out := make([]Tool, len(cat.tools))
	for i, e := range cat.tools {
		out[i] = e.Tool
	}
	return out
}

// ToolNameFormat is the format the host names tools with.
func (h *Host) ToolNameFormat() string { return h.opts.ToolNameFormat }

// Tool returns the offered tool with the given host name.
func (h *Host) Tool(name string) (Tool, bool) {
	e, ok := h.lookup(name)
	if !ok {
		return Tool{}, false
	}
	return e.Tool, true
}

func (h *Host) lookup(name string) (*entry, bool) {
	h.mu.RLock()
	cat := h.catalog
	h.mu.RUnlock()
	if cat == nil {
		return nil, false
	}
	e, ok := cat.byName[name]
	return e, ok
}

// rebuildCatalog names every server's tools and installs a new snapshot.
// Earlier declarations win collisions: servers in config order, tools in
// each server's order. A server's skipped tools and warnings are logged
// when they differ from the previous snapshot's, not at every rebuild (one
// per server that joins or restarts). h.catalogMu is held.
func (h *Host) rebuildCatalog() {
	h.mu.RLock()
	prev := h.catalog
	h.mu.RUnlock()
	cat := &catalog{
		byName:   map[string]*entry{},
		counts:   map[string]int{},
		skipped:  map[string][]Skipped{},
		warnings: map[string][]string{},
		held:     map[string]heldEntry{},
	}
	for _, s := range h.list() {
		s.mu.Lock()
		tools, listed := s.tools, s.listed
		// A restarting or lazily idle server keeps its tools offered:
		// calls wait for it (or start it).
		offered := s.state != StateFailed && s.state != StateClosed
		s.mu.Unlock()
		if !offered {
			continue
		}
		id := s.cfg.ID
		var allow map[string]bool
		if s.cfg.ToolsAllowlist != nil {
			allow = map[string]bool{}
			for _, n := range s.cfg.ToolsAllowlist {
				allow[n] = true
			}
		}
		have := map[string]bool{}
		for _, d := range tools {
			t := d.tool
			have[t.Name] = true
			skip := func(reason string) {
				// A refused name is shown escaped; a reason may quote the
				// server's schema.
				reason, _ = h.lim.cleanText(reason, h.lim.desc)
				cat.skipped[id] = append(cat.skipped[id], Skipped{Tool: shownName(t.Name, h.lim), Reason: reason})
			}
			if allow != nil && !allow[t.Name] {
				skip(reasonNotAllowed)
				continue
			}
			if d.refused != "" {
				skip(d.refused)
				continue
			}
			if d.err != nil {
				skip("input schema does not compile: " + d.err.Error())
				continue
			}
			name := ToolName(h.opts.ToolNameFormat, id, t.Name)
			if s.ownNames {
				name = ToolName("{tool}", id, t.Name)
			}
			if d.held != "" {
				skip(d.held)
				if _, dup := cat.byName[name]; !dup {
					cat.held[name] = heldEntry{server: id, tool: t.Name, reason: d.held}
				}
				continue
			}
			if prev, dup := cat.byName[name]; dup {
				skip(fmt.Sprintf("name %q collides with tool %q of server %q, declared earlier", name, prev.Tool.Tool.Name, prev.Server))
				continue
			}
			e := &entry{Tool: Tool{Name: name, Server: id, Tool: t}, srv: s, schema: d.schema}
			cat.byName[name] = e
			cat.tools = append(cat.tools, e)
			cat.counts[id]++
		}
		if listed {
			// Not before the server has listed its tools: a server still
			// starting has none yet, and would be told it lacks them all.
			cat.warnings[id] = append(cat.warnings[id], missingTools(s.cfg, have)...)
		}
		if prev != nil && slices.Equal(prev.skipped[id], cat.skipped[id]) && slices.Equal(prev.warnings[id], cat.warnings[id]) {
			// Said already: a rebuild for another server (one that joins
			// or restarts) changes nothing here.
			continue
		}
		for _, sk := range cat.skipped[id] {
			if sk.Reason == reasonNotAllowed {
				// An allowlist is deliberate: not worth a warning per tool.
				s.log.Debug("tool skipped", "tool", sk.Tool, "reason", sk.Reason)
				continue
			}
			s.log.Warn("tool skipped", "tool", sk.Tool, "reason", sk.Reason)
		}
		for _, w := range cat.warnings[id] {
			s.log.Warn(w)
		}
	}
	h.mu.Lock()
	h.catalog = cat
	h.mu.Unlock()
}

// missingTools are the warnings for the tools a server's configuration
// names that the server does not have (have: the tools it listed), each
// naming the field and the tool: its tools_allowlist's, in order, then
// its tool_tasks' keys, sorted. The catalog's rebuild logs them once per
// list and ServerStatus.Warnings shows them (switchboard servers).
func missingTools(cfg config.Server, have map[string]bool) []string {
	var out []string
	for _, n := range cfg.ToolsAllowlist {
		if !have[n] {
			out = append(out, fmt.Sprintf("tools_allowlist names %q, which the server does not have", n))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.ToolTasks)) {
		if !have[n] {
			out = append(out, fmt.Sprintf("tool_tasks names %q, which the server does not have: its task mode applies to no tool", n))
		}
	}
	return out
}

// shownName is a tool's own name as reports show it: as it is, unless it
// holds what a terminal would interpret or hide, or is long.
func shownName(name string, l *limits) string {
	if l.checkName(name) != "" {
		return shown(name)
	}
	return name
}

// ToolName applies format to a server id and a tool's own name: {server} and
// {tool} are replaced, characters outside [A-Za-z0-9_-] become '_', and a
// name over 64 characters is cut and given a short hash of the whole, so that
// it stays unique and is the same on every run.
func ToolName(format, server, tool string) string {
	name := []byte(expandName(format, server, tool))
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			name[i] = '_'
		}
	}
	if len(name) <= MaxToolNameLength {
		return string(name)
	}
	// The hash covers the server and tool as declared, so two long names
	// that share a prefix (or differ only in replaced characters) differ.
	sum := sha256.Sum256([]byte(server + "\x00" + tool + "\x00" + format))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return string(name[:MaxToolNameLength-len(suffix)]) + suffix
}

// expandName replaces {server} and {tool} in format, left to right, as
// strings.NewReplacer("{server}", server, "{tool}", tool) does, without
// building a Replacer for every name (that was most of ToolName's time,
// for every tool of every server at each start).
func expandName(format, server, tool string) string {
	var b strings.Builder
	b.Grow(len(format) + len(server) + len(tool))
	for {
		i := strings.IndexByte(format, '{')
		if i < 0 {
			b.WriteString(format)
			return b.String()
		}
		b.WriteString(format[:i])
		format = format[i:]
		switch {
		case strings.HasPrefix(format, "{server}"):
			b.WriteString(server)
			format = format[len("{server}"):]
		case strings.HasPrefix(format, "{tool}"):
			b.WriteString(tool)
			format = format[len("{tool}"):]
		default:
			b.WriteByte('{')
			format = format[1:]
		}
	}
}
