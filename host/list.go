package host

// Listing a server's tools, resources and prompts, every page, within
// bounds.

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardmcp/switchboard/toolscan"
)

// Bounds on what one server may make the host hold.
const (
	// maxListPages bounds pagination: a server whose cursor never ends
	// cannot keep the host listing forever.
	maxListPages = 200
	// maxListItems bounds how many tools (or resources, prompts) one server
	// may declare.
	maxListItems = 20000
)

// listTools lists the server's tools, every page, compiling their schemas,
// and records them in the tool cache.
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]discovered, error) {
	if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Tools == nil {
		return nil, nil
	}
	ttl := 0
	tools, err := paginate(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		if t := res.GetTTLMs(); t > 0 && (ttl == 0 || t < ttl) {
			ttl = t
		}
		return res.Tools, res.NextCursor, nil
	})
	if notImplemented(err) {
		// No tools/list (a server that sent no capabilities, as some
		// older ones do, or declared tools it cannot list): it has no
		// tools to offer, but may have resources or prompts.
		s.log.Debug("the server does not implement tools/list: no tools")
		tools, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	out, scanned := s.discover(tools, nil)
	s.saveCache(tools, out, scanned, ttl)
	return out, nil
}

// discover compiles, scans and pins the tools a server listed (or its
// cache holds), and records what that found in its status. known, when
// not nil, is what the scanner found in each tool (by index) when the
// cached list was saved: those are not scanned again. It returns the
// tools, and what the scanner found in each (by index, unredacted).
func (s *server) discover(tools []*mcp.Tool, known map[int][]toolscan.Finding) ([]discovered, map[int][]toolscan.Finding) {
	out, notes := s.h.lim.compileTools(tools)
	found, scanned := s.scanTools(tools, out, known)
	s.pinTools(out)
	s.setNotes("tools", notes)
	s.setFindings(found)
	return out, scanned
}

// paginate collects every page of a list, within the host's bounds.
func paginate[T any](ctx context.Context, list func(ctx context.Context, cursor string) ([]T, string, error)) ([]T, error) {
	var all []T
	cursor := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == maxListPages {
			return nil, fmt.Errorf("more than %d pages: giving up", maxListPages)
		}
		items, next, err := list(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(all) > maxListItems {
			return nil, fmt.Errorf("more than %d items: giving up", maxListItems)
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("pagination cursor %q repeats", next)
		}
		seen[next] = true
		cursor = next
	}
}
