package host

import (
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/switchboardmcp/switchboard/config"
	"github.com/switchboardmcp/switchboard/toolscan"
)

// Each tool a server lists is scanned for signs of poisoning (the toolscan
// package) as the server sent it, before cleaning: cleaning deletes
// invisible characters and escapes, and with them an instruction hidden
// there. What is done with a tool that has findings is the server's scan
// setting:
//
//   - warn (the default): the tool is offered; each finding is logged and
//     shown in the server's status (ServerStatus.Findings);
//   - drop: the tool is not offered (ServerStatus.Skipped says why);
//   - hold: the tool is held back until a person approves its definition,
//     as a changed pinned definition is (pin.go); an approved definition
//     is offered, findings and all, until it changes.
//
// A lazy server's cached list is the cleaned one: offered from the cache,
// it shows the phrase findings but not the hidden characters cleaning
// removed (those were found, and logged, when the server listed them).
// What the scanner finds in the cleaned list is saved with it (cache.go),
// under toolscan.Version: a start that offers the cached list does not
// scan it again unless the scanner changed. In-process servers are the program's own and are
// not scanned.
//
// Prompts, resources and resource templates reach the model too, and are
// scanned the same way each time the host lists them (they are listed on
// demand, not at start: a server's status shows their findings once
// something — the gateway, the web UI, a client — has listed them). A
// prompt's name, title, description and its arguments' names, titles and
// descriptions are read; a resource's or template's title and description,
// and its name and URI (or URI template) for hidden characters only: those
// name what the resource is, and a filesystem server's ~/.ssh/config is
// not an attack (toolscan.Address). Under hold or drop the prompt or
// resource is left out of the listing, its reason among the server's
// warnings, and asking for it by name (prompts/get) or by URI
// (resources/read, a URI a held template matches) is refused with that
// reason until a listing offers it again. Approvals are for tools: a held
// prompt or resource stays out while the server declares it so.

// Kinds of definition a ToolFinding is in.
const (
	FindingTool     = "tool"
	FindingPrompt   = "prompt"
	FindingResource = "resource"
	FindingTemplate = "template" // a resource template
)

// ToolFinding is a sign of poisoning in one of a server's tools, or in a
// prompt, resource or resource template it declares.
type ToolFinding struct {
	// Kind is what it is in: FindingTool (also when empty),
	// FindingPrompt, FindingResource or FindingTemplate.
	Kind string
	// Tool names it: the server's own name for the tool or prompt, a
	// resource's URI, a template's URI template (escaped if it needed
	// cleaning).
	Tool string
	// Action is what the host did: config.ScanWarn, ScanHold or ScanDrop.
	Action string
	toolscan.Finding
}

// maxServerFindings bounds the findings a server's status keeps and logs:
// a server listing 20,000 poisoned tools gets this many.
const maxServerFindings = 100

// scanTools scans each of tools (as listed, before cleaning), marks those
// it drops refused and those it holds flagged in out (same order), and
// returns the findings for setFindings, once the list is taken, and what
// the scanner found in each tool (by index, unredacted, for the cache).
// With known not nil, a tool's findings are known[i] (none when absent),
// not scanned again.
func (s *server) scanTools(tools []*mcp.Tool, out []discovered, known map[int][]toolscan.Finding) ([]ToolFinding, map[int][]toolscan.Finding) {
	if s.cfg.Transport == TransportInProcess {
		return nil, nil
	}
	action := s.scanAction()
	var found []ToolFinding
	scanned := map[int][]toolscan.Finding{}
	for i, t := range tools {
		if t == nil {
			continue
		}
		var fs []toolscan.Finding
		if known != nil {
			fs = known[i]
		} else {
			fs = scanTool(t)
		}
		if len(fs) == 0 {
			continue
		}
		scanned[i] = fs
		name := shownName(t.Name, s.h.lim)
		for _, f := range fs {
			if s.h.lim.redact != nil {
				f.Text = s.h.lim.redact(f.Text)
			}
			if len(found) < maxServerFindings {
				found = append(found, ToolFinding{Kind: FindingTool, Tool: name, Action: action, Finding: f})
			}
		}
		if out[i].refused != "" {
			continue
		}
		switch action {
		case config.ScanDrop:
			out[i].refused = fmt.Sprintf("dropped (scan = %q): its definition shows signs of poisoning: %s", action, summary(fs))
		case config.ScanHold:
			// Held unless a person approved this definition (pinTools).
			out[i].flagged = summary(fs)
		}
	}
	return found, scanned
}

// scanTool is what the scanner finds in t.
func scanTool(t *mcp.Tool) []toolscan.Finding {
	def := toolscan.Definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	if t.Annotations != nil {
		def.AnnotationsTitle = t.Annotations.Title
	}
	return toolscan.Scan(def)
}

// scanAction is the server's scan setting, warn when unset.
func (s *server) scanAction() string {
	if s.cfg.Scan == "" {
		return config.ScanWarn
	}
	return s.cfg.Scan
}

// setFindings records the findings of the server's latest tool list in its
// status, logging them when they differ from the last list's.
func (s *server) setFindings(found []ToolFinding) {
	s.mu.Lock()
	old := s.findings
	s.findings = found
	s.mu.Unlock()
	if slices.Equal(old, found) {
		return
	}
	for _, f := range found {
		s.log.Warn("tool definition shows signs of poisoning", "tool", f.Tool, "rule", f.Rule, "field", f.Field, "text", f.Text, "action", f.Action)
	}
}

