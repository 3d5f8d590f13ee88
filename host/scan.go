package host

import (
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// A lazy server's cached list is the cleaned one: scanned again when it is
// offered from the cache, it shows the phrase findings but not the hidden
// characters cleaning removed (those were found, and logged, when the
// server listed them). In-process servers are the program's own and are
// not scanned.

// ToolFinding is a sign of poisoning in one of a server's tools.
type ToolFinding struct {
	Tool string // the server's own name for it (escaped if it needed cleaning)
	// Action is what the host did: config.ScanWarn, ScanHold or ScanDrop.
	Action string
	toolscan.Finding
}

// maxServerFindings bounds the findings a server's status keeps and logs:
// a server listing 20,000 poisoned tools gets this many.
const maxServerFindings = 100

// scanTools scans each of tools (as listed, before cleaning), marks those
// it drops refused and those it holds flagged in out (same order), and
// returns the findings
// for setFindings, once the list is taken.
func (s *server) scanTools(tools []*mcp.Tool, out []discovered) []ToolFinding {
	if s.cfg.Transport == TransportInProcess {
		return nil
	}
	action := s.cfg.Scan
	if action == "" {
		action = config.ScanWarn
	}
	var found []ToolFinding
	for i, t := range tools {
		if t == nil {
			continue
		}
		def := toolscan.Definition{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		if t.Annotations != nil {
			def.AnnotationsTitle = t.Annotations.Title
		}
		fs := toolscan.Scan(def)
		if len(fs) == 0 {
			continue
		}
		name := shownName(t.Name, s.h.lim)
		for _, f := range fs {
			if s.h.lim.redact != nil {
				f.Text = s.h.lim.redact(f.Text)
			}
			if len(found) < maxServerFindings {
				found = append(found, ToolFinding{Tool: name, Action: action, Finding: f})
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
	return found
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