// findingsLocked are the findings a status shows: the tools', then the
// prompts', resources' and templates' of their latest listings, at most
// maxServerFindings. s.mu is held.
func (s *server) findingsLocked() []ToolFinding {
	out := slices.Clone(s.findings)
	for _, k := range declaredKinds {
		for _, f := range s.declScans[k].found {
			if len(out) == maxServerFindings {
				return out
			}
			out = append(out, f)
		}
	}
	return out
}

// declaredKinds are the kinds of declaration scanned as they are listed,
// in the order a status shows their findings.
var declaredKinds = []string{FindingPrompt, FindingResource, FindingTemplate}

// declScan is what scanning one listing of a server's prompts, resources
// or templates found.
type declScan struct {
	kind  string
	found []ToolFinding
	// held are those left out (hold or drop), by name (prompts) or URI
	// (resources) or URI template: why.
	held map[string]string
}

// scanDeclared scans one prompt, resource or template, named id, as the
// server listed it (texts before cleaning), adds its findings to sc and
// says why it is not offered under hold or drop ("" under warn or when it
// has none). shownID is id as a status shows it.
func (s *server) scanDeclared(sc *declScan, id, shownID string, texts []toolscan.Text) string {
	if s.cfg.Transport == TransportInProcess {
		return ""
	}
	fs := toolscan.ScanTexts(texts)
	if len(fs) == 0 {
		return ""
	}
	action := s.scanAction()
	if s.h.lim.redact != nil {
		shownID = s.h.lim.redact(shownID)
	}
	for _, f := range fs {
		if s.h.lim.redact != nil {
			f.Text = s.h.lim.redact(f.Text)
		}
		if len(sc.found) < maxServerFindings {
			sc.found = append(sc.found, ToolFinding{Kind: sc.kind, Tool: shownID, Action: action, Finding: f})
		}
	}
	var why string
	switch action {
	case config.ScanDrop:
		why = fmt.Sprintf("dropped (scan = %q): its definition shows signs of poisoning: %s", action, summary(fs))
	case config.ScanHold:
		why = fmt.Sprintf("held (scan = %q; approvals are for tools, so it stays out while the server declares it so): its definition shows signs of poisoning: %s", action, summary(fs))
	default:
		return ""
	}
	if sc.held == nil {
		sc.held = map[string]string{}
	}
	sc.held[id] = why
	return why
}

// setDeclScan records the scan of the server's latest listing of a kind,
// logging its findings when they differ from the last listing's.
func (s *server) setDeclScan(sc declScan) {
	s.mu.Lock()
	old := s.declScans[sc.kind]
	if s.declScans == nil {
		s.declScans = map[string]declScan{}
	}
	s.declScans[sc.kind] = sc
	s.mu.Unlock()
	if slices.Equal(old.found, sc.found) {
		return
	}
	for _, f := range sc.found {
		s.log.Warn(f.Kind+" definition shows signs of poisoning", f.Kind, f.Tool, "rule", f.Rule, "field", f.Field, "text", f.Text, "action", f.Action)
	}
}

// heldDeclared says why the server's prompt (kind FindingPrompt, by name)
// or resource (FindingResource, by URI; also a URI that a held template
// matches) is not offered, or "" when it is not held.
func (s *server) heldDeclared(kind, id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if why := s.declScans[kind].held[id]; why != "" {
		return why
	}
	if kind != FindingResource {
		return ""
	}
	for tmpl, why := range s.declScans[FindingTemplate].held {
		if t, err := uritemplate.New(tmpl); err == nil && t.Match(id) != nil {
			return fmt.Sprintf("it matches resource template %q, %s", shown(tmpl), why)
		}
	}
	return ""
}

// promptTexts are what a model reads of a prompt, for the scanner.
func promptTexts(p *mcp.Prompt) []toolscan.Text {
	ts := []toolscan.Text{
		{Field: "name", Text: p.Name, Kind: toolscan.Name},
		{Field: "title", Text: p.Title},
		{Field: "description", Text: p.Description},
	}
	for i, a := range p.Arguments {
		if a == nil {
			continue
		}
		f := fmt.Sprintf("arguments[%d].", i)
		ts = append(ts, toolscan.Text{Field: f + "name", Text: a.Name, Kind: toolscan.Name},
			toolscan.Text{Field: f + "title", Text: a.Title}, toolscan.Text{Field: f + "description", Text: a.Description})
	}
	return ts
}

func resourceTexts(r *mcp.Resource) []toolscan.Text {
	return []toolscan.Text{
		{Field: "uri", Text: r.URI, Kind: toolscan.Address},
		{Field: "name", Text: r.Name, Kind: toolscan.Address},
		{Field: "title", Text: r.Title},
		{Field: "description", Text: r.Description},
	}
}

func templateTexts(t *mcp.ResourceTemplate) []toolscan.Text {
	return []toolscan.Text{
		{Field: "uriTemplate", Text: t.URITemplate, Kind: toolscan.Address},
		{Field: "name", Text: t.Name, Kind: toolscan.Address},
		{Field: "title", Text: t.Title},
		{Field: "description", Text: t.Description},
	}
}

// summary names the rules and fields of fs, for a skipped tool's reason.
func summary(fs []toolscan.Finding) string {
	const most = 3
	var out string
	for i, f := range fs {
		if i == most {
			out += fmt.Sprintf(", and %d more", len(fs)-most)
			break
		}
		if i > 0 {
			out += ", "
		}
		out += f.Rule + " in " + f.Field
	}
	return out
}
